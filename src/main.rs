//! The `retry-run` program: [`retry_run::cli::main`] behind C's `main`.
//!
//! Rust's usual entry point prepares the main thread before `main` runs
//! (it reads `/proc/self/maps` to place a guard page and installs an
//! alternate signal stack to report a stack overflow): about a tenth of
//! what `retry-run --version` costs. Without it, a stack overflow ends the
//! process with SIGSEGV and no message. What the program relies on is done
//! here: SIGPIPE is ignored, so a closed pipe is an error to handle (an
//! agent that stops reading its input must not kill retry-run), as the
//! usual entry point does; `std::env::args` works without it on Linux.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: setting a signal's disposition to SIG_IGN, before any thread
    // starts; no handler code runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        // Not dumpable: no other process of this user (an agent, in the
        // Landlock fallback, sees this process) can trace it or read its
        // memory or `/proc/<pid>/environ`, which holds the credentials
        // retry-run keeps from the agent. The programs it starts are
        // dumpable again.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    // `exit` flushes what std still buffers for stdout.
    std::process::exit(retry_run::cli::main())
}
