//! What a project's layout says, read from data that is passed in (the
//! root's names, the packages found, the contents of its config files):
//! its Python import root and test paths, the lint tools it configures,
//! its Node package manager and scripts. Pure: [`super::Layout::read`]
//! gathers the data.

use std::collections::BTreeMap;

/// The config files whose contents a [`Layout`] holds, when present at the
/// root.
pub(crate) const CONFIG_FILES: &[&str] = &[
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "pytest.ini",
    ".flake8",
    "ruff.toml",
    ".ruff.toml",
    "mypy.ini",
    ".mypy.ini",
    "hatch.toml",
    "package.json",
    "pyrightconfig.json",
    "Cargo.toml",
    ".cargo/config.toml",
    ".cargo/config",
];

/// A project as its root shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Names of the files and directories at the root (`.git` left out).
    pub root: Vec<String>,
    /// Directories at the root holding an `__init__.py`.
    pub packages: Vec<String>,
    /// Directories of `src/` holding an `__init__.py`.
    pub src_packages: Vec<String>,
    /// The contents of the [`CONFIG_FILES`] present, by name.
    pub files: BTreeMap<String, String>,
}

impl Layout {
    /// Whether `name` is at the root.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.root.iter().any(|r| r == name)
    }

    fn text(&self, name: &str) -> &str {
        self.files.get(name).map(String::as_str).unwrap_or("")
    }

    /// Whether this is a Python project: `pyproject.toml`, `setup.py`,
    /// `setup.cfg` or `requirements.txt` at the root, or a package in
    /// `src/`.
    pub(crate) fn is_python(&self) -> bool {
        ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"].iter().any(|f| self.has(f))
            || !self.src_packages.is_empty()
    }

    /// The file that configures `tool` (`ruff`, `flake8`, `mypy`,
    /// `hatch`), if one does: `[tool.ruff` in `pyproject.toml`,
    /// `ruff.toml`, `.ruff.toml`; a `[flake8]` section of `tox.ini` or
    /// `setup.cfg`, or `.flake8`; `[tool.mypy` in `pyproject.toml`,
    /// `mypy.ini`, `.mypy.ini`, `[mypy]` in `setup.cfg`; `[tool.hatch` in
    /// `pyproject.toml` or `hatch.toml`.
    pub(crate) fn configures(&self, tool: &str) -> Option<&'static str> {
        let table = |t: &str| self.text("pyproject.toml").lines().any(|l| l.trim_start().starts_with(t));
        let section = |file: &str, name: &str| ini_section(self.text(file), name).is_some();
        let found: &[(&'static str, bool)] = match tool {
            "ruff" => &[
                ("pyproject.toml", table("[tool.ruff")),
                ("ruff.toml", self.has("ruff.toml")),
                (".ruff.toml", self.has(".ruff.toml")),
            ],
            "flake8" => &[
                ("tox.ini", section("tox.ini", "flake8")),
                ("setup.cfg", section("setup.cfg", "flake8")),
                (".flake8", self.has(".flake8")),
            ],
            "mypy" => &[
                ("pyproject.toml", table("[tool.mypy")),
                ("mypy.ini", self.has("mypy.ini")),
                (".mypy.ini", self.has(".mypy.ini")),
                ("setup.cfg", section("setup.cfg", "mypy")),
            ],
            "pyright" => {
                &[("pyproject.toml", table("[tool.pyright")), ("pyrightconfig.json", self.has("pyrightconfig.json"))]
            }
            "black" => &[("pyproject.toml", table("[tool.black"))],
            "hatch" => &[("pyproject.toml", table("[tool.hatch")), ("hatch.toml", self.has("hatch.toml"))],
            "rustfmt" => &[("rustfmt.toml", self.has("rustfmt.toml")), (".rustfmt.toml", self.has(".rustfmt.toml"))],
            _ => &[],
        };
        found.iter().find(|(_, yes)| *yes).map(|(f, _)| *f)
    }

    /// Whether mypy's own config names what it checks (`files`,
    /// `packages` or `modules` in `[tool.mypy]` of `pyproject.toml`, or in
    /// `[mypy]` of `mypy.ini`, `.mypy.ini`, `setup.cfg`): then a plain
    /// `mypy` checks what the project checks, and `mypy .` would not.
    pub(crate) fn mypy_names_its_targets(&self) -> bool {
        const KEYS: [&str; 3] = ["files", "packages", "modules"];
        if let Ok(t) = self.text("pyproject.toml").parse::<toml::Table>()
            && let Some(m) = t.get("tool").and_then(|t| t.get("mypy")).and_then(|m| m.as_table())
            && KEYS.iter().any(|k| m.contains_key(*k))
        {
            return true;
        }
        ["mypy.ini", ".mypy.ini", "setup.cfg"].iter().any(|f| {
            ini_section(self.text(f), "mypy").is_some_and(|s| s.iter().any(|(k, _)| KEYS.contains(&k.as_str())))
        })
    }

    /// The text of `package.json`'s script `name`, if it has one.
    pub(crate) fn npm_script(&self, name: &str) -> Option<String> {
        serde_json::from_str::<serde_json::Value>(self.text("package.json"))
            .ok()?
            .get("scripts")?
            .get(name)?
            .as_str()
            .map(str::to_string)
    }

    /// What a cargo project's checks need to build: nothing from outside
    /// (no dependency but by path, or every source vendored by
    /// `.cargo/config.toml` with `Cargo.lock` present), or the hosts of
    /// the registries and git repositories its `Cargo.toml` names. A
    /// workspace's members are not read: it is given crates.io.
    pub(crate) fn cargo_needs(&self) -> CargoNeeds {
        let manifest = match self.text("Cargo.toml").parse::<toml::Table>() {
            Ok(t) => t,
            Err(_) => {
                return CargoNeeds::Hosts(CRATES_IO.map(String::from).to_vec(), "Cargo.toml could not be read".into());
            }
        };
        let config = [".cargo/config.toml", ".cargo/config"].into_iter().find(|f| self.files.contains_key(*f));
        if let Some(c) = config {
            let text = self.text(c);
            if text.contains("replace-with") && text.contains("directory") && self.has("Cargo.lock") {
                return CargoNeeds::Offline(format!("its sources are vendored ({c}) and Cargo.lock is committed"));
            }
        }
        let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
        let targets = manifest.get("target").and_then(|t| t.as_table());
        let owners =
            std::iter::once(&manifest).chain(targets.into_iter().flat_map(|t| t.values().filter_map(|t| t.as_table())));
        let mut tables: Vec<&toml::Table> =
            owners.flat_map(|t| kinds.iter().filter_map(move |k| t.get(*k).and_then(|d| d.as_table()))).collect();
        let workspace = manifest.get("workspace").and_then(|w| w.as_table());
        if let Some(d) = workspace.and_then(|w| w.get("dependencies")).and_then(|d| d.as_table()) {
            tables.push(d);
        }
        let mut hosts: Vec<String> = Vec::new();
        let mut push = |h: &str| {
            if !hosts.iter().any(|x| x == h) {
                hosts.push(h.to_string());
            }
        };
        let mut count = 0;
        for dep in tables.iter().flat_map(|t| t.values()) {
            let spec = dep.as_table();
            let has = |k: &str| spec.is_some_and(|s| s.contains_key(k));
            if has("path") && !has("version") {
                continue;
            }
            count += 1;
            match spec.and_then(|s| s.get("git")).and_then(|g| g.as_str()) {
                Some(url) => push(url_host(url)),
                None => CRATES_IO.iter().for_each(|h| push(h)),
            }
        }
        let members =
            workspace.is_some_and(|w| w.get("members").is_some_and(|m| m.as_array().is_some_and(|a| !a.is_empty())));
        if members {
            CRATES_IO.iter().for_each(|h| push(h));
            return CargoNeeds::Hosts(hosts, "a workspace (its members' dependencies are not read here)".into());
        }
        if count == 0 {
            return CargoNeeds::Offline("no dependencies but by path".into());
        }
        let s = if count == 1 { "y" } else { "ies" };
        CargoNeeds::Hosts(hosts, format!("{count} dependenc{s} to fetch"))
    }

    /// The Node package manager its lock file names (`pnpm`, `yarn`, else
    /// `npm`); `None` without a `package.json`.
    pub(crate) fn node_runner(&self) -> Option<&'static str> {
        if !self.has("package.json") {
            return None;
        }
        Some(if self.has("pnpm-lock.yaml") {
            "pnpm"
        } else if self.has("yarn.lock") {
            "yarn"
        } else if self.has("bun.lock") || self.has("bun.lockb") {
            "bun"
        } else {
            "npm"
        })
    }

    /// Whether `package.json` lists `package` among its dependencies (any
    /// kind): the project installs it, so its program is in
    /// `node_modules/.bin`.
    pub(crate) fn npm_depends_on(&self, package: &str) -> bool {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(self.text("package.json")) else { return false };
        ["dependencies", "devDependencies", "optionalDependencies"]
            .iter()
            .any(|k| v.get(k).and_then(|d| d.get(package)).is_some())
    }

    /// The version range `package.json` asks of `package`, as written
    /// (`^4.1.4`).
    pub(crate) fn npm_dependency(&self, package: &str) -> Option<String> {
        let v = serde_json::from_str::<serde_json::Value>(self.text("package.json")).ok()?;
        ["dependencies", "devDependencies", "optionalDependencies"]
            .iter()
            .find_map(|k| v.get(k)?.get(package)?.as_str().map(str::to_string))
    }

    /// The script names of `package.json`.
    pub(crate) fn npm_scripts(&self) -> Vec<String> {
        serde_json::from_str::<serde_json::Value>(self.text("package.json"))
            .ok()
            .and_then(|v| v.get("scripts").and_then(|s| s.as_object()).map(|s| s.keys().cloned().collect()))
            .unwrap_or_default()
    }

    /// Whether the Node project tests with jest: `jest` in a script of
    /// `package.json` or among its dependencies.
    pub(crate) fn uses_jest(&self) -> bool {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(self.text("package.json")) else {
            return false;
        };
        let in_scripts = v.get("scripts").and_then(|s| s.as_object()).is_some_and(|s| {
            s.values()
                .filter_map(|c| c.as_str())
                .any(|c| c.split_whitespace().any(|w| w == "jest" || w.ends_with("/jest")))
        });
        let in_deps = ["dependencies", "devDependencies"]
            .iter()
            .any(|k| v.get(k).and_then(|d| d.as_object()).is_some_and(|d| d.contains_key("jest")));
        in_scripts || in_deps
    }

    /// The test paths pytest is configured with (`testpaths` of
    /// `pytest.ini`, `[tool.pytest.ini_options]` of `pyproject.toml`,
    /// `[tool:pytest]` of `setup.cfg`, `[pytest]` of `tox.ini`, the first
    /// that sets it), else the conventional `tests` and `test` directories
    /// present.
    pub(crate) fn test_paths(&self) -> Vec<String> {
        let from_ini = [("pytest.ini", "pytest"), ("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")];
        let mut configured = None;
        if let Ok(t) = self.text("pyproject.toml").parse::<toml::Table>()
            && let Some(v) = t
                .get("tool")
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.get("ini_options"))
                .and_then(|t| t.get("testpaths"))
        {
            configured = Some(match v {
                toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
                _ => Vec::new(),
            });
        }
        for (file, name) in from_ini {
            if configured.is_some() {
                break;
            }
            configured = ini_section(self.text(file), name)
                .and_then(|s| s.into_iter().find(|(k, _)| k == "testpaths"))
                .map(|(_, v)| v.split_whitespace().map(str::to_string).collect());
        }
        match configured {
            Some(c) if !c.is_empty() => c,
            _ => ["tests", "test"].iter().filter(|d| self.has(d)).map(|d| d.to_string()).collect(),
        }
    }
}

