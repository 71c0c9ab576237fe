//! The base's full suites made aside (docs/honest-success.md, "The base's
//! full suites run aside"): in a worktree of their own at the base
//! (`<task>+base`), on a thread of their own, while the first agent works.
//! A stage that judges an attempt's full suite waits only for that check's
//! base, and lends its slot meanwhile; what the thread found is recorded by
//! the attempt that first reads it, in the plan's order. The thread's runs
//! are stopped, and its worktree removed, when the task's run ends first.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::{prepare, slots};
use super::checks::{import_root_env, inherited, parse, relativize, run_once, with};
use super::{baseline_cache, received, reuse_store};
use crate::config::{CheckConfig, Config};
use crate::git::{Oid, Repo};
use crate::judge::test_results::runners;
use crate::outcome::check::Baseline;
use crate::outcome::reuse;
use crate::record::event::BaselineCache;
use crate::sandbox::{self, Confinement, Effective};

/// One check's full run on the base, made aside.
#[derive(Debug, Clone)]
pub(crate) struct Done {
    pub baseline: Baseline,
    /// The variables retry-run added for the test runners.
    pub added: Vec<(String, String)>,
    pub cache: BaselineCache,
}

/// Why the base's full run of a check was not made aside; every check
/// waiting for it is told (so it is shared, not moved).
#[derive(Debug, Clone, thiserror::Error)]
pub(in crate::run) enum NotMade {
    #[error("the base's runs stopped")]
    Stopped,
    #[error("the base's run of {0} was not made")]
    Missing(String),
    #[error("the base's worktree could not be made: {0}")]
    Worktree(Arc<RunError>),
    #[error("the run ended first")]
    EndedFirst,
    #[error("{0}")]
    Start(Arc<crate::process::StartError>),
    #[error("{0}")]
    Stored(Arc<RunError>),
}

/// What the thread has found so far, by check name; `ended` once it has
/// nothing more to say.
#[derive(Default)]
struct Found {
    done: Vec<(String, Result<Done, NotMade>)>,
    ended: bool,
}

