//! Phase 1, the plan: what a task fixes before its first attempt (the task,
//! the effective config, the agent, the scope's rules and the sandbox),
//! all checked before anything is recorded, so bad input fails clean.

use std::path::{Path, PathBuf};

use super::lanes::shared::LaneRun;
use super::{Options, RunError, leftovers};
use crate::config::SandboxMode;
use crate::config::{self, CommandSpec, Config};
use crate::git::Repo;
use crate::judge::integrity::TestPaths;
use crate::judge::scope::{Rules, landing};
use crate::model::LandGate;
use crate::record::Store;
use crate::record::store::check_task_name;
use crate::sandbox::{self, Effective};
use crate::task::{self, Task};

/// What a task fixed before its first attempt.
pub(super) struct Plan {
    pub task: Task,
    pub id: String,
    pub config: Config,
    pub agent_cmd: CommandSpec,
    pub preset: Option<crate::agents::Preset>,
    /// The agent's command line is the preset's own (with `[agent] args`),
    /// which the preset's MCP wiring fits.
    pub preset_command: bool,
    pub leftovers: leftovers::Leftovers,
    pub rules: Rules,
    pub test_paths: TestPaths,
    /// The sandbox as it will be enforced, the kernel's Landlock ABI, and
    /// why it differs from what was asked, if it does.
    pub confined: Effective,
    pub abi: u8,
    pub fallback_note: Option<String>,
    /// Paths beyond the worktree the agent may write (config and preset).
    pub extra_writable: Vec<PathBuf>,
    /// Paths no confined process may read (secrets, `sandbox.deny_read`).
    pub hidden: Vec<PathBuf>,
    /// retry-run's own executable, which confines the agent.
    pub exe: PathBuf,
    /// `--fresh-baseline`: the base's checks run again, the cache ignored.
    pub fresh_baseline: bool,
    /// `--allow-new-target`.
    pub allow_new_target: bool,
    /// The words of this `run` that a resume of the task needs again
    /// (`--config`, `--preset`, `--target`, `--max-attempts`,
    /// `--allow-new-target`, and `--` with the agent given there).
    pub resume_args: Vec<String>,
    /// The lane this plan runs, when the task runs in lanes.
    pub lane: Option<LaneRun>,
    /// The model servers the agent's own variables point at, let through
    /// the proxy for it ([`sandbox::policy::endpoints`]).
    pub model_endpoints: Vec<sandbox::policy::endpoints::Endpoint>,
}

/// The project's config (`--config` or `retry-run.toml` at the root) with
/// a task's front matter over it.
pub(crate) fn effective_config(
    repo: &Repo,
    config_path: Option<&Path>,
    overrides: &toml::Table,
) -> Result<Config, RunError> {
    let path = match config_path {
        Some(p) => Some(p.to_path_buf()),
        None => repo.workdir().map(|w| w.join(config::FILE_NAME)).filter(|p| p.is_file()),
    };
    let (project, table) = match &path {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|source| RunError::ConfigUnreadable { path: p.clone(), source })?;
            let cfg = Config::parse(&text, p)?;
            (cfg, text.parse::<toml::Table>().unwrap_or_default())
        }
        None => (Config::default(), toml::Table::new()),
    };
    if overrides.is_empty() {
        return Ok(project);
    }
    toml::Value::Table(task::merge(&table, overrides))
        .try_into::<Config>()
        .map_err(|e| RunError::FrontMatter { message: e.to_string() })
}

/// `[scope] acts_after_land` with the files a run reads its config from,
/// when they lie inside the repository and are not `retry-run.toml` at its
/// root (`--config ci/retry.toml`, `--task-file tasks/fix.md` with its
/// front matter): a change to one is judged as one to `retry-run.toml`.
pub(crate) fn landing_gate(repo: &Repo, config_files: &[&Path], dir: &Path, mode: LandGate) -> landing::Gate {
    use std::os::unix::ffi::OsStrExt;
    let root = repo.workdir().and_then(|w| std::fs::canonicalize(w).ok());
    let inside = |p: &Path| -> Option<Vec<u8>> {
        let file = std::fs::canonicalize(crate::pathfmt::absolute(p, dir)).ok()?;
        let rel = file.strip_prefix(root.as_ref()?).ok()?.as_os_str().as_bytes().to_vec();
        (rel.as_slice() != config::FILE_NAME.as_bytes() && !rel.is_empty()).then_some(rel)
    };
    landing::Gate { mode, config_files: config_files.iter().filter_map(|p| inside(p)).collect() }
}

