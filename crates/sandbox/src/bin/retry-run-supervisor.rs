//! `retry-run-supervisor`: the process that confines one command
//! ([`retry_run_sandbox::supervisor`]), outside for `run` and inside the
//! namespaces. Its own executable because it starts once or twice per
//! confined process: it links this crate alone (its Cargo.toml says so:
//! nothing of retry-run's).
//!
//! As `retry-run`'s does, C's `main` is the entry point: Rust's usual one
//! prepares the main thread for a stack overflow's message (reading
//! `/proc/self/maps`), a cost paid on every confined process.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    std::process::exit(retry_run_sandbox::supervisor::start())
}
