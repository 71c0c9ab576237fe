//! What a request allows, ready for the kernel: the paths its command may
//! write, those it may not read, and the proxy's rules.

use std::path::{Path, PathBuf};

use super::ExecError;
use crate::proxy;
use crate::request::Request;

/// The paths it may write, ready for the kernel; `tmpdir`, its TMPDIR
/// where that is one of this machine's directories.
pub(crate) fn writable(
    c: &Request,
    dir: &Path,
    tmpdir: Option<&Path>,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, ExecError> {
    let extra = crate::prepare_writable(&c.paths.writable, home, &c.dir)?;
    Ok(crate::command_writable(dir, extra, &c.paths.git, tmpdir))
}

/// What the command may not read: the list it was given when that is
/// complete, else the secrets looked for now with it.
pub(crate) fn hidden(c: &Request, home: Option<&Path>) -> Vec<PathBuf> {
    if c.paths.deny_read_complete {
        let mut out: Vec<PathBuf> = c.paths.deny_read.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
        out.sort();
        out.dedup();
        out
    } else {
        crate::hidden_paths(&c.paths.deny_read, home, &c.dir)
    }
}

/// The proxy's rules, parsed (an error names the bad host).
pub(crate) fn rules(c: &Request) -> Result<Vec<proxy::HostRule>, ExecError> {
    c.network
        .hosts
        .iter()
        .map(|n| proxy::parse_rule(n).map_err(|source| ExecError::Network { rule: n.clone(), source }))
        .collect()
}
