//! The mode asked for (`[sandbox] mode`) and the one in force, resolved
//! once for `run` and `retry-run sandbox --layers auto` alike. Pure.

use serde::{Deserialize, Serialize};

use crate::{Layers, SandboxError, layers::limits};

/// The mode `[sandbox] mode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The strongest that works here: namespaces, else Landlock and
    /// seccomp, else detection only.
    #[default]
    Auto,
    /// Namespaces (bubblewrap) with Landlock inside.
    Namespaces,
    /// Landlock and seccomp, without namespaces.
    Landlock,
    Detect,
    Off,
}

/// What `[sandbox] git` lets a confined process write of the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxGit {
    /// The agent may `git add` and `git commit` in its worktree.
    #[default]
    Commit,
    /// No git writes at all.
    ReadOnly,
}

/// How processes are actually confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effective {
    /// Their own namespaces (bubblewrap), Landlock inside, seccomp.
    Namespaces,
    /// The kernel confines them with Landlock (this ABI version) and
    /// seccomp, without namespaces.
    Landlock,
    /// Nothing confines them; what they change outside the worktree is only
    /// detected, and what they leave running is ended.
    Detect,
    /// Neither confined nor given a private temporary directory.
    Off,
}

impl Effective {
    /// The layers `retry-run sandbox` puts around a process in this mode.
    pub fn layers(self) -> Option<Layers> {
        match self {
            Effective::Namespaces => Some(Layers::Namespaces),
            Effective::Landlock => Some(Layers::Landlock),
            Effective::Detect => Some(Layers::None),
            Effective::Off => None,
        }
    }
}

/// The mode in force, and the note to say once when `auto` fell back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeInForce {
    pub effective: Effective,
    pub note: Option<String>,
}

/// The mode in force for `requested`, on a kernel with Landlock ABI `abi`
/// (0: none) where namespaces can (`Ok`) or cannot (`Err(why)`) be made,
/// and a note to say once when `auto` fell back. `Err` when the mode asked
/// for cannot be had here. Pure.
pub fn resolve(
    requested: SandboxMode,
    abi: u8,
    namespaces: Result<(), &str>,
    kernel: &str,
) -> Result<ModeInForce, SandboxError> {
    let (effective, note) = match requested {
        SandboxMode::Off => (Effective::Off, None),
        SandboxMode::Detect => (Effective::Detect, None),
        SandboxMode::Namespaces => match namespaces {
            Ok(()) => (Effective::Namespaces, None),
            Err(why) => return Err(SandboxError::NoNamespaces { why: why.to_string() }),
        },
        SandboxMode::Landlock if abi > 0 => (Effective::Landlock, None),
        SandboxMode::Landlock => return Err(SandboxError::NoLandlock { kernel: kernel.to_string() }),
        SandboxMode::Auto => match auto(abi, namespaces) {
            Auto::Namespaces => (Effective::Namespaces, None),
            Auto::Landlock { why } => (
                Effective::Landlock,
                Some(format!(
                    "namespaces cannot be used ({why}): agents and checks are confined by Landlock and seccomp only (no private /tmp, no process namespace; see docs/sandbox.md)"
                )),
            ),
            Auto::Neither { why } => (
                Effective::Detect,
                Some(format!(
                    "namespaces cannot be used ({why}) and this kernel ({kernel}) has no Landlock: agents and checks run unconfined, and what they change outside the worktree is only detected (sandbox.mode = \"detect\")"
                )),
            ),
        },
    };
    Ok(ModeInForce { effective, note })
}

/// What `auto` confines with here, decided once for `run`'s mode and
/// `retry-run sandbox --layers auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auto<'a> {
    /// Namespaces can be made.
    Namespaces,
    /// They cannot (`why`), and the kernel has Landlock.
    Landlock { why: &'a str },
    /// Neither namespaces (`why`) nor Landlock.
    Neither { why: &'a str },
}

/// What `auto` confines with on a kernel with Landlock ABI `abi` (0:
/// none) where namespaces can (`Ok`) or cannot (`Err(why)`) be made. Pure.
pub fn auto(abi: u8, namespaces: Result<(), &str>) -> Auto<'_> {
    match namespaces {
        Ok(()) => Auto::Namespaces,
        Err(why) if abi > 0 => Auto::Landlock { why },
        Err(why) => Auto::Neither { why },
    }
}

