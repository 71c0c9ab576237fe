//! `retry-run-supervisor`: the process bubblewrap starts inside the
//! namespaces of `retry-run sandbox`, in front of the confined command
//! ([`retry_run_sandbox::supervisor`]). Its own executable because it
//! starts once per confined process: it links this crate alone (its
//! Cargo.toml says so: nothing of retry-run's).
//!
//! As `retry-run`'s does, C's `main` is the entry point: Rust's usual one
//! prepares the main thread for a stack overflow's message (reading
//! `/proc/self/maps`), a cost paid on every confined process. SIGPIPE is
//! ignored, so a closed pipe is an error to handle.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: setting a signal's disposition to SIG_IGN before any thread
    // starts; no handler code runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(retry_run_sandbox::supervisor::main(&args))
}
