//! Tasks shared through a git remote (docs/fleets.md).
//!
//! A task's record (`tasks/<task>/`, less its lock and the attempts'
//! TMPDIRs) is committed under `refs/retry-run/<task>/record`, next to the
//! attempt commits `refs/retry-run/<task>/<n>`. `push` sends both;
//! `pull` fetches them into `refs/retry-run-remotes/<remote>/<task>/` and
//! takes the remote's record only when it extends the local one. A run
//! with `--remote` holds a lease, `refs/retry-run/<task>/lease`, moved by
//! compare-and-swap pushes ([`Lease`]).
//!
//! - [`relate`]: how two event logs stand to each other (pure);
//! - [`lease_ref`](mod@lease_ref): the lease as its ref holds it (the
//!   commit message) and what it means (pure);
//! - [`transport`]: the `git` program, for everything that crosses the wire.

mod error;
pub(crate) mod lease_ref;
pub(crate) mod relate;
pub(crate) mod transport;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::git::{Oid, Repo};
use crate::model::refs;
use crate::record::state::state;
use crate::record::{Event, Store, TaskDir, layout};
use lease_ref::{Holder, LeaseStanding};
use relate::Relation;
use transport::{Expect, Pushed, Update};

pub(crate) use error::RemoteError;

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// What `pull` did with one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Taken {
    /// The remote has no record of the task.
    Absent,
    Same,
    /// The remote's record extended the local one and was taken.
    Took {
        events: usize,
    },
    /// The local record is ahead; nothing to take.
    LocalAhead {
        events: usize,
    },
}

/// A repository and one of its remotes.
pub(crate) struct Remote {
    repo: Repo,
    store: Store,
    /// Where `git` runs.
    dir: PathBuf,
    pub name: String,
}

impl Remote {
    /// The repository holding `dir`, and its remote `name` (an URL works too).
    pub(crate) fn open(dir: &Path, name: &str) -> Result<Remote, RemoteError> {
        let repo = Repo::find(dir)?;
        let store = Store::new(repo.common_dir());
        let dir = repo.workdir().unwrap_or(repo.common_dir()).to_path_buf();
        Ok(Remote { repo, store, dir, name: name.to_string() })
    }