/// Whether `max_processes` (0: none) can be held for a confined command:
/// `RLIMIT_NPROC` holds it for any user but root, whom the kernel exempts;
/// for root only a pids cgroup does (`cgroup`: one can be made here, or
/// why not). Pure.
pub fn process_limit(root: bool, max_processes: u64, cgroup: Result<(), limits::NoCgroup>) -> Result<(), SandboxError> {
    match cgroup {
        Err(why) if root && max_processes > 0 => Err(SandboxError::NoProcessLimit { max: max_processes, why }),
        _ => Ok(()),
    }
}

/// What the Landlock fallback cannot hold that the namespaces do, in
/// words: said when a run starts and recorded (`TaskStarted`,
/// `sandbox.note`). Pure.
pub fn fallback_gaps() -> String {
    let gaps = [
        "/dev/shm is closed rather than private (programs that need POSIX shared memory or semaphores, such as Python's multiprocessing, fail unless sandbox.writable lists /dev/shm)",
        "the agent sees the machine's other processes (it can neither signal nor trace them)",
        "named UNIX sockets and UDP are refused wholesale, the sandbox's own included",
        "the permissions and times of your files outside the writable paths can be changed (Landlock does not cover chmod, utimes or extended attributes)",
    ];
    format!("the fallback cannot hold: {}", gaps.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_fallback_says_it_cannot_hold() {
        let gaps = fallback_gaps();
        assert!(gaps.contains("/dev/shm is closed") && gaps.contains("sandbox.writable"), "{gaps}");
        assert!(!gaps.contains("max_processes"), "the limit is held or the run refused: {gaps}");
    }

    #[test]
    fn root_without_a_pids_cgroup_is_refused_unless_no_limit_is_asked() {
        let no = || Err(limits::NoCgroup::NotMade);
        let e = process_limit(true, 100, no()).expect_err("root, a limit, no cgroup");
        let text = e.to_string();
        assert!(text.contains("max_processes = 100") && text.contains("(no pids cgroup could be made)"), "{text}");
        assert!(text.contains("sandbox.max_processes = 0"), "{text}");
        assert!(process_limit(true, 0, no()).is_ok());
        assert!(process_limit(false, 100, no()).is_ok());
        assert!(process_limit(true, 100, Ok(())).is_ok());
    }

    #[test]
    fn modes() {
        let k = "Linux 6.1";
        let no = Err("bwrap is not installed");
        let r = |mode, abi, ns| resolve(mode, abi, ns, k).map(|r| (r.effective, r.note));
        assert_eq!(r(SandboxMode::Auto, 7, Ok(())).unwrap(), (Effective::Namespaces, None));
        assert_eq!(r(SandboxMode::Auto, 0, Ok(())).unwrap().0, Effective::Namespaces);
        let (m, note) = r(SandboxMode::Auto, 7, no).unwrap();
        assert_eq!(m, Effective::Landlock);
        assert!(note.unwrap().contains("bwrap is not installed"));
        let (m, note) = r(SandboxMode::Auto, 0, no).unwrap();
        assert_eq!(m, Effective::Detect);
        assert!(note.unwrap().contains("Linux 6.1"));
        assert_eq!(r(SandboxMode::Landlock, 7, Ok(())).unwrap(), (Effective::Landlock, None));
        let err = r(SandboxMode::Landlock, 0, Ok(())).unwrap_err().to_string();
        assert!(err.contains("Linux 6.1") && err.contains("\"detect\""), "{err}");
        let err = r(SandboxMode::Namespaces, 7, no).unwrap_err().to_string();
        assert!(err.contains("bubblewrap") && err.contains("\"auto\""), "{err}");
        assert_eq!(r(SandboxMode::Detect, 7, Ok(())).unwrap().0, Effective::Detect);
        assert_eq!(r(SandboxMode::Off, 7, Ok(())).unwrap().0, Effective::Off);
        assert_eq!(Effective::Detect.layers(), Some(Layers::None));
        assert_eq!(Effective::Off.layers(), None);
    }
}