/// The base's full runs of some checks, under way aside.
pub(in crate::run) struct Aside {
    found: Arc<(Mutex<Found>, Condvar)>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the thread needs of one check.
struct Job {
    check: CheckConfig,
    /// The shared cache's key (made with the task's worktree, as every
    /// base run's) and the output's file in the task's record.
    key: String,
    out_file: PathBuf,
}

/// Everything the thread owns.
struct Work {
    repo: Repo,
    config: Config,
    store_root: PathBuf,
    task: String,
    base: Oid,
    wt: PathBuf,
    name: String,
    confinement: Confinement,
    setup: Option<Confinement>,
    tmp: PathBuf,
    jobs: usize,
    work: Vec<Job>,
}

/// Whether the base's full runs may be made aside for this task: not when
/// its worktree needs what only the task's own gets (`worktree.share`'s
/// dependencies, submodules).
pub(in crate::run) fn possible(t: &Fixed<'_>) -> bool {
    t.plan.config.worktree.share.is_empty() && t.repo.blob_at(t.base.oid, ".gitmodules").is_none()
}

impl Aside {
    /// Starts the full runs of `checks` (with their shared cache keys) on
    /// the base, aside.
    pub(in crate::run) fn start(
        t: &Fixed<'_>,
        a: &Attempt,
        checks: Vec<(CheckConfig, String)>,
    ) -> Result<Aside, RunError> {
        let (plan, repo) = (&t.plan, t.repo);
        let task = plan.id.clone();
        let name = crate::model::refs::base_worktree(&task);
        let wt = t.wt_root.join(crate::model::refs::worktree_name(&name));
        let tmp = a.dir.path().join("base-aside");
        let git_paths = sandbox::GitPaths {
            objects: repo.common_dir().join("objects"),
            admin: repo.worktree_meta(&name),
            quarantine: tmp.join("objects"),
            submodule_objects: repo.worktree_module_objects(&name),
        };
        for d in [&tmp, &git_paths.quarantine] {
            std::fs::create_dir_all(d).map_err(|source| RunError::Tmpdir { path: d.clone(), source })?;
        }
        let config = &plan.config;
        let policy = sandbox::policy(&wt, &tmp, config.sandbox.git, &git_paths, &plan.extra_writable);
        let tmpdir = (plan.confined != Effective::Off).then(|| tmp.clone());
        let confinement = super::super::confine::confinement_of(repo, plan, &wt, tmpdir, policy, &git_paths);
        // `worktree.setup` confined as before an attempt.
        let setup =
            (config.worktree.setup.is_some() && !config.worktree.setup_unconfined && plan.confined != Effective::Off)
                .then(|| {
                    let mut c = confinement.clone();
                    c.policy.network = config.worktree.setup_network.clone();
                    c
                });
        let dir = t.store.task(&task);
        let work: Vec<Job> = checks
            .into_iter()
            .map(|(check, key)| Job { out_file: dir.baseline_out(t.base.oid, &check.name), check, key })
            .collect();
        let work = Work {
            repo: repo.reopen()?,
            config: config.clone(),
            store_root: t.store.root.clone(),
            task,
            base: t.base.oid,
            wt,
            name,
            confinement,
            setup,
            tmp,
            jobs: slots::jobs(config.retry.jobs),
            work,
        };
        let found: Arc<(Mutex<Found>, Condvar)> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (f, s) = (found.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("base-aside".into())
            .spawn(move || run(work, &f, s))
            .map_err(|e| RunError::CheckStart { check: "the base's runs".into(), message: e.to_string() })?;
        Ok(Aside { found, stop, thread: Some(thread) })
    }

    /// `check`'s full run on the base, once made: waits for it, with the
    /// calling check's slot lent meanwhile (`jobs`). `Err` says why it was
    /// not made.
    pub(in crate::run) fn wait(&self, check: &str, jobs: usize) -> Result<Done, NotMade> {
        slots::lent(jobs, || {
            let (lock, cv) = &*self.found;
            let Ok(mut found) = lock.lock() else { return Err(NotMade::Stopped) };
            loop {
                if let Some((_, r)) = found.done.iter().find(|(c, _)| c == check) {
                    return r.clone();
                }
                if found.ended {
                    return Err(NotMade::Missing(check.to_string()));
                }
                found = match cv.wait(found) {
                    Ok(f) => f,
                    Err(_) => return Err(NotMade::Stopped),
                };
            }
        })
    }

    /// What it found of `check`, when it has (not waiting).
    pub(in crate::run) fn ready(&self, check: &str) -> Option<Result<Done, NotMade>> {
        let found = self.found.0.lock().ok()?;
        found.done.iter().find(|(c, _)| c == check).map(|(_, r)| r.clone())
    }
}

impl Drop for Aside {
    /// The run's end: what is still running is stopped (as SIGINT stops a
    /// check) and waited for; the thread removes its worktree.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Marks the thread's findings ended when dropped, and wakes its waiters.
struct Ended<'a>(&'a (Mutex<Found>, Condvar));

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        let mut f = self.0.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f.ended = true;
        drop(f);
        self.0.1.notify_all();
    }
}

/// The thread: the worktree at the base, `worktree.setup`, each check run
/// (one slot each) and stored as any base run is; then the worktree and its
/// temporary directory removed.
fn run(w: Work, found: &(Mutex<Found>, Condvar), stop: Arc<AtomicBool>) {
    crate::process::stop_lane_on(stop.clone());
    // Whatever happens here, waiters are told it ended.
    let _ended = Ended(found);
    let say = |check: &str, r: Result<Done, NotMade>| {
        if let Ok(mut f) = found.0.lock() {
            f.done.push((check.to_string(), r));
        }
        found.1.notify_all();
    };
    let ready = w
        .repo
        .reset_worktree(&w.wt, &w.name, w.base)
        .map_err(RunError::from)
        .and_then(|_| prepare::prepare(&w.repo, &w.config, &w.wt, w.setup.as_ref()))
        .map_err(Arc::new);
    for job in &w.work {
        let r = match &ready {
            Err(e) => Err(NotMade::Worktree(Arc::clone(e))),
            Ok(()) if stop.load(Ordering::SeqCst) => Err(NotMade::EndedFirst),
            Ok(()) => {
                let _slot = slots::take(w.jobs);
                one(&w, job)
            }
        };
        say(&job.check.name, r);
    }
    let _ = w.repo.remove_worktree(&w.wt, &w.name);
    let _ = std::fs::remove_dir_all(&w.tmp);
}

