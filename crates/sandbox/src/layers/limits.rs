//! The process limit of a confined command. `RLIMIT_NPROC`, set inside the
//! sandbox, counts the processes of the sandbox's own user namespace; but
//! the kernel exempts root from it. For root, a `pids` cgroup of the
//! command's own (cgroup v2 where this user's cgroup is delegated to it, or
//! v1's `pids` hierarchy where it is writable) counts every process of the
//! tree however it forks, and says how often the limit refused one
//! (`pids.events`). Moving a whole process into a cgroup costs several
//! milliseconds (an RCU grace period, 6 to 19 ms on cgroup v1 here), so it
//! is done only where the rlimit cannot do the job; on cgroup v1 a single
//! thread enters instead (its `tasks` file, about 0.1 ms) and starts the
//! command's first process inside, and on v2 bubblewrap's child is moved
//! while bubblewrap sets up, not before it starts.

use crate::sys::process::{alive, is_root};
use std::path::{Path, PathBuf};

/// Why no pids cgroup holds a confined process's count (as root, the only
/// limit the kernel holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoCgroup {
    #[error("no pids cgroup could be made")]
    NotMade,
    #[error("no pids cgroup could be made beneath this process's own")]
    NotBeneathOwn,
}

/// A `pids` cgroup made for one command, removed when dropped.
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
    /// The cgroup it was made in: this process's own.
    parent: PathBuf,
}

/// The directory of this process's cgroup in the hierarchy that has the
/// `pids` controller: `(mount, path)` from `/proc/self/cgroup` lines
/// (`0::/user.slice/...` for v2, `8:pids:/...` for v1). Pure.
pub fn own_pids_cgroup(proc_self_cgroup: &str, v2_has_pids: bool) -> Option<PathBuf> {
    let mut v2 = None;
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            return Some(Path::new("/sys/fs/cgroup/pids").join(rel));
        }
        if id == "0" && controllers.is_empty() && v2_has_pids {
            v2 = Some(Path::new("/sys/fs/cgroup").join(rel));
        }
    }
    v2
}

/// The directory of this process's own pids cgroup, where the process
/// limit needs one ([`PidsCgroup::for_limit`]: this process runs as root);
/// `run` looks for it once and passes it to every outer process it starts,
/// which is in the same cgroup.
pub fn own_dir_for_limit() -> Option<PathBuf> {
    if is_root() { own_dir() } else { None }
}

/// The directory of this process's own pids cgroup.
fn own_dir() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let v2_pids = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|w| w == "pids"));
    own_pids_cgroup(&text, v2_pids)
}

/// The pid bubblewrap's `--info-fd` names (`"child-pid": N`). Pure.
pub fn child_pid(info: &str) -> Option<u32> {
    let v: serde_json::Value = serde_json::from_str(info.trim()).ok()?;
    v.get("child-pid")?.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0)
}

impl PidsCgroup {
    /// A cgroup for the limit `max` (0: none) where `RLIMIT_NPROC` cannot
    /// enforce it (this process runs as root), and this user may make one;
    /// `own`: this process's own pids cgroup, when the caller knows it
    /// ([`own_dir_for_limit`]); `starter`: see [`PidsCgroup::new`].
    pub fn for_limit(max: u64, own: Option<&Path>, starter: bool) -> Option<PidsCgroup> {
        if is_root() && max > 0 { PidsCgroup::new(max, own, starter) } else { None }
    }

