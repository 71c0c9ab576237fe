//! Sockets the standard library does not make or ask: netlink's socket
//! diagnostics, a socket's options and addresses.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A netlink socket of `protocol`, close-on-exec, whose reads give up
/// after `wait`.
pub(crate) fn netlink(protocol: libc::c_int, wait: std::time::Duration) -> Option<OwnedFd> {
    // SAFETY: socket returns a new descriptor, owned by nothing else, or -1.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return None;
    }
    // SAFETY: as above.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let wait =
        libc::timeval { tv_sec: wait.as_secs() as libc::time_t, tv_usec: wait.subsec_micros() as libc::suseconds_t };
    // SAFETY: setsockopt reads the timeval through a pointer to it, of its
    // size.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&wait as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    Some(sock)
}

/// Sends `buf` as one message: how many bytes went.
pub(crate) fn send(sock: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: send reads `buf.len()` bytes of `buf`.
    let n = unsafe { libc::send(sock.as_raw_fd(), buf.as_ptr().cast(), buf.len(), 0) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// Receives one message into `buf`: how many bytes came.
pub(crate) fn recv(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// A socket option of level `SOL_SOCKET` whose value is an int.
pub(crate) fn option(sock: BorrowedFd<'_>, opt: libc::c_int) -> Option<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one int into `v`, its size in `len`.
    let r = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, opt, (&mut v as *mut libc::c_int).cast(), &mut len)
    };
    (r == 0).then_some(v)
}

/// Which address of a socket [`address`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Its peer's (`getpeername`).
    Peer,
    /// Its own (`getsockname`).
    Own,
}

/// A socket's peer or own address, as the kernel's `struct sockaddr`
/// bytes, when it has one.
pub(crate) fn address(sock: BorrowedFd<'_>, end: End) -> Option<Vec<u8>> {
    // SAFETY: sockaddr_storage is plain data; all zeroes is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let at = (&mut storage as *mut libc::sockaddr_storage).cast();
    // SAFETY: getpeername and getsockname write at most `len` bytes (the
    // storage's size) into it, the length written in `len`.
    let r = unsafe {
        match end {
            End::Peer => libc::getpeername(sock.as_raw_fd(), at, &mut len),
            End::Own => libc::getsockname(sock.as_raw_fd(), at, &mut len),
        }
    };
    if r != 0 {
        return None;
    }
    // SAFETY: `len` bytes of `storage` were written (at most its size).
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&storage as *const libc::sockaddr_storage).cast::<u8>(),
            (len as usize).min(std::mem::size_of::<libc::sockaddr_storage>()),
        )
    };
    Some(bytes.to_vec())
}
