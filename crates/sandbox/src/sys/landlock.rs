//! Landlock's three system calls, as the kernel's ABI has them (the
//! ruleset itself is made by the `landlock` crate).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The kernel's Landlock ABI version, or a negative number where it has
/// none.
pub(crate) fn abi_version() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the
    // VERSION flag only returns the ABI version (or -1); it touches no memory.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    }
}

/// `struct landlock_path_beneath_attr`, packed as the kernel reads it.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds to `ruleset` the rule that allows `access` beneath the file or
/// directory `parent` is open on.
pub(crate) fn add_path_beneath(ruleset: BorrowedFd<'_>, access: u64, parent: BorrowedFd<'_>) -> io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_uint = 1;
    let attr = PathBeneathAttr { allowed_access: access, parent_fd: parent.as_raw_fd() };
    // SAFETY: the attribute is a live value of the layout the kernel
    // reads; both descriptors are open for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0 as libc::c_uint,
        )
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Sets `no_new_privs` and puts `ruleset` in force on the calling thread
/// and what it starts. Only system calls: safe between `fork` and `exec`.
pub(crate) fn restrict_self(ruleset: BorrowedFd<'_>) -> io::Result<()> {
    super::seccomp::no_new_privs()?;
    // SAFETY: landlock_restrict_self reads the ruleset through a
    // descriptor open for the call.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
