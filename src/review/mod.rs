//! `retry-run review`: a reviewer's verdict on a task's result, recorded
//! in the task's log as a `Reviewed` event (docs/review.md). The verdict
//! comes from the command's flags, a review file, a CI log or a pull
//! request ([`sources`]); whatever its channel, it is checked the same way
//! (the line comments against the judged attempt's diff, a repeated
//! critique said) and recorded the same way, so the next round's context
//! reads them alike.

mod error;
pub(crate) mod sources;

use std::path::{Path, PathBuf};

pub(crate) use error::ReviewError;

use crate::git::{DiffDepth, Repo, Role};
use crate::judge::review::{check, comments, repeats};
use crate::model::{AttemptRecord, Channel, LineComment, Review, Verdict};
use crate::record::state::{self as history, TaskState};
use crate::record::store::check_task_name;
use crate::record::{Event, RecordError, Store};

/// A line comment as given on the command line: `PATH:LINE[-LINE]` and its
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommentArg {
    pub spec: String,
    pub text: String,
}

/// What the reviewer says, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// `--approve`.
    Approve,
    /// `--required-change` with its critique (`--critique`,
    /// `--critique-file`, or stdin, read by the command line) and
    /// `--comment`s.
    Reject { required_change: String, critique: Option<String>, comments: Vec<CommentArg> },
    /// `--from-log FILE --check NAME`: a CI log read as that check's output.
    FromLog { file: PathBuf, check: String, required_change: Option<String> },
    /// `--from-github-pr N`: the pull request's reviews, comments and
    /// failed check runs, through `gh`.
    FromGithubPr { number: u64 },
    /// `--from-file FILE`: a review file (docs/review.md).
    FromFile { path: PathBuf },
}

/// `retry-run review`, as asked.
#[derive(Debug, Clone)]
pub(crate) struct ReviewRequest {
    pub task: String,
    /// `--attempt`: else the task's result (its latest successful attempt).
    pub attempt: Option<u32>,
    /// `--by`: else git's committer identity.
    pub by: Option<String>,
    pub input: Input,
    /// `--config`: the project's config, for `--from-log`'s check.
    pub config_path: Option<PathBuf>,
    /// Where a verdict given directly (approve, or reject with a required
    /// change) comes from: the command line, or the web view (`retry-run
    /// ui`); the sources name their own.
    pub channel: Channel,
}

/// A review recorded, with what the reviewer should know (a repeated
/// critique).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub review: Review,
    pub warnings: Vec<String>,
}

/// Records the review `req` asks for in its task's log, under the task's
/// lock: the judged attempt found and checked, the verdict read (from the
/// flags or a source), its line comments judged against the attempt's
/// whole diff, a repeated required change said, the `Reviewed` event
/// appended. Nothing is appended when anything is refused.
pub(crate) fn review(dir: &Path, req: ReviewRequest) -> Result<Recorded, ReviewError> {
    let id = req.task.as_str();
    check_task_name(id)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    if let Some(pid) = store.running(id) {
        return Err(ReviewError::Running { task: id.to_string(), pid });
    }
    // An unknown task is said before its lock would create its directory.
    store.read(id)?;
    let _lock = store.lock(id).map_err(|e| match e {
        RecordError::Locked { task, pid, .. } => ReviewError::Running { task, pid },
        e => ReviewError::Record(e),
    })?;
    let verified = store.read(id)?;
    if verified.broken.is_some() {
        return Err(ReviewError::BrokenLog { task: id.to_string(), path: store.task(id).events() });
    }
    let state = history::state(&verified.events);
    let record = record_of(id, &state, &verified.events);
    let attempts = match store.read(&record) {
        Ok(v) if record != id => history::attempts(&store, &record, &v.events),
        _ => history::attempts(&store, id, &verified.events),
    };
    let judged = judged_attempt(id, req.attempt, &state, &attempts)?;
    let commit = judged.commit.clone().ok_or(ReviewError::NoCommit { task: id.to_string(), attempt: judged.number })?;
    let head = repo.resolve(&commit).map_err(|_| ReviewError::CommitGone {
        task: id.to_string(),
        attempt: judged.number,
        commit: commit.clone(),
    })?;
    let judging =
        Judging { repo: &repo, store: &store, id, record: &record, attempt: judged.number, head, state: &state };
    let review = judging.review(dir, &req)?;
    let warnings = review
        .repeats
        .map(|k| repeats::warning(k, review.required_change.as_deref().unwrap_or("")))
        .into_iter()
        .collect();
    let event = Event::Reviewed { review: review.clone() };
    store.log(id)?.append(event.kind(), Some(review.attempt), &event.fields())?;
    Ok(Recorded { review, warnings })
}

