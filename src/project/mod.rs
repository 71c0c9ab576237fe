//! The project in a directory as its files lay it out: [`layout`] decides
//! from data (pure), [`Layout::read`] reads that data from the disk (the
//! root's names, the packages at the root and in `src/`, the config files
//! [`layout::CONFIG_FILES`]). Reads, never writes.

pub(crate) mod hides;
pub(crate) mod layout;

use std::path::{Path, PathBuf};

pub(crate) use layout::{CargoNeeds, Layout, python_import_root};

impl Layout {
    /// The layout of the project at `dir`; what cannot be read is left out.
    pub(crate) fn read(dir: &Path) -> Layout {
        let mut l = Layout::default();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            if e.path().join("__init__.py").is_file() {
                l.packages.push(name.clone());
            }
            if layout::CONFIG_FILES.contains(&name.as_str())
                && let Ok(text) = std::fs::read_to_string(e.path())
            {
                l.files.insert(name.clone(), text);
            }
            l.root.push(name);
        }
        for name in layout::CONFIG_FILES.iter().filter(|f| f.contains('/')) {
            if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
                l.files.insert(name.to_string(), text);
            }
        }
        for e in std::fs::read_dir(dir.join("src")).into_iter().flatten().flatten() {
            if e.path().join("__init__.py").is_file() {
                l.src_packages.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        l.root.sort();
        l.packages.sort();
        l.src_packages.sort();
        l
    }
}

/// Where the Python project at `dir` imports its modules from:
/// `dir/src` for a src layout (a package in `src/`), `dir` itself for a
/// flat project (`pyproject.toml`, `setup.py`, `setup.cfg` or
/// `requirements.txt` at the root), `None` for a project that is not
/// Python's.
pub(crate) fn import_root_of(dir: &Path) -> Option<PathBuf> {
    python_import_root(&Layout::read(dir)).map(|r| if r == "." { dir.to_path_buf() } else { dir.join(r) })
}

/// `PYTHONPATH` with `root` first, then what it held. Pure.
pub(crate) fn python_path(root: &str, existing: Option<&str>) -> String {
    match existing.filter(|e| !e.is_empty()) {
        Some(e) => format!("{root}:{e}"),
        None => root.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_import_root_of_a_directory() {
        let d = tempfile::tempdir().expect("tempdir");
        let dir = d.path();
        assert_eq!(import_root_of(dir), None);
        std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"shop\"\n").expect("write");
        assert_eq!(import_root_of(dir), Some(dir.to_path_buf()));
        std::fs::create_dir_all(dir.join("src/shop")).expect("mkdir");
        std::fs::write(dir.join("src/shop/__init__.py"), "").expect("write");
        assert_eq!(import_root_of(dir), Some(dir.join("src")));
        let l = Layout::read(dir);
        assert_eq!(l.root, ["pyproject.toml", "src"]);
        assert_eq!(l.src_packages, ["shop"]);
        assert!(l.files.contains_key("pyproject.toml"));
    }
}
