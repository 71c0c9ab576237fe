//! `retry-run init`: a `retry-run.toml` proposed from what the repository
//! holds, its checks tried once on the base. [`write_config`] is the whole
//! flow, in the order it runs:
//!
//! 1. [`detect`]: what the checkout and `PATH` hold ([`Facts`]).
//! 2. [`trial`]: a throwaway worktree at `HEAD`, confined as a check is,
//!    where each proposed command runs once (none with `--no-run`).
//! 3. [`python`]: the interpreters that may run the tests, the project's
//!    own first; the first that imports pytest is chosen.
//! 4. [`candidates`]: the checks to try, with that interpreter.
//! 5. [`judge`]: what one check's run on the base says (totals, failing
//!    tests, diagnostics already there), or that it cannot start.
//! 6. [`propose`]: the file and the lines saying why; the file is parsed
//!    back as a config before it is written.
//!
//! `python`, `candidates`, `judge` and `propose` are pure: they decide
//! from the facts and the runs passed in. `detect` and `trial` are the
//! edges, and this file runs them in turn.

pub(crate) mod candidates;
pub(crate) mod detect;
pub(crate) mod judge;
pub(crate) mod propose;
pub(crate) mod python;
pub(crate) mod trial;

#[cfg(test)]
mod tests;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) use candidates::{Candidate, candidates};
pub(crate) use detect::{Facts, detect};
pub(crate) use propose::{propose, worktree_root};
pub(crate) use python::choose_python;
pub(crate) use trial::{TRIAL_SECS, Trial, TrialRan};

use crate::config::{Config, ConfigError};
use crate::git::{GitError, Repo};

/// What `retry-run init` was asked.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// Replace an existing `retry-run.toml`.
    pub force: bool,
    /// Run nothing: propose the checks untried.
    pub no_run: bool,
}

/// The file written, and one line per thing tried or chosen saying what
/// and why.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub path: PathBuf,
    pub said: Vec<String>,
}

/// Why no config was written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InitError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("this repository has no working tree (bare); run init in a checkout")]
    Bare,
    #[error("{} exists; keep it, or run `retry-run init --force` to replace it", path.display())]
    Exists { path: PathBuf },
    /// `--force` would drop what the user added to the file.
    #[error(
        "{} has settings init would not write again: {}; add them back after, or remove them from the file first, then run `retry-run init --force` again",
        path.display(),
        dropped.join(", ")
    )]
    WouldDrop { path: PathBuf, dropped: Vec<String> },
    #[error("init wrote a bad config: {0}")]
    BadConfig(ConfigError),
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// The line announcing the trial could not be written to `progress`.
    #[error(transparent)]
    Progress(std::io::Error),
}

impl InitError {
    /// Whether the command was asked what it cannot do here (exit 2), as
    /// against an environment that failed it (exit 3).
    pub(crate) fn is_usage(&self) -> bool {
        match self {
            InitError::Git(e) => e.is_usage(),
            InitError::Bare | InitError::Exists { .. } | InitError::WouldDrop { .. } => true,
            InitError::BadConfig(_) | InitError::Write { .. } | InitError::Progress(_) => false,
        }
    }
}

/// Writes a `retry-run.toml` for the repository holding `dir`, after
/// trying its checks on `HEAD` (unless `no_run`); the line saying that the
/// trial starts goes to `progress`. An existing file is kept unless `force`.
pub(crate) fn write_config(dir: &Path, options: Options, progress: &mut dyn Write) -> Result<Written, InitError> {
    let repo = Repo::find(dir)?;
    let root = repo.workdir().ok_or(InitError::Bare)?.to_path_buf();
    let target = root.join(crate::config::FILE_NAME);
    if target.exists() && !options.force {
        return Err(InitError::Exists { path: target });
    }
    let facts = detect(&root);
    let config = trial_config(&target, &facts);
    let (mut trial, mut said) = if options.no_run {
        (None, vec!["nothing was run (--no-run): the checks are proposed untried".to_string()])
    } else {
        start_trial(&repo, &config, progress)?
    };
    let mut try_run = |cmd: &str, network: &[String], secs: u64| -> Option<TrialRan> {
        Some(trial.as_mut()?.run(cmd, network, Duration::from_secs(secs)))
    };
    let python = choose_python(&facts, &mut try_run);
    let (candidates, notes) = candidates(&facts, &python);
    let tried: Vec<(Candidate, Option<TrialRan>)> = candidates
        .into_iter()
        .map(|c| {
            let ran = try_run(&c.run, &c.network, TRIAL_SECS);
            (c, ran)
        })
        .collect();
    // The trial's worktree is removed before the file is written.
    drop(trial);
    let (text, why) = propose(&facts, &python, &notes, &tried);
    Config::parse(&text, &target).map_err(InitError::BadConfig)?;
    // `--force` replaces what init wrote, never what the user added.
    if let Ok(old) = std::fs::read_to_string(&target)
        && let (Ok(old), Ok(new)) = (old.parse::<toml::Table>(), text.parse::<toml::Table>())
    {
        let dropped = dropped(&old, &new);
        if !dropped.is_empty() {
            return Err(InitError::WouldDrop { path: target, dropped });
        }
    }
    std::fs::write(&target, &text).map_err(|source| InitError::Write { path: target.clone(), source })?;
    said.extend(why);
    Ok(Written { path: target, said })
}