    /// A new cgroup beneath this process's own (`own`, else looked up)
    /// with at most `max` processes, or `None` where this user may not make
    /// one. With `starter`, on cgroup v1 it holds one process more: the
    /// process that starts the command (bubblewrap), which a thread
    /// entering alone (`tasks`) starts inside; on v2 only bubblewrap's
    /// child is moved in.
    pub fn new(max: u64, own: Option<&Path>, starter: bool) -> Option<PidsCgroup> {
        let parent = match own {
            Some(p) => p.to_path_buf(),
            None => own_dir()?,
        };
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        // A count as well: checks side by side make cgroups from threads
        // of one process within the same nanosecond.
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = parent.join(format!("retry-run-{}-{nanos}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let cg = PidsCgroup { dir, parent };
        if cg.tasks().is_some() {
            cg.set_max(if starter { max.saturating_add(1) } else { max }).ok()?;
        } else {
            cg.set_max(max).ok()?;
            // Moving a process in must be allowed too (v2: write access to
            // the common ancestor's cgroup.procs).
            std::fs::OpenOptions::new().write(true).open(cg.procs()).ok()?;
        }
        Some(cg)
    }

    /// The `cgroup.procs` of the cgroup it was made in, this process's own
    /// (writing `0` to it moves nothing).
    pub fn own_procs(&self) -> PathBuf {
        self.parent.join("cgroup.procs")
    }

    /// The `tasks` file of the cgroup it was made in, on cgroup v1 (a
    /// thread that writes `0` to it goes back there alone).
    pub fn own_tasks(&self) -> PathBuf {
        self.parent.join("tasks")
    }

    /// Sets how many processes the cgroup may hold at once.
    pub fn set_max(&self, max: u64) -> std::io::Result<()> {
        std::fs::write(self.dir.join("pids.max"), max.to_string())
    }

    /// The file a process writes `0` to, to enter the cgroup.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The file a thread writes `0` to, to enter the cgroup alone: its
    /// `tasks`, on cgroup v1 only.
    pub fn tasks(&self) -> Option<PathBuf> {
        Some(self.dir.join("tasks")).filter(|p| p.exists())
    }

    /// Removes the cgroups beside this one that earlier confined
    /// processes left: each outer process ends once its command has,
    /// while the kernel still takes its namespaces down (and its cgroup
    /// cannot be removed yet). Only those whose maker, named in the
    /// cgroup's name ([`cgroup_maker`]), has ended; one still in use is
    /// not empty, and the kernel refuses to remove it.
    pub fn sweep_siblings(&self) {
        sweep(&self.parent, std::time::Duration::ZERO);
    }

    /// How many times the limit refused a new process.
    pub fn refused(&self) -> u64 {
        let events = std::fs::read_to_string(self.dir.join("pids.events")).unwrap_or_default();
        events.lines().find_map(|l| l.strip_prefix("max ").and_then(|n| n.trim().parse().ok())).unwrap_or(0)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once the command's tree has ended and its namespaces are
        // down; else (the outer process ends without waiting for that)
        // removed by the next confined process or at the task's end
        // ([`sweep`]).
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The pid of the process that made the pids cgroup named `name`
/// (`retry-run-<pid>-<nanos>-<n>`, as [`PidsCgroup::new`] names it);
/// `None` for any other name. Pure.
pub fn cgroup_maker(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("retry-run-")?;
    let mut parts = rest.split('-');
    let (pid, nanos, n) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if parts.next().is_some() || !digits(pid) || !digits(nanos) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the pids cgroups in `parent` that confined processes made and
/// left (their maker has ended), waiting up to `patience` for those the
/// kernel is still emptying. Returns how many it removed.
pub fn sweep(parent: &Path, patience: std::time::Duration) -> usize {
    let deadline = std::time::Instant::now() + patience;
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut left: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().and_then(cgroup_maker).is_some_and(|pid| !alive(pid)))
        .map(|e| e.path())
        .collect();
    let mut removed = 0;
    loop {
        left.retain(|dir| match std::fs::remove_dir(dir) {
            Ok(()) => {
                removed += 1;
                false
            }
            // Its last processes are still ending.
            Err(e) => e.raw_os_error() == Some(libc::EBUSY),
        });
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return removed;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// [`sweep`] in this process's own pids cgroup, where its confined
/// processes make theirs (as root: see [`PidsCgroup::for_limit`]).
pub fn sweep_own(patience: std::time::Duration) -> usize {
    own_dir_for_limit().map_or(0, |dir| sweep(&dir, patience))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup_with_pids_is_found_in_v1_and_v2() {
        let v1 = "9:name=systemd:/\n8:pids:/user/1000\n4:memory:/x\n0::/";
        assert_eq!(own_pids_cgroup(v1, false), Some(PathBuf::from("/sys/fs/cgroup/pids/user/1000")));
        let v2 = "0::/user.slice/user-1000.slice/session-3.scope";
        assert_eq!(
            own_pids_cgroup(v2, true),
            Some(PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"))
        );
        assert_eq!(own_pids_cgroup(v2, false), None);
        assert_eq!(own_pids_cgroup("4:memory:/x\n", true), None);
    }

    #[test]
    fn the_maker_of_a_pids_cgroup_is_read_from_its_name() {
        assert_eq!(cgroup_maker("retry-run-4242-123456789-0"), Some(4242));
        assert_eq!(cgroup_maker("retry-run-7-1-12"), Some(7));
        for other in [
            "retry-run-4242-123456789",
            "retry-run-4242-123456789-0-1",
            "retry-run-x-1-0",
            "retry-run--1-0",
            "retry-run-run-1-2-3",
            "docker-4242-1-0",
            "retry-run-1-2-3\n",
        ] {
            assert_eq!(cgroup_maker(other), None, "{other}");
        }
    }

    #[test]
    fn bubblewraps_child_pid_is_read_from_its_info() {
        // As bubblewrap 0.8.0 writes it (captured with --info-fd).
        let info = "{\n    \"child-pid\": 21191,\n    \"mnt-namespace\": 4026532178,\n    \"net-namespace\": 4026532180,\n    \"pid-namespace\": 4026532179\n}\n";
        assert_eq!(child_pid(info), Some(21191));
        assert_eq!(child_pid(""), None);
        assert_eq!(child_pid("{\n    \"child-pid\": 0\n}"), None);
    }
}
