//! Landlock: the kernel's confinement of a process and its descendants
//! (Linux 5.13+). Best effort across ABI versions: what the running kernel
//! supports is enforced, and the ABI in use is reported.

use std::path::PathBuf;

/// The Landlock ABI version of the running kernel; 0 when it has none.
/// `RETRY_RUN_LANDLOCK_ABI=0` pretends the kernel has none (to test the
/// fallback on a kernel that has it).
pub fn abi() -> u8 {
    if std::env::var("RETRY_RUN_LANDLOCK_ABI").is_ok_and(|v| v == "0") {
        return 0;
    }
    probe()
}

#[cfg(target_os = "linux")]
fn probe() -> u8 {
    let v = crate::sys::landlock::abi_version();
    if v < 0 { 0 } else { v.min(255) as u8 }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> u8 {
    0
}

/// The running kernel, for messages: `Linux 6.1.0`.
pub fn kernel() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{} {}", std::env::consts::OS, release.trim())
}

/// Why the calling process could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    #[cfg(target_os = "linux")]
    #[error("cannot set up the Landlock sandbox: {0}")]
    Ruleset(#[from] ::landlock::RulesetError),
    #[error("the kernel did not enforce the Landlock sandbox")]
    NotEnforced,
    #[error("cannot let the confined command read {}: {source}", path.display())]
    Rule { path: PathBuf, source: std::io::Error },
    #[error("Landlock needs Linux; this is {kernel}")]
    NotLinux { kernel: String },
}

/// Which TCP ports a confined process may use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Net {
    /// No network rule: any port, as without Landlock.
    #[default]
    Any,
    /// Connect over TCP only to these ports (on any host: Landlock sees
    /// the port, never the address), and bind no TCP port at all.
    Only(Vec<u16>),
}

/// What [`confine_with`] put in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InForce {
    /// The Landlock ABI of the running kernel.
    pub abi: u8,
    /// Whether the kernel enforces [`Net::Only`]: it needs ABI 4 (Linux
    /// 6.7); below that the TCP rules are dropped, best effort like the
    /// rest. Always false for [`Net::Any`], which has no rule to enforce.
    pub net_enforced: bool,
}

/// Confines the calling process (and everything it executes later): read
/// and execute anywhere but beneath `hidden`, write only beneath
/// `writable`; signals and abstract UNIX sockets only to and of processes
/// inside the sandbox where the ABI can say so. Returns the ABI enforced.
/// Paths that do not exist are skipped. The same as [`confine_with`] and
/// [`Net::Any`].
pub fn confine(writable: &[PathBuf], hidden: &[PathBuf]) -> Result<u8, LandlockError> {
    confine_with(writable, hidden, Net::Any).map(|c| c.abi)
}

/// [`confine`], and with [`Net::Only`] TCP too: no TCP port may be bound,
/// and only the given ports connected to, where the kernel has Landlock's
/// TCP rules (ABI 4+; [`InForce::net_enforced`] says whether it had).
/// Those rules watch `bind()` and `connect()` of TCP sockets only: UDP and
/// every other kind of socket, MPTCP, a TCP Fast Open send and the port a
/// `listen()` binds by itself all pass them (Linux 6.18, ABI 7), and the
/// fallback's seccomp filter (`seccomp.rs`) refuses them.
#[cfg(target_os = "linux")]
pub fn confine_with(writable: &[PathBuf], hidden: &[PathBuf], net: Net) -> Result<InForce, LandlockError> {
    let prepared = prepare(writable, hidden, net)?;
    prepared.restrict_self().map_err(|_| LandlockError::NotEnforced)?;
    Ok(prepared.confinement)
}

/// A ruleset made in this process, to be put in force in another one
/// (between `fork` and `exec`, [`Prepared::restrict_self`]): the command
/// is confined and the process that starts it is not, so the command can
/// neither signal nor trace it, nor read its memory or `/proc/<pid>/environ`
/// (Landlock refuses those on processes outside the command's domain).
#[cfg(target_os = "linux")]
pub struct Prepared {
    fd: std::os::fd::OwnedFd,
    pub confinement: InForce,
}

#[cfg(target_os = "linux")]
impl Prepared {
    /// Sets `no_new_privs` and restricts the calling thread to the ruleset:
    /// two system calls on a descriptor made before, safe between `fork`
    /// and `exec`.
    pub fn restrict_self(&self) -> std::io::Result<()> {
        use std::os::fd::AsFd;
        crate::sys::landlock::restrict_self(self.fd.as_fd())
    }
}

/// The ruleset of [`confine_with`], made but not in force.
#[cfg(target_os = "linux")]
pub fn prepare(writable: &[PathBuf], hidden: &[PathBuf], net: Net) -> Result<Prepared, LandlockError> {
    use ::landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetError, Scope, path_beneath_rules,
    };
    /// The first Landlock ABI with TCP rules.
    const NET_ABI: u8 = 4;
    let abi = ABI::V6;
    let (readable, listable) = readable_except(hidden);
    let mut ruleset =
        Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(AccessFs::from_all(abi))?;
    let ports = match net {
        Net::Any => None,
        Net::Only(ports) => {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
            Some(ports)
        }
    };
    let mut created = ruleset
        .scope(Scope::Signal)?
        .scope(Scope::AbstractUnixSocket)?
        .create()?
        .add_rules(path_beneath_rules(listable, AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))?;
    if let Some(ports) = &ports {
        created = created
            .add_rules(ports.iter().map(|&port| Ok::<_, RulesetError>(NetPort::new(port, AccessNet::ConnectTcp))))?;
    }
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    let fd = fd.ok_or(LandlockError::NotEnforced)?;
    // Read, execute and list (Landlock's first ABI: handled wherever
    // Landlock is) beneath a directory; read and execute a file.
    let read = AccessFs::from_read(abi);
    add_readable(&fd, &readable, read.bits(), (read & AccessFs::from_file(abi)).bits())?;
    let abi = probe();
    Ok(Prepared { fd, confinement: InForce { abi, net_enforced: ports.is_some() && abi >= NET_ABI } })
}

