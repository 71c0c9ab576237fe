//! The system calls the sandbox makes that Rust's standard library does
//! not, and the one module of the crate with `unsafe` code: each call's
//! safety is argued where it is made, and every other module calls the
//! safe functions here (the crate denies `unsafe` elsewhere).

pub(crate) mod fd;
pub(crate) mod landlock;
pub(crate) mod net;
pub(crate) mod notify;
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod probe;
pub(crate) mod process;
pub(crate) mod seccomp;