/// One check's full run on the base in the aside worktree, stored in the
/// shared cache and the reuse store as [`super::base`] stores its runs.
fn one(w: &Work, job: &Job) -> Result<Done, NotMade> {
    let (check, wt) = (&job.check, &w.wt);
    let env = w.confinement.env();
    let added = runners::runner_env(&inherited(&env, &w.confinement.unset()));
    let f = run_once(check, wt, &with(&env, &added), &job.out_file, &w.confinement)
        .map_err(|e| NotMade::Start(Arc::new(e)))?;
    if crate::process::lane_stopped() || crate::process::interrupted().is_some() {
        return Err(NotMade::EndedFirst);
    }
    let p = parse(check, &f, wt, &w.repo, &|rel| std::fs::read(wt.join(rel)).ok());
    let at = (w.store_root.as_path(), w.task.as_str(), w.config.retry.reuse);
    let keyed = baseline_cache::env_of(&with(&added, &import_root_env(wt)), wt);
    let seen = received::seen(check, wt, &keyed, &w.confinement, &w.task);
    let ran = BaseRun { finished: &f, parsed: &p, added: &added, key: &job.key, seen: &seen };
    let b = stored(&w.repo, at, check, (w.base, wt), &ran).map_err(|e| NotMade::Stored(Arc::new(e)))?;
    let cache = BaselineCache { key: job.key.clone(), hit: false, from: None, environment: Some(seen.summary) };
    Ok(Done { baseline: b, added, cache })
}

/// A full run of a check on the base, as it ended: its process and what
/// was read of its output, the runner variables retry-run `added`, the
/// shared cache's `key` and what the check was `seen` to receive.
#[derive(Clone, Copy)]
pub(super) struct BaseRun<'a> {
    pub finished: &'a crate::process::Finished,
    pub parsed: &'a crate::outcome::check::Parsed,
    pub added: &'a [(String, String)],
    pub key: &'a str,
    pub seen: &'a received::ReceivedKeys,
}

/// A full run of `check` on `base` (in `wt`, with the runner variables
/// `added`), stored as every base run is: in the reuse store (what an
/// attempt on the same inputs reuses; not when `[[check]] reuse` or,
/// the check saying nothing, `[retry] reuse` (`project_reuse`) is false)
/// and, unless it timed out, in the shared cache under `key`. Returns the
/// base's result.
pub(super) fn stored(
    repo: &Repo,
    (store_root, task, project_reuse): (&std::path::Path, &str, bool),
    check: &CheckConfig,
    (base, wt): (Oid, &std::path::Path),
    ran: &BaseRun<'_>,
) -> Result<Baseline, RunError> {
    let BaseRun { finished: f, parsed: p, added, key, seen } = *ran;
    if reuse::stores(check.reuse, project_reuse) && reuse::storable(p.timed_out, false, !p.tested_checkout.is_empty()) {
        let entry = reuse_store::StoredRun {
            task: task.to_string(),
            attempt: None,
            exit_code: f.exit_code,
            signal: f.signal,
            duration_ms: p.duration_ms,
            output: relativize(&String::from_utf8_lossy(&f.output.bytes()), wt),
            environment: seen.summary.clone(),
        };
        let keyed = with(added, &import_root_env(wt));
        let rkey = reuse_store::key(repo, check, repo.commit_tree(base)?, &keyed, wt, &seen.digest)?;
        // Only a saving later: a store that cannot be written is no failure.
        let _ = crate::record::store::write_json(&reuse_store::file(store_root, &rkey), &entry);
    }
    let b = Baseline::of(&check.name, &check.run, base.to_string(), p);
    // A timed-out run says nothing lasting of the base.
    if !p.timed_out {
        let entry = baseline_cache::CachedBaseline {
            baseline: b.clone(),
            task: task.to_string(),
            tests: Some(p.tests.clone()),
            environment: Some(seen.summary.clone()),
        };
        crate::record::store::write_json(&baseline_cache::file(store_root, key), &entry)?;
    }
    Ok(b)
}