    /// The repository's record.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    fn staged(&self, task: &str, leaf: &str) -> String {
        format!("refs/retry-run-remotes/{}/{task}/{leaf}", self.name)
    }

    /// Fetches the refs of `tasks` (all tasks when empty) into
    /// `refs/retry-run-remotes/<remote>/`.
    pub(crate) fn fetch(&self, tasks: &[String], what: &str) -> Result<(), RemoteError> {
        let specs: Vec<String> = if tasks.is_empty() {
            vec![format!("+refs/retry-run/*:refs/retry-run-remotes/{}/*", self.name)]
        } else {
            tasks.iter().map(|t| format!("+refs/retry-run/{t}/*:refs/retry-run-remotes/{}/{t}/*", self.name)).collect()
        };
        transport::fetch(&self.dir, &self.name, &specs, what)
    }

    /// The tasks the last fetch found on the remote.
    pub(crate) fn fetched_tasks(&self) -> Result<Vec<String>, RemoteError> {
        let prefix = format!("refs/retry-run-remotes/{}/", self.name);
        let mut tasks: Vec<String> = self
            .repo
            .refs_under(&prefix)?
            .into_iter()
            .filter_map(|(name, _)| name.strip_prefix(&prefix).and_then(|r| r.split('/').next()).map(String::from))
            .collect();
        tasks.dedup();
        Ok(tasks)
    }

    /// Takes the fetched record of `task` when it extends the local one
    /// (and the attempt commits the local repository lacks). The caller
    /// holds the task's local lock.
    pub(crate) fn take(&self, task: &str) -> Result<Taken, RemoteError> {
        self.take_attempt_refs(task)?;
        let Some(remote) = self.repo.ref_target(&self.staged(task, "record")) else { return Ok(Taken::Absent) };
        let theirs = self.repo.blob_at(remote, layout::EVENTS).unwrap_or_default();
        let path = self.store.task(task).events();
        let ours = std::fs::read(&path).unwrap_or_default();
        let local_ref = refs::record(task);
        match relate::relate(&ours, &theirs) {
            Relation::Same => {
                if self.repo.ref_target(&local_ref).is_none_or(|l| self.repo.is_ancestor(l, remote)) {
                    self.repo.set_ref(&local_ref, remote, "retry-run pull")?;
                }
                Ok(Taken::Same)
            }
            Relation::RemoteExtends { more } => {
                let dir = self.store.task(task);
                self.repo.write_out(remote, dir.path())?;
                self.repo.set_ref(&local_ref, remote, "retry-run pull")?;
                self.set_success_branch(task, &theirs)?;
                Ok(Taken::Took { events: more })
            }
            Relation::LocalExtends { more } => Ok(Taken::LocalAhead { events: more }),
            Relation::Diverged { seq, local, remote } => Err(RemoteError::Diverged {
                task: task.into(),
                remote: self.name.clone(),
                seq,
                local,
                remote_event: remote,
            }),
        }
    }

    /// The attempt commits `refs/retry-run/<task>/<n>` the remote has and
    /// this repository lacks.
    fn take_attempt_refs(&self, task: &str) -> Result<(), RemoteError> {
        let prefix = format!("refs/retry-run-remotes/{}/{task}/", self.name);
        for (name, oid) in self.repo.refs_under(&prefix)? {
            let leaf = &name[prefix.len()..];
            if refs::is_attempt_leaf(leaf) {
                let local = format!("{}{leaf}", refs::task_prefix(task));
                if self.repo.ref_target(&local).is_none() {
                    self.repo.set_ref(&local, oid, "retry-run pull")?;
                }
            }
        }
        Ok(())
    }

    /// A task that succeeded elsewhere gets its `retry-run/<task>` branch
    /// here too, unless the branch exists or the result landed (a land
    /// removes the branch: `retry-run land`).
    fn set_success_branch(&self, task: &str, events: &[u8]) -> Result<(), RemoteError> {
        let verified = crate::record::chain::verify(events);
        let state = state(&verified.events);
        if let Some((Event::TaskSucceeded { commit, branch, .. }, _)) = &state.finished
            && state.review_label() != Some("landed")
            && self.repo.ref_target(&format!("refs/heads/{branch}")).is_none()
            && branch == &refs::success_branch(task)
            && let Ok(oid) = commit.parse::<Oid>()
            && self.repo.has_object(oid)
        {
            self.repo.set_branch(branch, oid)?;
        }
        Ok(())
    }

    /// The record of `task` committed under its ref; the updates that send
    /// it and the attempt commits.
    fn record_updates(&self, task: &str) -> Result<Vec<Update>, RemoteError> {
        let dir = self.store.task(task);
        if !dir.events().is_file() {
            // Nothing recorded yet (the run stopped before the task started).
            return Ok(Vec::new());
        }
        let events = crate::record::chain::verify(&std::fs::read(dir.events()).unwrap_or_default());
        let message = format!("retry-run record {task}: {} events", events.events.len());
        let record = self.repo.commit_dir(dir.path(), &refs::record(task), &message, &TaskDir::is_local)?;
        let mut updates = vec![Update { src: record.to_string(), dst: refs::record(task), expect: None }];
        for (name, oid) in self.repo.refs_under(&refs::task_prefix(task))? {
            if name.rsplit('/').next().is_some_and(refs::is_attempt_leaf) {
                updates.push(Update { src: oid.to_string(), dst: name, expect: None });
            }
        }
        Ok(updates)
    }

    /// `push`: the task's record and attempt commits, in one atomic push
    /// that the remote refuses unless it only moves its refs forward.
    pub(crate) fn push(&self, task: &str) -> Result<(), RemoteError> {
        let updates = self.record_updates(task)?;
        match transport::push(&self.dir, &self.name, &updates, true, &format!("retry-run push {task}"))? {
            Pushed::Done => Ok(()),
            Pushed::Refused(r) => Err(RemoteError::Refused {
                task: task.into(),
                remote: self.name.clone(),
                reasons: r.into_iter().map(|(d, why)| format!("{d}: {why}")).collect(),
            }),
        }
    }

    /// The lease of `task` as the last fetch found it.
    fn fetched_lease(&self, task: &str) -> Option<(Oid, Option<Holder>)> {
        let oid = self.repo.ref_target(&self.staged(task, "lease"))?;
        Some((oid, self.repo.commit_message(oid).and_then(|m| Holder::parse(&m))))
    }
}

/// A run's hold on a task: the lease commit it last pushed, renewed with
/// every push of the record and in between.
pub(crate) struct Lease {
    remote: Remote,
    pub task: String,
    holder: Holder,
    /// The lease commit the remote holds for this run.
    oid: Oid,
    duration: Duration,
    lost: Option<String>,
}

/// A lease claimed ([`Lease::claim`]), and whose it was when it was taken
/// over (expired).
pub(crate) struct Claimed {
    pub lease: Lease,
    pub previous: Option<Holder>,
}

/// Who this process is, for a lease.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

