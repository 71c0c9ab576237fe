//! `retry-run agents`: the agent presets and whether each CLI is installed.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::agents;

/// List the agent presets, whether each is installed, and what each may do.
///
/// List the agent presets: whether each CLI is on PATH (with its version),
/// the state directories the sandbox lets it write, the files it may leave
/// in the worktree, the hosts it reaches and those refused to it, the files
/// of its own login it may read, and the exact command line `run --preset
/// NAME` runs.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// One JSON object per preset.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(_dir: &Path, args: AgentsArgs) -> Result<i32, CliError> {
    let mut out = std::io::stdout().lock();
    for name in agents::names() {
        let p = agents::preset(name).map_err(|e| CliError::of(super::exit::ENVIRONMENT, e, None))?;
        let version = crate::process::output(&p.program, &p.version, None)
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string());
        let mut state: Vec<String> = p.state_dirs.clone();
        state.extend(p.state_files.keys().cloned());
        let line = agents::command_line(&p, &[]);
        if args.json {
            let v = serde_json::json!({
                "preset": p.name, "description": p.description, "program": p.program,
                "installed": version.is_some(), "version": version, "command": line,
                "prompt_on_stdin": p.stdin, "state": state, "leftovers": p.leftovers, "env": p.env, "output": p.output,
                "hosts": p.hosts, "refused_hosts": p.refused_hosts, "credential_files": p.credential_files,
            });
            writeln!(out, "{v}")?;
        } else {
            writeln!(out, "{}: {}", p.name, p.description)?;
            match &version {
                Some(v) => writeln!(out, "  installed: {} ({v})", p.program)?,
                None => writeln!(out, "  installed: no (`{}` is not on PATH)", p.program)?,
            }
            let stdin = if p.stdin { " < prompt" } else { "" };
            writeln!(out, "  runs:      {}{stdin}", line.join(" "))?;
            writeln!(out, "  writes:    the worktree, its TMPDIR, {}", state.join(", "))?;
            if !p.leftovers.is_empty() {
                writeln!(out, "  leaves:    {} (not part of the change)", p.leftovers.join(", "))?;
            }
            if !p.hosts.is_empty() {
                writeln!(out, "  reaches:   {}", p.hosts.join(", "))?;
            }
            if !p.refused_hosts.is_empty() {
                writeln!(out, "  refused:   {}", p.refused_hosts.join(", "))?;
            }
            if !p.credential_files.is_empty() {
                writeln!(out, "  login:     {} (readable by it)", p.credential_files.join(", "))?;
            }
        }
    }
    Ok(exit::OK)
}
