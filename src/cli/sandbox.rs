//! `retry-run sandbox`: run one command confined to the current directory.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::CliError;
use crate::git::Repo;
use crate::sandbox::launch;
use crate::sandbox::{Auto, Layers, Limits, Request, git_writable, layers::landlock, layers::namespaces};

/// Run a command confined to the current directory, as an agent is.
///
/// Run a command confined to the current directory: in its own namespaces
/// (bubblewrap) with Landlock inside, or with Landlock and seccomp where
/// namespaces are refused. It may read and execute anything but the
/// credential stores (~/.ssh, ~/.aws, ...) and other projects' .env files,
/// write only beneath the current directory, a private temporary directory
/// (its TMPDIR, removed afterwards), the --writable paths and the usual
/// devices, and reach no network but the --network hosts, through a proxy.
/// Its exit status is passed on (a death by signal N as 128+N); nothing is
/// printed unless it cannot start.
#[derive(Debug, PartialEq, Args)]
#[command(
    after_help = "Examples:\n  retry-run sandbox -- make test\n  retry-run sandbox --writable ~/.cache/pip --network pypi.org --network files.pythonhosted.org -- pip install -e .\n  retry-run sandbox --network api.anthropic.com -- claude -p 'fix the test'"
)]
pub struct SandboxArgs {
    /// Another path it may write beneath (`~` is expanded; a missing
    /// directory is created when its parent exists). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub writable: Vec<String>,
    /// A path it may not read, beside ~/.ssh, ~/.aws, ~/.gnupg and the
    /// other credential stores never readable. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub deny_read: Vec<String>,
    /// A host it may reach through the proxy: `host` (ports 80 and 443),
    /// `host:port` or `*.domain`. Repeatable; none: no network at all.
    #[arg(long, value_name = "HOST")]
    pub network: Vec<String>,
    /// Use the machine's network, unconfined.
    #[arg(long, conflicts_with = "network")]
    pub host_network: bool,
    /// Allow named UNIX sockets (off: none can be created, so no socket
    /// outside the sandbox, an SSH agent's or Docker's, is reachable).
    #[arg(long)]
    pub unix_sockets: bool,
    /// How many processes it may run at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().processes, value_parser = super::numbers::max_processes)]
    pub max_processes: u64,
    /// The largest file it may write, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().file_size, value_parser = super::numbers::bytes)]
    pub max_file_size: u64,
    /// `commit`: it may also commit in this worktree: write its own git
    /// directory and the repository's objects (not config, hooks or refs).
    #[arg(long, value_enum, default_value = "commit")]
    pub git: GitArg,
    /// What confines it: `auto` (namespaces where they can be made, else
    /// Landlock and seccomp), `namespaces`, `landlock`, or `none` (nothing;
    /// what it leaves running is still ended with --reap).
    #[arg(long, value_enum, default_value = "auto")]
    pub layers: LayersArg,
    /// Where to append one JSON line per connection the proxy saw (host,
    /// port, allowed or refused, bytes) and per limit the command hit.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Print what would run instead of running it: `request`, the request
    /// as `run` gives it to the supervisor (one JSON object, see
    /// docs/sandbox.md); `bwrap`, bubblewrap's program and arguments, the
    /// directories made for them (left for you to remove) and the paths
    /// hidden (one JSON object; `--layers namespaces` only).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub print: Option<PrintArg>,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrintArg {
    Request,
    Bwrap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GitArg {
    Commit,
    ReadOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayersArg {
    Auto,
    Namespaces,
    Landlock,
    None,
}

/// The sandbox's supervisor, where its own executable is missing (not typed).
///
/// `retry-run supervisor LINE`: the supervisor's lines (`--request JSON`,
/// `--inner JSON`), served by `retry-run` itself where the supervisor's own
/// executable is not installed beside it. Not a command to type: `run` and
/// `retry-run sandbox` write its line.
#[derive(Debug, PartialEq, Args)]
pub struct SupervisorArgs {
    /// The supervisor's line, as `run` or the sandbox wrote it.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<std::ffi::OsString>,
}

/// `retry-run supervisor`: see [`SupervisorArgs`].
pub(super) fn supervise(args: &SupervisorArgs) -> i32 {
    crate::sandbox::supervisor::main(&args.words)
}

pub(super) fn run(dir: &Path, args: SandboxArgs) -> Result<i32, CliError> {
    let layers = layers(args.layers)?;
    if args.print == Some(PrintArg::Bwrap) && layers != Layers::Namespaces {
        return Err(CliError::usage(
            "--print bwrap prints the arguments bubblewrap gets, but this command would run without it; use --layers namespaces",
        ));
    }
    let mut request = Request::new(args.command, dir.to_path_buf(), layers);
    if let Ok(repo) = Repo::find(dir) {
        if args.git == GitArg::Commit {
            request.paths.git = git_writable(repo.common_dir(), repo.git_dir());
        }
        request.paths.keep.push(repo.common_dir().to_path_buf());
        request.paths.keep.extend(repo.workdir().map(Path::to_path_buf));
    }
    request.paths.writable = args.writable;
    request.paths.deny_read = args.deny_read;
    request.network.hosts = args.network;
    request.network.host = args.host_network;
    request.network.unix_sockets = args.unix_sockets;
    request.limits = Limits { processes: args.max_processes, file_size: args.max_file_size };
    request.log = args.log;
    match args.print {
        None => Ok(launch::run(&request)?),
        Some(PrintArg::Request) => {
            // What `run` finds once for all its processes, found here for
            // the request printed as `run` would give it.
            request.found = crate::sandbox::Found::now();
            crate::console::outln!("{}", request.to_json());
            Ok(0)
        }
        Some(PrintArg::Bwrap) => {
            crate::console::outln!("{}", launch::bubblewrap_json(&request)?);
            Ok(0)
        }
    }
}

/// The layers `--layers` asks for; `auto`: namespaces where they can be
/// made, else Landlock and seccomp (said on stderr), else an error.
fn layers(arg: LayersArg) -> Result<Layers, CliError> {
    let probed = match arg {
        LayersArg::Auto => namespaces::probe().map(drop).map_err(|e| e.to_string()),
        _ => Ok(()),
    };
    Ok(match arg {
        LayersArg::Namespaces => Layers::Namespaces,
        LayersArg::Landlock => Layers::Landlock,
        LayersArg::None => Layers::None,
        LayersArg::Auto => {
            match crate::sandbox::auto(landlock::abi(), probed.as_ref().map(drop).map_err(String::as_str)) {
                Auto::Namespaces => Layers::Namespaces,
                Auto::Landlock { why } => {
                    crate::console::errln!("retry-run: {why}; confining with Landlock and seccomp only");
                    Layers::Landlock
                }
                Auto::Neither { why } => {
                    return Err(CliError::environment(format!(
                        "{why}, and this kernel ({}) has no Landlock: `retry-run sandbox` cannot confine anything here",
                        landlock::kernel()
                    )));
                }
            }
        }
    })
}