/// What the file `old` holds that `new` would not: each key (dotted) it
/// sets that `new` leaves out, and each `[[check]]` (by name) or key of
/// one. Values `new` sets otherwise are init's to choose. Pure.
pub(crate) fn dropped(old: &toml::Table, new: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    dropped_in(old, new, "", &mut out);
    out
}

fn dropped_in(old: &toml::Table, new: &toml::Table, at: &str, out: &mut Vec<String>) {
    let name = |c: &toml::Table| c.get("name").and_then(|n| n.as_str()).unwrap_or("?").to_string();
    for (k, v) in old {
        let path = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
        match (v, new.get(k)) {
            (toml::Value::Table(o), None) => dropped_in(o, &toml::Table::new(), &path, out),
            (toml::Value::Table(o), Some(toml::Value::Table(n))) => dropped_in(o, n, &path, out),
            (toml::Value::Array(o), n) if path == "check" => {
                let theirs: Vec<&toml::Table> =
                    n.and_then(|n| n.as_array()).into_iter().flatten().filter_map(|x| x.as_table()).collect();
                for c in o.iter().filter_map(|c| c.as_table()) {
                    match theirs.iter().find(|x| name(x) == name(c)) {
                        Some(same) => dropped_in(c, same, &format!("check `{}`", name(c)), out),
                        None => out.push(format!("check `{}`", name(c))),
                    }
                }
            }
            (_, None) if path.starts_with("check `") => out.push(path),
            (_, None) => out.push(format!("`{path}`")),
            _ => {}
        }
    }
}

/// The config the trial runs with: the sandbox of the config there is
/// (replaced with `--force`), else the defaults; a jest project's trial
/// runs where its task worktrees will (jest finds nothing under the git
/// directory).
fn trial_config(target: &Path, facts: &Facts) -> Config {
    let mut config =
        std::fs::read_to_string(target).ok().and_then(|t| Config::parse(&t, target).ok()).unwrap_or_default();
    if let Some((dir, _)) = worktree_root(facts)
        && config.worktree.root.is_empty()
    {
        config.worktree.root = dir;
        // As proposed: the checkout's node_modules reaches the worktree.
        if facts.layout.has("node_modules") && config.worktree.share.is_empty() {
            config.worktree.share = vec!["node_modules".into()];
        }
    }
    config
}

/// The trial started, after a line to `progress` saying so, and the line
/// saying how its commands run; without it (it could not start), the line
/// saying why the checks are proposed untried.
fn start_trial<'r>(
    repo: &'r Repo,
    config: &Config,
    progress: &mut dyn Write,
) -> Result<(Option<Trial<'r>>, Vec<String>), InitError> {
    writeln!(
        progress,
        "trying the checks on HEAD in a throwaway worktree (at most {} minutes each)...",
        TRIAL_SECS / 60
    )
    .and_then(|()| progress.flush())
    .map_err(InitError::Progress)?;
    Ok(match Trial::start(repo, config) {
        Ok(t) => {
            let said = format!("each check was run once on HEAD in a throwaway worktree, {}", t.sandbox);
            (Some(t), vec![said])
        }
        Err(e) => (None, vec![format!("the checks could not be tried on HEAD ({e}): they are proposed untried")]),
    })
}
