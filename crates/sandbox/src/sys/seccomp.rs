//! Installing a seccomp filter.

use std::io;

/// Sets `no_new_privs` on the calling thread (what it executes can gain
/// no privilege).
pub(crate) fn no_new_privs() -> io::Result<()> {
    // SAFETY: prctl sets a flag of this thread.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Installs `program` as a seccomp filter on the calling thread
/// (`no_new_privs` set first, or `CAP_SYS_ADMIN` held). Only system calls
/// on memory prepared before: safe between `fork` and `exec`.
pub(crate) fn install(program: &[seccompiler::sock_filter]) -> io::Result<()> {
    // seccompiler's instruction is the kernel's, field for field (repr(C)).
    let prog =
        libc::sock_fprog { len: program.len() as libc::c_ushort, filter: program.as_ptr() as *mut libc::sock_filter };
    // SAFETY: seccomp reads the program through `prog`, which outlives
    // the call.
    if unsafe { libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &prog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
