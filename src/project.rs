//! The project's layout as the checks need it: where a Python project's
//! import root is (`src/` or the repository's root). Placeholder edge until
//! the full layout detection lands.

use std::path::{Path, PathBuf};

/// The import root of the Python project at `dir`: `dir/src` when it holds
/// a package, `dir` when `dir` is a Python project (pyproject.toml,
/// setup.py or setup.cfg), else `None`.
pub fn import_root_of(dir: &Path) -> Option<PathBuf> {
    let python = ["pyproject.toml", "setup.py", "setup.cfg"].iter().any(|f| dir.join(f).is_file());
    if !python {
        return None;
    }
    let src = dir.join("src");
    let has_package =
        std::fs::read_dir(&src).map(|rd| rd.flatten().any(|e| e.path().join("__init__.py").is_file())).unwrap_or(false);
    Some(if has_package { src } else { dir.to_path_buf() })
}

/// `PYTHONPATH` with `root` first, then what it held. Pure.
pub fn python_path(root: &str, existing: Option<&str>) -> String {
    match existing.filter(|e| !e.is_empty()) {
        Some(e) => format!("{root}:{e}"),
        None => root.to_string(),
    }
}
