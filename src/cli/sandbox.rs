//! `retry-run sandbox`: run one command confined to the current directory.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::CliError;
use crate::git::Repo;
use crate::sandbox::exec::{self, Confined};
use crate::sandbox::{Layers, Limits, git_writable, landlock, namespaces};

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
    /// Use this directory as TMPDIR instead of making one (the attempt loop).
    #[arg(long, hide = true, value_name = "DIR")]
    pub tmpdir: Option<PathBuf>,
    /// Wait for the command, end every process it left behind, and end as
    /// it ended (the attempt loop).
    #[arg(long, hide = true)]
    pub reap: bool,
    /// A path inside a writable one it may not change (the attempt loop).
    #[arg(long, hide = true, value_name = "PATH")]
    pub protect: Vec<PathBuf>,
    /// A directory mounted read-only at the --share-at of the same rank
    /// (`[worktree] share`, the attempt loop; namespaces only).
    #[arg(long, hide = true, value_name = "DIR")]
    pub share_from: Vec<PathBuf>,
    /// Where the --share-from of the same rank is mounted (the attempt loop).
    #[arg(long, hide = true, value_name = "PATH")]
    pub share_at: Vec<PathBuf>,
    /// A path beneath /tmp or /run that stays readable (the attempt loop).
    #[arg(long, hide = true, value_name = "PATH")]
    pub keep: Vec<PathBuf>,
    /// Where to append one JSON line per connection the proxy saw (host,
    /// port, allowed or refused, bytes) and per limit the command hit.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// A direct connection to a port this machine's loopback listens on and
    /// the command may not reach is recorded as refused (the attempt loop,
    /// for the agent; namespaces only).
    #[arg(long, hide = true)]
    pub refuse_direct: bool,
    /// With `--layers none` and `--reap`: the command's connections and
    /// sockets are observed and appended to --log, judged against the
    /// --network hosts (the attempt loop, for detect mode's agent).
    #[arg(long, hide = true)]
    pub observe: bool,
    /// A port of the machine's loopback that something listens on and the
    /// command may not reach: a direct connection to it inside is answered,
    /// recorded as refused and closed (the outer process, for the inner).
    #[arg(long, hide = true, value_name = "PORT")]
    pub refuse_port: Vec<u16>,
    /// The --deny-read paths are every path to hide, and the --keep paths
    /// hold the repository's: the secrets and the repository were looked
    /// for already (the attempt loop), not again. With `--git read-only`
    /// the repository is then not looked up at all.
    #[arg(long, hide = true)]
    pub deny_read_complete: bool,
    /// Print, as one JSON object, the bubblewrap program and the arguments
    /// it would be given before `--` (`bwrap`, `args`), the directories
    /// made for them (`made`, left for the caller to remove) and the paths
    /// it hides (`hidden`, what `run` passes as --deny-read); run nothing
    /// (`bench/sandbox.py`'s floor: bubblewrap alone with the same mounts).
    #[arg(long, hide = true)]
    pub print_bwrap: bool,
    /// Print, as one JSON array, the line `run` starts in the place of this
    /// one (the supervisor's executable with this line as JSON,
    /// `retry-run-supervisor --outer LINE -- CMD...`); run nothing
    /// (`bench/sandbox.py`'s row "in a run"). Exit 3 when the supervisor's
    /// executable is not installed beside this one.
    #[arg(long, hide = true)]
    pub print_outer: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
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

/// `retry-run sandbox --inner LINE -- CMD...`: the supervisor's line,
/// which the outer process gives bubblewrap where the supervisor's own
/// executable is missing: the words after `sandbox`, for
/// [`crate::sandbox::supervisor::main`], or `None` for any other line.
pub(super) fn inner(args: &[std::ffi::OsString]) -> Option<&[std::ffi::OsString]> {
    (args.get(1).is_some_and(|a| a == "sandbox") && args.get(2).is_some_and(|a| a == "--inner")).then(|| &args[2..])
}