/// What may be read when `hidden` may not: every entry beside a hidden
/// path and beside each of its ancestors (read, beneath), with whether it
/// is a directory, as its directory's listing says; and the ancestors
/// themselves (listed only, so a hidden directory's names can be listed
/// but none of its files read). Nothing hidden: all of `/`.
///
/// Links among those entries get no rule of their own: Landlock checks the
/// file a path leads to, not the links on the way, so `/lib -> usr/lib`
/// is read under `/usr`'s rule; a rule through the link would be on what
/// it leads to, and a link beside a hidden file that leads to it (`key`
/// and `alias -> key`) made the hidden file readable.
fn readable_except(hidden: &[PathBuf]) -> (Vec<(PathBuf, bool)>, Vec<PathBuf>) {
    use std::collections::BTreeSet;
    let hidden: BTreeSet<&std::path::Path> = hidden.iter().map(PathBuf::as_path).collect();
    if hidden.is_empty() {
        return (vec![(PathBuf::from("/"), true)], Vec::new());
    }
    let ancestors: BTreeSet<&std::path::Path> = hidden.iter().flat_map(|h| h.ancestors().skip(1)).collect();
    let mut readable = Vec::new();
    for dir in &ancestors {
        let Ok(rd) = std::fs::read_dir(dir) else { continue };
        for e in rd.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let p = e.path();
            if !kind.is_symlink() && !hidden.contains(p.as_path()) && !ancestors.contains(p.as_path()) {
                readable.push((p, kind.is_dir()));
            }
        }
    }
    (readable, ancestors.into_iter().map(PathBuf::from).collect())
}

/// Adds to `ruleset` a rule for each of `entries` ([`readable_except`]'s):
/// `dir_access` beneath a directory, `file_access` on anything else. The
/// kind comes from the listing, so each rule costs three system calls
/// (open without following a link, add, close) where the `landlock`
/// crate's take five (it asks the kernel twice what the path is): about
/// fifty rules for each confined process beside a hidden `~/.npmrc`. An
/// entry gone since it was listed gets no rule; one that became a file
/// gets a file's.
#[cfg(target_os = "linux")]
fn add_readable(
    ruleset: &std::os::fd::OwnedFd,
    entries: &[(PathBuf, bool)],
    dir_access: u64,
    file_access: u64,
) -> Result<(), LandlockError> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::OpenOptionsExt;
    let add =
        |access: u64, f: &std::fs::File| crate::sys::landlock::add_path_beneath(ruleset.as_fd(), access, f.as_fd());
    for (path, is_dir) in entries {
        let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH | libc::O_NOFOLLOW).open(path);
        let Ok(f) = opened else { continue };
        let added = match add(if *is_dir { dir_access } else { file_access }, &f) {
            Err(e) if *is_dir && e.raw_os_error() == Some(libc::EINVAL) => add(file_access, &f),
            other => other,
        };
        added.map_err(|source| LandlockError::Rule { path: path.clone(), source })?;
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn confine_with(_writable: &[PathBuf], _hidden: &[PathBuf], _net: Net) -> Result<InForce, LandlockError> {
    Err(LandlockError::NotLinux { kernel: kernel() })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::sys::probe;

    /// Landlock alone with one TCP port: connecting to it works, to any
    /// other port, and binding any port, do not (ABI 4+; below, nothing is
    /// enforced and it says so). Other kinds of socket are not Landlock's
    /// to refuse: that is why the fallback adds seccomp.
    #[test]
    fn only_the_allowed_tcp_port_can_be_connected_to() {
        if let Some((allowed, other)) = probe::child("landlock-only") {
            let c = confine_with(&[], &[], Net::Only(vec![allowed])).expect("confined");
            assert_eq!(c.net_enforced, c.abi >= 4, "{c:?}");
            probe::try_all(allowed, other);
            return;
        }
        let seen =
            probe::rerun(concat!(module_path!(), "::only_the_allowed_tcp_port_can_be_connected_to"), "landlock-only");
        let denied = if probe() >= 4 { Err(libc::EACCES) } else { Ok(()) };
        assert_eq!(seen["connect_allowed"], Ok(()), "{seen:?}");
        assert_eq!(seen["connect_other"], denied, "{seen:?}");
        assert_eq!(seen["bind_any"], denied, "{seen:?}");
        assert_eq!(seen["bind_allowed"], if probe() >= 4 { denied } else { Err(libc::EADDRINUSE) }, "{seen:?}");
        assert_eq!(seen["std_udp"], Ok(()), "{seen:?}");
        assert_eq!(seen["unix_stream"], Ok(()), "{seen:?}");
    }

    /// [`Net::Any`], what [`confine`] uses: no network rule at all.
    #[test]
    fn any_port_is_left_as_it_was() {
        if let Some((allowed, other)) = probe::child("landlock-any") {
            let c = confine_with(&[], &[], Net::Any).expect("confined");
            assert!(!c.net_enforced, "{c:?}");
            assert_eq!(c.abi, probe());
            probe::try_all(allowed, other);
            return;
        }
        let seen = probe::rerun(concat!(module_path!(), "::any_port_is_left_as_it_was"), "landlock-any");
        assert_eq!(seen["connect_other"], Ok(()), "{seen:?}");
        assert_eq!(seen["bind_any"], Ok(()), "{seen:?}");
    }
}
