//! `--from-github-pr N`: a pull request read through GitHub's `gh` CLI,
//! with the user's own login, in the repository's directory (so that `gh`
//! finds the GitHub remote and fills in `{owner}/{repo}`). Three commands,
//! in this order: `gh auth status`, `gh pr view N --json …`, `gh api
//! --paginate repos/{owner}/{repo}/pulls/N/comments`; what they print is
//! mapped by [`super::pull_request`].

use std::path::Path;

use super::SourceError;
use super::pull_request::{self, Nothing, VIEW_FIELDS};
use crate::model::Review;

/// Variables `gh` gets: no prompt, no update notice, no colour.
const GH_ENV: [(&str, &str); 3] = [("GH_PROMPT_DISABLED", "1"), ("GH_NO_UPDATE_NOTIFIER", "1"), ("NO_COLOR", "1")];

/// The draft review of pull request `number`, read with `gh` in `dir`.
pub(crate) fn from_github_pr(dir: &Path, number: u64) -> Result<Review, SourceError> {
    let gh = crate::process::find_program("gh").ok_or(SourceError::GhMissing)?;
    let gh = gh.to_string_lossy().into_owned();
    let auth = gh_output(&gh, &["auth", "status"], dir)?;
    if !auth.status.success() {
        return Err(SourceError::GhNotLoggedIn { said: said(&auth) });
    }
    let n = number.to_string();
    let view_args = ["pr", "view", n.as_str(), "--json", VIEW_FIELDS];
    let view = gh_output(&gh, &view_args, dir)?;
    if !view.status.success() {
        let said = said(&view);
        let command = view_args.join(" ");
        return Err(
            if said.contains("Could not resolve to a PullRequest") || said.contains("no pull requests found") {
                SourceError::PullRequestNotFound { number, command, said }
            } else {
                SourceError::GhFailed { command, said }
            },
        );
    }
    let pr = pull_request::parse_view(&view.stdout)
        .map_err(|e| SourceError::GhOutput { command: view_args.join(" "), problem: format!("pull request: {e}") })?;
    let endpoint = format!("repos/{{owner}}/{{repo}}/pulls/{number}/comments");
    let api_args = ["api", "--paginate", endpoint.as_str()];
    let api = gh_output(&gh, &api_args, dir)?;
    if !api.status.success() {
        return Err(SourceError::GhFailed { command: api_args.join(" "), said: said(&api) });
    }
    let comments = pull_request::parse_comments(&api.stdout)
        .map_err(|e| SourceError::GhOutput { command: api_args.join(" "), problem: format!("review comments: {e}") })?;
    pull_request::review_of(&pr, &comments).map_err(|Nothing(why)| SourceError::NothingInPullRequest { number, why })
}

/// Runs `gh ARGS` in `dir` to its end.
fn gh_output(gh: &str, args: &[&str], dir: &Path) -> Result<std::process::Output, SourceError> {
    let env: Vec<(&str, &std::ffi::OsStr)> = GH_ENV.iter().map(|(k, v)| (*k, std::ffi::OsStr::new(*v))).collect();
    crate::process::output_with(gh, args, dir, &env, &[], None)
        .map_err(|e| SourceError::GhFailed { command: args.join(" "), said: format!("cannot start {gh}: {e}") })
}

/// What `gh` said when it failed: its stderr (else stdout), on one line,
/// bounded.
fn said(out: &std::process::Output) -> String {
    let text = if out.stderr.iter().any(|b| !b.is_ascii_whitespace()) { &out.stderr } else { &out.stdout };
    let text = String::from_utf8_lossy(text);
    let joined: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let joined = joined.join(" ");
    let joined = if joined.is_empty() {
        match out.status.code() {
            Some(code) => format!("it exited with {code} and said nothing"),
            None => "it was killed by a signal".into(),
        }
    } else {
        joined
    };
    crate::text::clip(&joined, 500, "...").into_owned()
}
