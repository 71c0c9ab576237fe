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
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the
    // VERSION flag only returns the ABI version (or -1); it touches no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
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
    #[error("Landlock needs Linux; this is {kernel}")]
    NotLinux { kernel: String },
}

/// Confines the calling process (and everything it executes later): read
/// and execute anywhere but beneath `hidden`, write only beneath
/// `writable`; signals and abstract UNIX sockets only to and of processes
/// inside the sandbox where the ABI can say so. Returns the ABI enforced.
/// Paths that do not exist are skipped.
#[cfg(target_os = "linux")]
pub fn confine(writable: &[PathBuf], hidden: &[PathBuf]) -> Result<u8, LandlockError> {
    use ::landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
        path_beneath_rules,
    };
    let abi = ABI::V6;
    let (readable, listable) = readable_except(hidden);
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .scope(Scope::Signal)?
        .scope(Scope::AbstractUnixSocket)?
        .create()?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(listable, AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))?
        .restrict_self()?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(LandlockError::NotEnforced),
        _ => Ok(probe()),
    }
}

/// What may be read when `hidden` may not: every entry beside a hidden
/// path and beside each of its ancestors (read, beneath), and the
/// ancestors themselves (listed only, so a hidden directory's names can be
/// listed but none of its files read). Nothing hidden: all of `/`.
fn readable_except(hidden: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    use std::collections::BTreeSet;
    let hidden: BTreeSet<&std::path::Path> = hidden.iter().map(PathBuf::as_path).collect();
    if hidden.is_empty() {
        return (vec![PathBuf::from("/")], Vec::new());
    }
    let ancestors: BTreeSet<&std::path::Path> = hidden.iter().flat_map(|h| h.ancestors().skip(1)).collect();
    let mut readable = Vec::new();
    for dir in &ancestors {
        let Ok(rd) = std::fs::read_dir(dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if !hidden.contains(p.as_path()) && !ancestors.contains(p.as_path()) {
                readable.push(p);
            }
        }
    }
    (readable, ancestors.into_iter().map(PathBuf::from).collect())
}

#[cfg(not(target_os = "linux"))]
pub fn confine(_writable: &[PathBuf], _hidden: &[PathBuf]) -> Result<u8, LandlockError> {
    Err(LandlockError::NotLinux { kernel: kernel() })
}
