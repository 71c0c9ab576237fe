//! Printing that survives its reader going away: `retry-run run | head`
//! closes stdout (and `2>&1 | head` stderr too) while a run goes on. As git
//! and ripgrep do, a write to a closed pipe is dropped rather than a panic
//! (`println!` panics on `EPIPE`; SIGPIPE is ignored, see `main.rs`): the
//! output stops, the run ends as it would have, its record complete.

/// `println!` that drops the line when stdout is closed.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that drops the text when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout();
        let _ = write!(o, $($arg)*);
        let _ = o.flush();
    }};
}

/// `eprintln!` that drops the line when stderr is closed.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that drops the text when stderr is closed.
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use {err, errln, out, outln};
