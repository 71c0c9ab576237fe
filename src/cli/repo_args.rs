//! What `scope` and `diff` share: the repository, the config, and which
//! base and head to compare.

use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use crate::config::{self, Config, ConfigError};
use crate::git::{Comparison, DiffDepth, Repo, SymbolsFn};

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base to compare with: any revision (branch, tag, origin/main,
    /// SHA, HEAD~2). Default: `base` in retry-run.toml, else the default
    /// branch (origin/HEAD, init.defaultBranch, main, master).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Compare this commit, from its merge base with the base (like
    /// `git diff BASE...HEAD`). Without it, the working tree is the head:
    /// staged, unstaged and untracked non-ignored files.
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// The repository and its config, opened for a command.
pub struct Opened {
    pub repo: Repo,
    pub config: Config,
}

pub(super) fn open(dir: &Path, config_path: Option<&Path>) -> Result<Opened, CliError> {
    let repo = Repo::find(dir)?;
    let config = match config_path {
        Some(p) => read_config(p)?,
        None => match repo.workdir().map(|w| w.join(config::FILE_NAME)) {
            Some(p) if p.is_file() => read_config(&p)?,
            _ => Config::default(),
        },
    };
    Ok(Opened { repo, config })
}

/// Reads and parses a config file.
fn read_config(path: &Path) -> Result<Config, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    Ok(Config::parse(&text, path)?)
}

impl CompareArgs {
    /// The base asked for: `--base`, else `base` in the config (else the
    /// default branch, which [`Repo::resolve_base`] picks).
    pub fn base_spec<'a>(&'a self, o: &'a Opened) -> Option<&'a str> {
        self.base.as_deref().or(o.config.base.as_deref())
    }

    /// Resolves base and head and compares them.
    pub fn compare<'r>(
        &self,
        o: &'r Opened,
        depth: DiffDepth,
        symbols: Option<&dyn SymbolsFn>,
    ) -> Result<Comparison<'r>, CliError> {
        let base = o.repo.resolve_base(self.base_spec(o))?;
        Ok(o.repo.compare_head(&base, self.head.as_deref(), depth, symbols)?)
    }
}