/// The task recorded for `id` (`tasks/<id>/task.md`).
pub(crate) fn recorded_task(store: &Store, id: &str) -> Result<Task, RunError> {
    let path = store.task(id).task_md();
    let text = std::fs::read_to_string(&path).map_err(|source| RunError::NoRecordedTask {
        task: id.to_string(),
        path: path.clone(),
        source,
    })?;
    Ok(task::parse_file(&text, &path)?)
}

/// The task from `--task-file`, `--task`, or the record (`--id` alone),
/// and the id it runs under.
pub(super) fn task_and_id(
    store: &Store,
    dir: &Path,
    opts: &Options,
    lane: Option<&LaneRun>,
) -> Result<(Task, String), RunError> {
    let task = load_task(store, dir, opts)?;
    let id = opts.id.clone().unwrap_or_else(|| task.id.clone());
    check_task_name(&id)?;
    match lane {
        Some(l) => Ok((task, crate::model::refs::lane_record(&l.task, l.lane))),
        None => Ok((task, id)),
    }
}

fn load_task(store: &Store, dir: &Path, opts: &Options) -> Result<Task, RunError> {
    if let Some(file) = &opts.task_file {
        let path = crate::pathfmt::absolute(file, dir);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| RunError::TaskFileUnreadable { path: file.clone(), source })?;
        return Ok(task::parse_file(&text, file)?);
    }
    if let Some(text) = &opts.task_text {
        return task::from_text(text).ok_or(RunError::EmptyTask);
    }
    if let Some(id) = &opts.id {
        check_task_name(id)?;
        return recorded_task(store, id);
    }
    Err(RunError::NoTask)
}

/// The plan of a task: the task and the effective config (flags over front
/// matter over `retry-run.toml`), the agent, the scope's rules and the
/// sandbox, with the sandbox's writable paths made ready.
/// `lane`: the lane this plan runs, when the task runs in lanes.
pub(super) fn take_task(
    repo: &Repo,
    store: &Store,
    dir: &Path,
    opts: &Options,
    lane: Option<&LaneRun>,
) -> Result<Plan, RunError> {
    let (task, id) = task_and_id(store, dir, opts, lane)?;
    let mut config = effective_config(repo, opts.config_path.as_deref(), &task.overrides)?;
    apply_flags(opts, &mut config)?;
    apply_lane_agent(opts, lane, &mut config)?;
    let preset_command = opts.agent.is_empty() && config.agent.command.is_none() && config.agent.preset.is_some();
    let (agent_cmd, preset, leftovers) = resolve_agent(opts, &mut config)?;
    let read_from: Vec<&Path> = opts.config_path.iter().chain(opts.task_file.iter()).map(PathBuf::as_path).collect();
    let rules = Rules::compile(&config.scope.allow, &config.scope.deny)?.with_landing(landing_gate(
        repo,
        &read_from,
        dir,
        config.scope.acts_after_land,
    ));
    let test_paths = TestPaths::new(&config.retry.test_paths)?;
    let (confined, abi, fallback_note) = confinement_mode(&config)?;
    // Where the agent could write objects unconfined, they are read with
    // their hashes checked.
    crate::git::verify_hashes(matches!(confined, Effective::Detect | Effective::Off));
    let (extra_writable, hidden) = writable_and_hidden(repo, &config, preset.as_ref())?;
    let exe = std::env::current_exe().map_err(|source| RunError::OwnExecutable { source })?;
    Ok(Plan {
        task,
        id,
        config,
        agent_cmd,
        preset,
        preset_command,
        leftovers,
        rules,
        test_paths,
        confined,
        abi,
        fallback_note,
        extra_writable,
        hidden,
        exe,
        fresh_baseline: opts.fresh_baseline,
        allow_new_target: opts.allow_new_target,
        resume_args: resume_args(opts),
        lane: lane.cloned(),
        model_endpoints: model_endpoints(confined),
    })
}

