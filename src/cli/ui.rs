//! `retry-run ui`: the local web view of the repository's tasks
//! (docs/ui.md).

use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::ui::{ServerOptions, UiError};

/// Serve a web view of the tasks on 127.0.0.1, until Ctrl-C.
///
/// Prints the URL to open, with its token (the server answers nothing
/// without it), and opens the browser on it.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  retry-run ui\n  retry-run ui --port 8700 --no-open")]
pub struct UiArgs {
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Print the URL only; do not open the browser.
    #[arg(long)]
    pub no_open: bool,
}

pub(super) fn run(dir: &Path, args: UiArgs) -> Result<i32, CliError> {
    let opts = ServerOptions { port: args.port, open: !args.no_open };
    crate::ui::serve(dir, opts, |url| crate::console::out!("retry-run ui: {url}\n"))?;
    Ok(exit::OK)
}

impl From<UiError> for CliError {
    fn from(e: UiError) -> Self {
        let code = match &e {
            UiError::Git(g) if g.is_usage() => exit::USAGE,
            _ => exit::ENVIRONMENT,
        };
        let hint = e.hint();
        CliError::of(code, e, hint)
    }
}