/// The hosts cargo reaches for crates.io (its sparse index and downloads).
pub(crate) const CRATES_IO: [&str; 2] = ["index.crates.io", "static.crates.io"];

/// What a cargo project needs from outside to build ([`Layout::cargo_needs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CargoNeeds {
    /// Nothing: why.
    Offline(String),
    /// These hosts: why.
    Hosts(Vec<String>, String),
}

/// The host of a URL (`https://github.com/o/r` → `github.com`).
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split_once('@').map_or(rest, |(_, r)| r);
    rest.split(['/', ':']).next().unwrap_or(rest)
}

/// Where a Python project's modules are imported from: `src` when `src/`
/// holds a package, the root (`.`) for a project with `pyproject.toml`,
/// `setup.py`, `setup.cfg` or `requirements.txt` at the root; `None` for
/// a project that is not Python's.
pub(crate) fn python_import_root(layout: &Layout) -> Option<&'static str> {
    if !layout.src_packages.is_empty() {
        Some("src")
    } else if ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"].iter().any(|f| layout.has(f)) {
        Some(".")
    } else {
        None
    }
}

/// The keys and values of section `[name]` of an INI file (`tox.ini`,
/// `setup.cfg`), continuation lines joined with a space; `None` when it
/// has no such section.
pub(crate) fn ini_section(text: &str, name: &str) -> Option<Vec<(String, String)>> {
    let mut inside = false;
    let mut found = false;
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            inside = trimmed[1..trimmed.len() - 1].trim() == name;
            found |= inside;
            continue;
        }
        if !inside || trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with(char::is_whitespace)
            && let Some((_, v)) = out.last_mut()
        {
            if !v.is_empty() {
                v.push(' ');
            }
            v.push_str(trimmed);
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(root: &[&str], files: &[(&str, &str)]) -> Layout {
        Layout {
            root: root.iter().map(|s| s.to_string()).collect(),
            files: files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Layout::default()
        }
    }

    #[test]
    fn the_import_root_is_src_for_a_src_layout_and_the_root_for_a_flat_project() {
        let src = Layout { src_packages: vec!["shop".into()], ..layout(&["pyproject.toml", "src", "tests"], &[]) };
        assert_eq!(python_import_root(&src), Some("src"));
        let flat = Layout { packages: vec!["shop".into()], ..layout(&["setup.py", "shop", "tests"], &[]) };
        assert_eq!(python_import_root(&flat), Some("."));
        // A Rust crate's src/ holds no package.
        assert_eq!(python_import_root(&layout(&["Cargo.toml", "src"], &[])), None);
        assert!(!layout(&["Cargo.toml", "src"], &[]).is_python());
    }

    #[test]
    fn lint_tools_are_found_where_they_are_configured() {
        let l = layout(
            &["pyproject.toml", "tox.ini", "setup.cfg"],
            &[
                ("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.ruff.lint]\nselect = [\"E\"]\n[tool.mypy]\n"),
                ("tox.ini", "[tox]\nenvlist = py311\n\n[flake8]\nmax-line-length = 100\n"),
                ("setup.cfg", "[metadata]\nname = x\n"),
            ],
        );
        assert_eq!(l.configures("ruff"), Some("pyproject.toml"));
        assert_eq!(l.configures("flake8"), Some("tox.ini"));
        assert_eq!(l.configures("mypy"), Some("pyproject.toml"));
        assert_eq!(l.configures("hatch"), None);
        let bare = layout(&["pyproject.toml", "setup.cfg"], &[("pyproject.toml", "[project]\n# [tool.ruff]\n")]);
        assert_eq!(bare.configures("ruff"), None);
        assert_eq!(bare.configures("flake8"), None);
        assert_eq!(layout(&[".flake8", "ruff.toml"], &[]).configures("flake8"), Some(".flake8"));
        assert_eq!(layout(&[".flake8", "ruff.toml"], &[]).configures("ruff"), Some("ruff.toml"));
        let cfg = layout(&["setup.cfg"], &[("setup.cfg", "[flake8]\nexclude = build\n[mypy]\nstrict = true\n")]);
        assert_eq!((cfg.configures("flake8"), cfg.configures("mypy")), (Some("setup.cfg"), Some("setup.cfg")));
    }

    #[test]
    fn test_paths_come_from_pytest_settings_or_the_usual_directories() {
        let py = layout(
            &["pyproject.toml", "tests"],
            &[("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"unit\", \"integration\"]\n")],
        );
        assert_eq!(py.test_paths(), ["unit", "integration"]);
        let tox = layout(&["tox.ini", "tests"], &[("tox.ini", "[pytest]\ntestpaths =\n    t1\n    t2\n")]);
        assert_eq!(tox.test_paths(), ["t1", "t2"]);
        let cfg = layout(&["setup.cfg"], &[("setup.cfg", "[tool:pytest]\ntestpaths = checks\n")]);
        assert_eq!(cfg.test_paths(), ["checks"]);
        assert_eq!(layout(&["setup.py", "test", "tests"], &[]).test_paths(), ["tests", "test"]);
    }

    #[test]
    fn the_node_runner_follows_the_lock_file() {
        let pkg = ("package.json", r#"{"scripts": {"test": "jest", "lint": "eslint ."}}"#);
        assert_eq!(layout(&["package.json"], &[pkg]).node_runner(), Some("npm"));
        assert_eq!(layout(&["package.json", "pnpm-lock.yaml"], &[pkg]).node_runner(), Some("pnpm"));
        assert_eq!(layout(&["package.json", "yarn.lock"], &[pkg]).node_runner(), Some("yarn"));
        assert_eq!(layout(&["go.mod"], &[]).node_runner(), None);
        assert_eq!(layout(&["package.json"], &[pkg]).npm_scripts(), ["lint", "test"]);
    }

    #[test]
    fn ini_sections_join_continuation_lines() {
        let text = "[a]\nx = 1\n[flake8]\n# note\nexclude =\n  build,\n  dist\nmax-line-length: 99\n";
        assert_eq!(
            ini_section(text, "flake8").unwrap(),
            [("exclude".to_string(), "build, dist".to_string()), ("max-line-length".to_string(), "99".to_string())]
        );
        assert_eq!(ini_section(text, "b"), None);
    }
}