/// A lane's own agent over the task's in `config`; a task run in lanes is
/// planned with its first lane's (its lanes are planned each on its own).
fn apply_lane_agent(opts: &Options, lane: Option<&LaneRun>, config: &mut Config) -> Result<(), RunError> {
    let first_lane = match (lane, opts.lane_presets.first()) {
        (Some(_), _) => None,
        (None, Some(p)) => {
            Some(config::lanes::LaneConfig { preset: Some(config::PresetName(p.clone())), ..Default::default() })
        }
        (None, None) => config.lanes.first().cloned(),
    };
    if let Some(agent) = lane.and_then(|l| l.agent.as_ref()).or(first_lane.as_ref()) {
        if let Some(p) = &agent.preset {
            crate::agents::preset(&p.0).map_err(RunError::LanePreset)?;
            config.agent.preset = Some(p.clone());
            config.agent.command = None;
        }
        if let Some(c) = &agent.command {
            config.agent.command = Some(c.clone());
        }
        if !agent.args.is_empty() {
            config.agent.args = agent.args.clone();
        }
    }
    Ok(())
}

/// How the task's processes are confined here (`sandbox.mode` over what
/// the kernel offers), Landlock's ABI, and the note on a fallback: what it
/// cannot hold here, said at start and recorded.
fn confinement_mode(config: &Config) -> Result<(Effective, u8, Option<String>), RunError> {
    let abi = sandbox::layers::landlock::abi();
    // Namespaces are tried only where they may be used (a probe costs a
    // process).
    let namespaces = match config.sandbox.mode {
        SandboxMode::Auto | SandboxMode::Namespaces => {
            sandbox::layers::namespaces::probe().map(|_| ()).map_err(|e| e.to_string())
        }
        _ => {
            // The probe `run` started early ends before any attempt.
            sandbox::layers::namespaces::settle_early();
            Err("not asked for".to_string())
        }
    };
    let sandbox::ModeInForce { effective: confined, note: fallback_note } = sandbox::resolve(
        config.sandbox.mode,
        abi,
        namespaces.as_ref().map(|_| ()).map_err(String::as_str),
        &sandbox::layers::landlock::kernel(),
    )?;
    // Root is exempt from RLIMIT_NPROC: a confined mode holds the limit
    // with a pids cgroup, or the run stops here, before any attempt.
    if matches!(confined, Effective::Landlock | Effective::Namespaces) {
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let cgroup = || {
            sandbox::layers::limits::PidsCgroup::new(1, None, false)
                .map(drop)
                .ok_or(sandbox::layers::limits::NoCgroup::NotBeneathOwn)
        };
        let made = if root && config.sandbox.max_processes > 0 { cgroup() } else { Ok(()) };
        sandbox::process_limit(root, config.sandbox.max_processes, made)?;
    }
    let fallback_note = if confined == Effective::Landlock {
        // What the fallback cannot hold here, said at start and recorded.
        let gaps = sandbox::fallback_gaps();
        Some(match fallback_note {
            Some(note) => format!("{note}; {gaps}"),
            None => format!("sandbox.mode = \"landlock\": {gaps}"),
        })
    } else {
        fallback_note
    };
    Ok((confined, abi, fallback_note))
}

/// The paths confined processes may write beyond the worktree
/// (`sandbox.writable`, the preset's state), and those they may not read
/// (`sandbox.deny_read`, but the agent's own login).
fn writable_and_hidden(
    repo: &Repo,
    config: &Config,
    preset: Option<&crate::agents::Preset>,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), RunError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let repo_root = repo.workdir().unwrap_or(repo.common_dir()).to_path_buf();
    let mut extra_writable = sandbox::prepare_writable(&config.sandbox.writable, home.as_deref(), &repo_root)?;
    if let Some(p) = preset {
        extra_writable.extend(sandbox::prepare_state(&p.state_dirs, &p.state_files, home.as_deref())?);
    }
    let mut hidden = sandbox::hidden_paths(&config.sandbox.deny_read, home.as_deref(), &repo_root);
    if let Some(p) = preset {
        // The agent's own login stays readable to it.
        let own: Vec<PathBuf> = p
            .credential_files
            .iter()
            .filter_map(|f| sandbox::expand(f, home.as_deref(), &repo_root).ok())
            .filter_map(|f| std::fs::canonicalize(f).ok())
            .collect();
        hidden.retain(|h| !own.iter().any(|o| o.starts_with(h) || h.starts_with(o)));
    }
    Ok((extra_writable, hidden))
}

