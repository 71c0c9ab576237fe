//! Descriptors: pipes, pidfds, one-byte messages, `poll`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A pipe, both ends close-on-exec: (read, write).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `PIDFD_THREAD`: a pidfd of one thread (Linux 6.9), so that a thread's
/// own descriptor table is the one looked in.
pub(crate) const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

/// A pidfd of process (or, with [`PIDFD_THREAD`], thread) `pid`: it
/// becomes readable when that ends. `None` where the kernel has none or
/// the process is gone.
pub(crate) fn pidfd_open(pid: libc::pid_t, flags: libc::c_int) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
    // SAFETY: a descriptor just made, owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A copy (close-on-exec) of descriptor `fd` of the process `pidfd` names.
pub(crate) fn pidfd_getfd(pidfd: &OwnedFd, fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd on a pidfd this process owns returns a new
    // descriptor or -1.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// Waits, without a time limit, until one of `fds` is ready; their
/// `revents` say which. An error is the kernel's (`EINTR` included).
pub(crate) fn poll(fds: &mut [libc::pollfd]) -> io::Result<usize> {
    // SAFETY: poll reads and writes `fds.len()` entries of the array,
    // which lives across the call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// Reads into `buf` once: how many bytes came (0 at the end), or the error.
pub(crate) fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: read writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// Writes `buf` once: how many bytes went, or the error.
pub(crate) fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: write reads at most `buf.len()` bytes of `buf`.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// Leaves `fd` open across exec (its close-on-exec flag cleared).
pub(crate) fn keep_on_exec(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl changes a flag of a descriptor this process holds.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a FIFO at `path` (tests: a file nothing is ever written to).
#[cfg(test)]
pub(crate) fn mkfifo(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: mkfifo reads the NUL-terminated path, which lives across the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
