//! Printing that survives its reader going away: a write to a closed pipe
//! is dropped rather than a panic (SIGPIPE is ignored by both executables).
//! The sandbox prints nothing on stdout, which is its command's.

/// `eprintln!` that drops the line when stderr is closed.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use errln;
