//! The formats `enrich` reads ([`Format`]), by their `--input-format`
//! names.

/// The input formats of `enrich` (docs/commands.md), by their
/// `--input-format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Ruff,
    Flake8,
    Pylint,
    Mypy,
    Pyright,
    Pytest,
    PythonTraceback,
    Rustc,
    CargoJson,
    CargoTest,
    Tsc,
    Eslint,
    Biome,
    Oxlint,
    Generic,
}

impl Format {
    pub const ALL: [Format; 15] = [
        Format::Ruff,
        Format::Flake8,
        Format::Pylint,
        Format::Mypy,
        Format::Pyright,
        Format::Pytest,
        Format::PythonTraceback,
        Format::Rustc,
        Format::CargoJson,
        Format::CargoTest,
        Format::Tsc,
        Format::Eslint,
        Format::Biome,
        Format::Oxlint,
        Format::Generic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Ruff => "ruff",
            Format::Flake8 => "flake8",
            Format::Pylint => "pylint",
            Format::Mypy => "mypy",
            Format::Pyright => "pyright",
            Format::Pytest => "pytest",
            Format::PythonTraceback => "python-traceback",
            Format::Rustc => "rustc",
            Format::CargoJson => "cargo-json",
            Format::CargoTest => "cargo-test",
            Format::Tsc => "tsc",
            Format::Eslint => "eslint",
            Format::Biome => "biome",
            Format::Oxlint => "oxlint",
            Format::Generic => "generic",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}
