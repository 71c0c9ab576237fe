//! Paths as the command line gives them: made absolute against `-C`, and
//! the file a command reads (its FILE operand or `--input FILE`).

use std::path::PathBuf;

/// `path` as given on the command line, made absolute against `dir` (`-C`).
pub(crate) fn absolute(path: &std::path::Path, dir: &std::path::Path) -> PathBuf {
    crate::pathfmt::absolute(path, dir)
}

/// The file a command reads: its FILE operand or `--input FILE` (clap
/// lets only one be given), with how an error names it; `None` for stdin
/// (neither given, or `-`).
pub(crate) fn input_file<'a>(
    operand: Option<&'a std::path::Path>,
    input: Option<&'a std::path::Path>,
) -> Option<(&'a std::path::Path, String)> {
    let (path, named) = match (operand, input) {
        (Some(p), _) => (p, p.display().to_string()),
        (None, Some(p)) => (p, format!("--input {}", p.display())),
        (None, None) => return None,
    };
    (path != std::path::Path::new("-")).then_some((path, named))
}
