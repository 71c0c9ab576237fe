//! Seccomp's user notifications, detect mode's eyes ([`crate::detect::observe`]):
//! the filter handed over from the command's process, each stopped call
//! received and let go on, and what is read of the caller meanwhile.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

/// Has `cmd`, between fork and exec, install `program` with a new
/// listener and hand it over ([`hand_over`] on `hello` and `go`).
pub(crate) fn install_on_exec(cmd: &mut Command, program: Arc<Vec<libc::sock_filter>>, hello: RawFd, go: RawFd) {
    // SAFETY: between fork and exec the closure makes system calls only
    // (prctl, seccomp, getpid, write, read), on memory prepared before the
    // fork (the program, kept alive by the Arc it holds) and on the stack;
    // it allocates nothing.
    unsafe {
        cmd.pre_exec(move || hand_over(&program, hello, go));
    }
}

/// In the command's process, between fork and exec: installs `program`
/// with a new listener (first without `no_new_privs`, which `CAP_SYS_ADMIN`
/// allows, then with it), says its pid and the listener's number on
/// `hello` (or the error, negated), and waits for the byte on `go`. `Err`
/// unless this process took the listener: the command does not start.
fn hand_over(program: &[libc::sock_filter], hello: RawFd, go: RawFd) -> io::Result<()> {
    let prog = libc::sock_fprog { len: program.len() as libc::c_ushort, filter: program.as_ptr() as *mut _ };
    // SAFETY: prctl sets flags of this process; seccomp reads the program
    // through `prog`, which outlives the call; write and read use buffers
    // on the stack of the sizes given.
    unsafe {
        // Made non-dumpable with its parent: this process must be able to
        // take the listener. exec sets it again by the program's file.
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        let install = || {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            )
        };
        let mut fd = install();
        if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EACCES) {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            fd = install();
        }
        let said = if fd < 0 { -io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL) } else { fd as i32 };
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&libc::getpid().to_ne_bytes());
        msg[4..].copy_from_slice(&said.to_ne_bytes());
        if libc::write(hello, msg.as_ptr().cast(), msg.len()) != msg.len() as isize {
            return Err(io::Error::last_os_error());
        }
        let mut answer = [0u8; 1];
        loop {
            let n = libc::read(go, answer.as_mut_ptr().cast(), 1);
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return if n == 1 && answer[0] == b'y' { Ok(()) } else { Err(io::Error::from_raw_os_error(libc::EPERM)) };
        }
    }
}

/// The next stopped call, or `None` when its caller is gone already.
pub(crate) fn receive(listener: BorrowedFd<'_>) -> Option<libc::seccomp_notif> {
    // SAFETY: seccomp_notif is plain data; the kernel wants it zeroed.
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one seccomp_notif into `req`.
    let r = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) };
    (r == 0).then_some(req)
}

/// Lets the stopped call `id` go on as the caller made it.
pub(crate) fn let_go_on(listener: BorrowedFd<'_>, id: u64) {
    let resp = libc::seccomp_notif_resp { id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
    // SAFETY: the ioctl reads one seccomp_notif_resp from `resp`.
    while unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) } != 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Whether the call `id` still waits (its caller alive).
pub(crate) fn still_waiting(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the ioctl reads one u64 through the pointer.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

/// Reads process `tid`'s memory at `at` into `buf` (`process_vm_readv`):
/// how many bytes came, fewer where its mapping ends; `None` when none did.
pub(crate) fn read_memory(tid: libc::pid_t, at: u64, buf: &mut [u8]) -> Option<usize> {
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let remote = libc::iovec { iov_base: at as usize as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: process_vm_readv writes at most `buf.len()` bytes into `buf`,
    // which the local iovec describes; the remote one is only read by the
    // kernel, in the other process.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    (n > 0).then_some(n as usize)
}