/// Whose attempts a review judges: the task's own, or, for a task run in
/// lanes (`run --lanes`), those of the lane its latest round chose (whose
/// attempt became the task's result). Pure.
fn record_of(id: &str, state: &TaskState, events: &[crate::record::chain::LogLine]) -> String {
    if state.lanes.is_none() {
        return id.to_string();
    }
    let chosen = events.iter().rev().find_map(|e| match e.typed() {
        Some(Event::LaneChosen { lane, .. }) => Some(lane),
        _ => None,
    });
    match chosen {
        Some(lane) => crate::model::refs::lane_record(id, lane),
        None => id.to_string(),
    }
}

/// The attempt a review judges: `--attempt N`, else the task's result.
/// Pure.
fn judged_attempt<'a>(
    id: &str,
    asked: Option<u32>,
    state: &TaskState,
    attempts: &'a [AttemptRecord],
) -> Result<&'a AttemptRecord, ReviewError> {
    let n = asked.or(state.result_attempt()).ok_or(ReviewError::NoResult { task: id.to_string() })?;
    attempts.iter().rev().find(|a| a.number == n).ok_or_else(|| ReviewError::NoAttempt {
        task: id.to_string(),
        attempt: n,
        known: numbers(attempts.iter().map(|a| a.number)),
    })
}

/// `1-3, 5`.
fn numbers(ns: impl Iterator<Item = u32>) -> String {
    let mut ns: Vec<u32> = ns.collect();
    ns.sort_unstable();
    ns.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for n in ns {
        match runs.last_mut() {
            Some((_, e)) if *e + 1 == n => *e = n,
            _ => runs.push((n, n)),
        }
    }
    let words: Vec<String> =
        runs.iter().map(|&(s, e)| if s == e { s.to_string() } else { format!("{s}-{e}") }).collect();
    words.join(", ")
}

/// The attempt under review, and what is needed to judge what is said of
/// it.
struct Judging<'a> {
    repo: &'a Repo,
    store: &'a Store,
    id: &'a str,
    /// The record the attempt is in: the task's, or its chosen lane's.
    record: &'a str,
    attempt: u32,
    head: crate::git::Revision,
    state: &'a TaskState,
}

impl Judging<'_> {
    /// The review as it will be recorded.
    fn review(&self, dir: &Path, req: &ReviewRequest) -> Result<Review, ReviewError> {
        let (draft, flags) = match &req.input {
            Input::Approve => (Review { verdict: Verdict::Approved, channel: req.channel, ..Review::default() }, true),
            Input::Reject { required_change, critique, comments } => {
                let mut files = None;
                let mut judged = Vec::new();
                for c in comments {
                    let files = match &files {
                        Some(f) => f,
                        None => files.insert(self.diff_files()?),
                    };
                    judged.push(self.comment(files, c)?);
                }
                let draft = Review {
                    verdict: Verdict::Rejected,
                    channel: req.channel,
                    required_change: Some(required_change.trim().to_string()),
                    critique: critique.clone().filter(|c| !c.trim().is_empty()),
                    comments: judged,
                    ..Review::default()
                };
                (draft, true)
            }
            Input::FromLog { file, check, required_change } => {
                let task = crate::run::recorded_task(self.store, self.id)?;
                let config = crate::run::effective_config(self.repo, req.config_path.as_deref(), &task.overrides)?;
                let mut draft = sources::from_log(self.repo, &config, self.head.oid, file, check)?;
                if let Some(rc) = required_change {
                    draft.required_change = Some(rc.trim().to_string());
                }
                (draft, false)
            }
            Input::FromGithubPr { number } => {
                let at = self.repo.workdir().unwrap_or(dir);
                (sources::from_github_pr(at, *number)?, false)
            }
            Input::FromFile { path } => (sources::from_file(path)?, false),
        };
        let draft = if flags || draft.comments.is_empty() { draft } else { self.place_comments(draft)? };
        let by = if draft.by.trim().is_empty() { self.reviewer(req.by.as_deref())? } else { draft.by.clone() };
        finish(draft, self.attempt, self.head.oid.to_string(), by, &self.state.reviews)
    }

    /// The reviewer: `--by`, else git's committer identity (as `git var
    /// GIT_COMMITTER_IDENT` finds it: the environment, then the config).
    fn reviewer(&self, by: Option<&str>) -> Result<String, ReviewError> {
        match by.map(str::trim).filter(|b| !b.is_empty()) {
            Some(b) => Ok(b.to_string()),
            None => self.repo.identity(Role::Committer).map(|i| i.to_string()).ok_or(ReviewError::NoIdentity),
        }
    }

    /// The judged attempt's whole diff, from the task's base (the
    /// attempt's manifest's, else the task's latest) to its commit, as
    /// files and lines.
    fn diff_files(&self) -> Result<Vec<comments::FileDiff>, ReviewError> {
        let base = self.base()?;
        let cmp = self.repo.compare_commits(&base, &self.head, DiffDepth::Patch { max_lines: usize::MAX }, None)?;
        Ok(comments::files(&cmp.patch))
    }

    fn base(&self) -> Result<crate::git::Revision, ReviewError> {
        let manifest = std::fs::read(self.store.attempt(self.record, self.attempt).manifest()).ok();
        let from_manifest = manifest
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("base").and_then(|b| b.as_str()).map(str::to_string));
        let base = from_manifest.or_else(|| self.state.base.clone()).unwrap_or_else(|| format!("{}^", self.head.oid));
        Ok(self.repo.resolve(&base)?)
    }

    /// A `--comment` judged against the diff: refused, with the nearest
    /// changed lines, when it does not point at a change.
    fn comment(&self, files: &[comments::FileDiff], c: &CommentArg) -> Result<LineComment, ReviewError> {
        let refused = |problem: String, hint: String| ReviewError::Comment { spec: c.spec.clone(), problem, hint };
        let spec = comments::parse(&c.spec).map_err(|p| {
            refused(p.to_string(), "write it as --comment src/app.py:40-44 'what is wrong there'".to_string())
        })?;
        if c.text.trim().is_empty() {
            return Err(refused("the comment has no text".into(), "give the text after the place".into()));
        }
        comments::judge(files, &spec, &c.text, self.attempt).map_err(|p| {
            let hint = format!(
                "comment on lines attempt {} changed; `retry-run report {}` shows its diff",
                self.attempt, self.id
            );
            refused(p.to_string(), hint)
        })
    }

    /// A source's comments placed on the attempt's diff ([`place`]).
    fn place_comments(&self, draft: Review) -> Result<Review, ReviewError> {
        Ok(place(&self.diff_files()?, draft, self.attempt))
    }
}