pub(super) fn run(dir: &Path, args: SandboxArgs) -> Result<i32, CliError> {
    // The attempt loop's line, whose --keep holds the repository's paths,
    // looks for no repository when it may not commit (the repository's
    // paths serve nothing else then): a libgit2 discovery on every
    // confined process saved.
    let looked_up = args.deny_read_complete && args.git == GitArg::ReadOnly;
    let repo = if looked_up { None } else { Repo::find(dir).ok() };
    let git = match (args.git, &repo) {
        (GitArg::Commit, Some(r)) => git_writable(r.common_dir(), r.git_dir()),
        _ => Vec::new(),
    };
    let layers = layers(args.layers)?;
    if args.print_bwrap && layers != Layers::Namespaces {
        return Err(CliError::usage(
            "--print-bwrap prints the arguments bubblewrap gets, but this command would run without it; use --layers namespaces",
        ));
    }
    let mut keep = args.keep;
    if let Some(r) = &repo {
        keep.push(r.common_dir().to_path_buf());
        keep.extend(r.workdir().map(Path::to_path_buf));
    }
    let confined = Confined {
        layers,
        dir: dir.to_path_buf(),
        writable: args.writable,
        deny_read: args.deny_read,
        git,
        protect: args.protect,
        shared: args.share_from.into_iter().zip(args.share_at).collect(),
        keep,
        network: args.network,
        host_network: args.host_network,
        unix_sockets: args.unix_sockets,
        log: args.log,
        limits: Limits { processes: args.max_processes, file_size: args.max_file_size },
        tmpdir: args.tmpdir,
        reap: args.reap,
        refuse_ports: args.refuse_port,
        refuse_direct: args.refuse_direct,
        observe: args.observe,
        deny_read_complete: args.deny_read_complete,
        print_bwrap: args.print_bwrap,
        // What `run` finds once for all its processes, found here for the
        // line printed as `run` would start it.
        found: if args.print_outer { crate::sandbox::Found::now() } else { crate::sandbox::Found::default() },
        argv: args.command,
    };
    if args.print_outer {
        return print_outer(&confined);
    }
    Ok(exec::run(&confined)?)
}

/// The layers `--layers` asks for; `auto`: namespaces where they can be
/// made, else Landlock and seccomp (said on stderr), else an error.
fn layers(arg: LayersArg) -> Result<Layers, CliError> {
    Ok(match arg {
        LayersArg::Namespaces => Layers::Namespaces,
        LayersArg::Landlock => Layers::Landlock,
        LayersArg::None => Layers::None,
        LayersArg::Auto => match namespaces::probe() {
            Ok(_) => Layers::Namespaces,
            Err(why) if landlock::abi() > 0 => {
                crate::console::errln!("retry-run: {why}; confining with Landlock and seccomp only");
                Layers::Landlock
            }
            Err(why) => {
                return Err(CliError::environment(format!(
                    "{why}, and this kernel ({}) has no Landlock: `retry-run sandbox` cannot confine anything here",
                    landlock::kernel()
                )));
            }
        },
    })
}

/// `--print-outer`: the line `run` starts in the place of this one.
fn print_outer(confined: &Confined) -> Result<i32, CliError> {
    let exe =
        std::env::current_exe().map_err(|e| CliError::environment(format!("cannot find this executable: {e}")))?;
    let Some(supervisor) = exec::supervisor_beside(&exe) else {
        return Err(CliError::environment(format!(
            "{} is not installed beside {}: `run` starts `retry-run sandbox` itself",
            exec::SUPERVISOR,
            exe.display()
        ))
        .with_hint("build with `cargo build --bins` or install with `cargo install --path .`"));
    };
    crate::console::outln!("{}", serde_json::json!(exec::outer_argv(&supervisor, confined)));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::inner;

    fn line(words: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("retry-run").chain(words.iter().copied()).map(Into::into).collect()
    }

    #[test]
    fn the_supervisors_line_is_left_to_the_supervisor() {
        let json = "{}";
        let words = line(&["sandbox", "--inner", json, "--", "true"]);
        assert_eq!(inner(&words).map(<[_]>::len), Some(4));
        assert!(inner(&line(&["sandbox", "--", "true"])).is_none());
        assert!(inner(&line(&["run", "--inner"])).is_none());
    }
}