/// The model endpoints a confined agent may reach, read from retry-run's
/// environment; none when it is not confined.
fn model_endpoints(confined: Effective) -> Vec<sandbox::policy::endpoints::Endpoint> {
    if !matches!(confined, Effective::Landlock | Effective::Namespaces) {
        return Vec::new();
    }
    let vars: Vec<(String, String)> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    sandbox::policy::endpoints::model_endpoints(&vars)
}

/// The words of `opts` a resume of the task needs again.
fn resume_args(opts: &Options) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &opts.config_path {
        out.extend(["--config".to_string(), c.display().to_string()]);
    }
    if let Some(p) = &opts.preset {
        out.extend(["--preset".to_string(), p.clone()]);
    }
    if let Some(m) = opts.max_attempts {
        out.extend(["--max-attempts".to_string(), m.to_string()]);
    }
    for t in &opts.targets {
        out.extend(["--target".to_string(), t.clone()]);
    }
    if opts.allow_new_target {
        out.push("--allow-new-target".to_string());
    }
    if !opts.agent.is_empty() {
        out.push("--".to_string());
        out.extend(opts.agent.iter().cloned());
    }
    out
}

/// The flags of `run` over the config: `--max-attempts`, `--target`,
/// `--preset`, `--max-cost`, `--max-duration`.
fn apply_flags(opts: &Options, config: &mut Config) -> Result<(), RunError> {
    if let Some(n) = opts.max_attempts {
        if n == 0 {
            return Err(RunError::Flag { flag: "--max-attempts", problem: " must be at least 1".into() });
        }
        config.max_attempts.0 = n;
    }
    for t in &opts.targets {
        if t.trim().is_empty() {
            return Err(RunError::Flag {
                flag: "--target",
                problem: " is empty; name a test as its runner prints it".into(),
            });
        }
        if !config.targets.contains(t) {
            config.targets.push(t.clone());
        }
    }
    if let Some(p) = &opts.preset {
        crate::agents::preset(p).map_err(|e| RunError::Flag { flag: "--preset", problem: format!(": {e}") })?;
        config.agent.preset = Some(config::PresetName(p.clone()));
    }
    if let Some(c) = opts.max_cost {
        config.retry.max_cost_usd = Some(c);
    }
    if let Some(d) = &opts.max_duration {
        config.retry.max_duration = Some(
            config::DurationSpec::parse(d)
                .map_err(|e| RunError::Flag { flag: "--max-duration", problem: format!(": {e}") })?,
        );
    }
    Ok(())
}

/// The agent: its command (after `--`, else `[agent] command`, else the
/// preset's), its preset, and what it may leave in the worktree. Fills
/// `config.agent.command` (and `stdin` for a preset that wants it).
fn resolve_agent(
    opts: &Options,
    config: &mut Config,
) -> Result<(CommandSpec, Option<crate::agents::Preset>, leftovers::Leftovers), RunError> {
    let preset = match &config.agent.preset {
        Some(p) => Some(crate::agents::preset(&p.0)?),
        None => None,
    };
    let from_preset = opts.agent.is_empty() && config.agent.command.is_none() && preset.is_some();
    let agent_cmd = if !opts.agent.is_empty() {
        CommandSpec::Argv(opts.agent.clone())
    } else if let Some(c) = &config.agent.command {
        c.clone()
    } else if let Some(p) = &preset {
        CommandSpec::Argv(crate::agents::command_line(p, &config.agent.args))
    } else {
        return Err(RunError::NoAgentCommand { presets: crate::agents::names().join(", ") });
    };
    if from_preset && preset.as_ref().is_some_and(|p| p.stdin) {
        config.agent.stdin = true;
    }
    config.agent.command = Some(agent_cmd.clone());
    let mut globs = config.agent.leftovers.clone();
    if let Some(p) = &preset {
        globs.extend(p.leftovers.iter().cloned());
    }
    let leftovers = leftovers::Leftovers::new(&globs)?;
    Ok((agent_cmd, preset, leftovers))
}
