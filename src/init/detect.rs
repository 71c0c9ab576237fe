//! What `init` looks at: the checkout's layout, its virtualenvs, the
//! programs and agent CLIs on `PATH` ([`Facts`]), read by [`detect`]. The
//! rest of `init` decides from these facts alone.

use std::path::Path;

use crate::project::Layout;

/// Programs `init` looks for on `PATH`.
pub(crate) const PROGRAMS: &[&str] = &[
    "python3", "python", "uv", "poetry", "hatch", "ruff", "flake8", "mypy", "pyright", "black", "npm", "pnpm", "yarn",
    "cargo", "go",
];

/// Programs `init` looks for in a virtualenv's `bin`.
pub(crate) const VENV_PROGRAMS: &[&str] = &["python", "ruff", "flake8", "mypy", "pyright", "black"];

/// The virtualenv directories of a checkout, in the order they are tried.
pub(crate) const VENV_DIRS: &[&str] = &[".venv", "venv"];

/// What `init` looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    pub layout: Layout,
    /// Agent presets whose CLI is on `PATH`, in preset order.
    pub agents: Vec<String>,
    /// The [`PROGRAMS`] on `PATH`.
    pub on_path: Vec<String>,
    /// The checkout's virtualenvs ([`VENV_DIRS`]).
    pub venvs: Vec<Venv>,
    /// The checkout's root, absolute.
    pub root: String,
}

impl Facts {
    pub(super) fn on_path(&self, program: &str) -> bool {
        self.on_path.iter().any(|p| p == program)
    }

    /// The first virtualenv holding `program`, and that program's path.
    pub(super) fn venv_program(&self, program: &str) -> Option<(&Venv, String)> {
        self.venvs
            .iter()
            .find(|v| v.programs.iter().any(|p| p == program))
            .map(|v| (v, shell_word(&format!("{}/{program}", v.bin))))
    }
}

/// A virtualenv of the checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Venv {
    /// Its directory's name (`.venv`).
    pub name: String,
    /// Its `bin` directory, absolute: it is ignored, so not in the fresh
    /// worktree where checks run, and is named where it is.
    pub bin: String,
    /// The [`VENV_PROGRAMS`] in its `bin`.
    pub programs: Vec<String>,
}

/// What the checkout at `root` and `PATH` hold.
pub(crate) fn detect(root: &Path) -> Facts {
    let path = std::env::var_os("PATH");
    let on_path =
        |program: &str| path.as_ref().is_some_and(|p| crate::process::programs_on_path(program, p).next().is_some());
    let mut facts = Facts { layout: Layout::read(root), root: root.display().to_string(), ..Facts::default() };
    facts.on_path = PROGRAMS.iter().filter(|p| on_path(p)).map(|p| p.to_string()).collect();
    for name in VENV_DIRS {
        let bin = root.join(name).join("bin");
        let programs: Vec<String> =
            VENV_PROGRAMS.iter().filter(|p| bin.join(p).is_file()).map(|p| p.to_string()).collect();
        if !programs.is_empty() {
            facts.venvs.push(Venv { name: name.to_string(), bin: bin.display().to_string(), programs });
        }
    }
    for name in crate::agents::names() {
        if let Ok(p) = crate::agents::preset(name)
            && on_path(&p.program)
        {
            facts.agents.push(name.to_string());
        }
    }
    facts
}

/// `word` as one shell word: single-quoted when it holds anything but
/// letters, digits and `/._-+`.
pub(super) fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