/// A source's comments placed on `files` (attempt `attempt`'s diff), each
/// with the diff lines it covers; those that do not hit it are kept as
/// lines of the critique rather than refused (a pull request's comment on
/// a line the attempt did not change is still what the reviewer said).
/// Pure.
fn place(files: &[comments::FileDiff], mut draft: Review, attempt: u32) -> Review {
    let mut kept = Vec::new();
    let mut off = Vec::new();
    for c in std::mem::take(&mut draft.comments) {
        let spec =
            comments::CommentPlace { path: c.path.clone(), start: c.start.max(1), end: c.end.max(c.start).max(1) };
        match comments::judge(files, &spec, &c.text, attempt) {
            Ok(placed) => kept.push(LineComment { by: c.by.clone(), ..placed }),
            Err(_) => off.push(comments::as_critique_line(&c)),
        }
    }
    draft.comments = kept;
    if !off.is_empty() {
        let mut critique = draft.critique.take().unwrap_or_default();
        if !critique.is_empty() {
            if !critique.ends_with('\n') {
                critique.push('\n');
            }
            critique.push('\n');
        }
        critique.push_str("Comments on lines the attempt did not change:\n");
        for line in off {
            critique.push_str(&format!("- {line}\n"));
        }
        draft.critique = Some(critique);
    }
    draft
}

/// The draft completed: its attempt, commit and reviewer, the required
/// change checked, a repeat of an earlier rejection (among `earlier`, the
/// task's reviews) said. Pure.
fn finish(
    mut review: Review,
    attempt: u32,
    commit: String,
    by: String,
    earlier: &[Review],
) -> Result<Review, ReviewError> {
    review.attempt = attempt;
    review.commit = commit;
    review.by = by;
    review.repeats = None;
    if review.verdict == Verdict::Approved {
        return Ok(review);
    }
    let Some(rc) = review.required_change.clone() else {
        let source_name = review.source.clone().unwrap_or_else(|| review.channel.as_str().to_string());
        return Err(ReviewError::NoRequiredChange { source_name });
    };
    check::required_change(&rc).map_err(|p| ReviewError::RequiredChange { problem: p.to_string() })?;
    review.required_change = Some(rc.trim().to_string());
    review.repeats = repeats::repeats(earlier, attempt, &rc);
    Ok(review)
}

/// What `review` says once it recorded `r` for task `id`: the verdict, and
/// what comes next. Pure.
pub(crate) fn said(id: &str, r: &Review) -> String {
    match r.verdict {
        Verdict::Approved => format!(
            "task {id}: attempt {} ({}) approved by {}; `retry-run land {id}` brings it onto your branch",
            r.attempt,
            short(&r.commit),
            r.by
        ),
        Verdict::Rejected => {
            let n = r.comments.len();
            let mut with = Vec::new();
            if r.critique.is_some() {
                with.push("a critique".to_string());
            }
            if n > 0 {
                with.push(format!("{n} line comment{}", crate::text::plural(n)));
            }
            let with = if with.is_empty() { String::new() } else { format!(" (with {})", with.join(" and ")) };
            format!(
                "task {id}: attempt {} ({}) rejected by {}: \"{}\"{with}; `{}` starts the next round, which leads with it",
                r.attempt,
                short(&r.commit),
                r.by,
                r.required_change.as_deref().unwrap_or(""),
                crate::outcome::resume::resume_command(id, &["--again"], &[])
            )
        }
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

#[cfg(test)]
mod tests;