impl Lease {
    /// Pulls the task's record, then claims its lease: free, given back, or
    /// expired (then taken over; returns whose it was). Pulls once more
    /// after the claim, so the record is the newest the remote has. The
    /// caller holds the task's local lock.
    pub(crate) fn claim(dir: &Path, remote: &str, task: &str, duration: Duration) -> Result<Claimed, RemoteError> {
        let remote = Remote::open(dir, remote)?;
        let what = format!("retry-run run --remote {} (task {task})", remote.name);
        remote.fetch(&[task.to_string()], &what)?;
        remote.take(task)?;
        let now = now_ms();
        let found = remote.fetched_lease(task);
        let previous = match found.as_ref().map(|(_, h)| h.as_ref()) {
            Some(h) => match lease_ref::standing(h, now) {
                LeaseStanding::Held(h) => {
                    return Err(RemoteError::Held { task: task.into(), remote: remote.name, by: h.describe(now) });
                }
                LeaseStanding::Expired(h) => Some(h),
                LeaseStanding::Free => None,
            },
            None => None,
        };
        let holder = Holder {
            host: host(),
            pid: std::process::id(),
            run: format!("{:x}-{:x}", std::process::id(), now),
            task: task.into(),
            until_ms: now + duration.as_millis() as u64,
            released: false,
        };
        let parent = found.as_ref().map(|(o, _)| *o);
        let oid = remote.repo.message_commit(&holder.message(), parent)?;
        let expect = Some(parent.map_or(Expect::Absent, |o| Expect::At(o.to_string())));
        let update = Update { src: oid.to_string(), dst: refs::lease(task), expect };
        if let Pushed::Refused(_) = transport::push(&remote.dir, &remote.name, &[update], true, &what)? {
            // Another run moved the lease first: name it.
            remote.fetch(&[task.to_string()], &what)?;
            let by = remote
                .fetched_lease(task)
                .and_then(|(_, h)| h)
                .map_or_else(|| "another run".to_string(), |h| h.describe(now_ms()));
            return Err(RemoteError::Held { task: task.into(), remote: remote.name, by });
        }
        // What moved on the remote between the first fetch and the claim.
        remote.fetch(&[task.to_string()], &what)?;
        remote.take(task)?;
        let lease = Lease { remote, task: task.into(), holder, oid, duration, lost: None };
        Ok(Claimed { lease, previous })
    }

    /// Sends the record (`with_record`) and a renewed lease in one atomic
    /// push that only succeeds while the remote's lease is still this
    /// run's. `release` gives the lease back.
    fn push(&mut self, with_record: bool, release: bool) -> Result<(), RemoteError> {
        if let Some(by) = &self.lost {
            return Err(RemoteError::LeaseLost {
                task: self.task.clone(),
                remote: self.remote.name.clone(),
                by: by.clone(),
            });
        }
        let mut updates = if with_record { self.remote.record_updates(&self.task)? } else { Vec::new() };
        let mut next = self.holder.clone();
        next.until_ms = if release { now_ms() } else { now_ms() + self.duration.as_millis() as u64 };
        next.released = release;
        let oid = self.remote.repo.message_commit(&next.message(), Some(self.oid))?;
        updates.push(Update {
            src: oid.to_string(),
            dst: refs::lease(&self.task),
            expect: Some(Expect::At(self.oid.to_string())),
        });
        let what = format!("retry-run run --remote {} (task {})", self.remote.name, self.task);
        match transport::push(&self.remote.dir, &self.remote.name, &updates, true, &what)? {
            Pushed::Done => {
                self.oid = oid;
                self.holder = next;
                Ok(())
            }
            Pushed::Refused(_) => {
                let _ = self.remote.fetch(std::slice::from_ref(&self.task), &what);
                let by = self
                    .remote
                    .fetched_lease(&self.task)
                    .and_then(|(_, h)| h)
                    .filter(|h| h.run != self.holder.run)
                    .map_or_else(|| "another run".to_string(), |h| h.describe(now_ms()));
                self.lost = Some(by.clone());
                Err(RemoteError::LeaseLost { task: self.task.clone(), remote: self.remote.name.clone(), by })
            }
        }
    }

    /// The record sent, the lease renewed.
    pub(crate) fn publish(&mut self) -> Result<(), RemoteError> {
        self.push(true, false)
    }

    /// The lease alone renewed.
    pub(crate) fn renew(&mut self) -> Result<(), RemoteError> {
        self.push(false, false)
    }

    /// The record sent and the lease given back.
    pub(crate) fn release(&mut self) -> Result<(), RemoteError> {
        self.push(true, true)
    }

    /// Whether another run took the lease over.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.is_some()
    }
}
