//! `retry-run completions <shell>` and `retry-run man`: generated from the
//! same clap definitions as `--help`.

use std::io::Write;

use clap::Args;

use super::{CliError, exit};

/// Print shell completions for bash, zsh, fish, elvish or powershell.
///
/// Example: `retry-run completions bash > ~/.local/share/bash-completion/completions/retry-run`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `cmd`: the whole command line's definition.
pub(super) fn completions(mut cmd: clap::Command, args: CompletionsArgs) -> Result<i32, CliError> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "retry-run", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(exit::OK)
}

/// Print the man page (roff): `retry-run man | man -l -`.
#[derive(Debug, Args)]
pub struct ManArgs {}

/// `cmd`: the whole command line's definition.
pub(super) fn man(cmd: clap::Command, _args: ManArgs) -> Result<i32, CliError> {
    let mut out = Vec::new();
    let page = clap_mangen::Man::new(cmd.clone());
    page.render(&mut out).map_err(|e| CliError::environment(format!("cannot render the man page: {e}")))?;
    // One section per subcommand, after the main page.
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let _ = writeln!(out, ".SH \"RETRY-RUN {}\"", sub.get_name().to_uppercase());
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            let _ = writeln!(out, "{}", roff_escape(&about.to_string()));
        }
        let mut sub_page = Vec::new();
        clap_mangen::Man::new(sub.clone())
            .render_options_section(&mut sub_page)
            .map_err(|e| CliError::environment(format!("cannot render the man page: {e}")))?;
        out.extend_from_slice(&sub_page);
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(exit::OK)
}

/// Text safe in roff: a leading `.` or `'` and backslashes escaped.
fn roff_escape(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace('\\', "\\\\");
            if l.starts_with('.') || l.starts_with('\'') { format!("\\&{l}") } else { l }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
