//! `init`'s trial of the commands it may propose: each run once on the base
//! in a throwaway linked worktree at `HEAD`, prepared as a task's worktree
//! is (`worktree.include`, `worktree.setup`) and confined as a check is
//! (the sandbox of the config at the root, else the defaults), the Python
//! import root on `PYTHONPATH`; then the worktree and its temporary files
//! removed. The user's checkout is never written: the worktree and the
//! trial's TMPDIR live beneath the git directory's `retry-run/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::{CheckConfig, Config, DurationSpec, NetworkMode, SandboxGit, SandboxMode};
use crate::git::Repo;
use crate::process::StartError;
use crate::run::RunError;
use crate::run::gates::checks::{relativize, run_once};
use crate::sandbox::{self, Confinement, Effective};

/// The time each proposed command is given on the base, in seconds.
pub(crate) const TRIAL_SECS: u64 = 5 * 60;

/// How a proposed command ended on the base.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TrialRan {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Its output, paths relative to the worktree.
    pub output: String,
}

/// A throwaway worktree at `HEAD` and the confinement of what runs in it;
/// both removed when it is dropped.
pub(crate) struct Trial<'r> {
    repo: &'r Repo,
    name: String,
    wt: PathBuf,
    dir: PathBuf,
    confinement: Confinement,
    env: Vec<(String, String)>,
    runs: usize,
    /// The directories the trial made for its worktree and files, removed
    /// when it ends if empty.
    made: Vec<PathBuf>,
    /// The sandbox mode in force, in words, and why it differs from the
    /// one asked for, if it does.
    pub sandbox: String,
}

impl<'r> Trial<'r> {
    /// The worktree made at `HEAD` and prepared, with `config`'s sandbox
    /// (`config` is the one at the root, or the defaults).
    pub(crate) fn start(repo: &'r Repo, config: &Config) -> Result<Trial<'r>, RunError> {
        let base = repo.head()?.oid;
        let name = format!("init-{}", std::process::id());
        let wt = repo.worktrees_root(&config.worktree.root).join(&name);
        let dir = crate::record::Store::new(repo.common_dir()).root.join(&name);
        let meta_root = repo.common_dir().join("worktrees");
        let mut made: Vec<PathBuf> = [wt.parent(), dir.parent(), Some(meta_root.as_path())]
            .into_iter()
            .flatten()
            .map(Path::to_path_buf)
            .collect();
        made.dedup();
        made.retain(|d| !d.exists());
        let _ = std::fs::remove_dir_all(&dir);
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|source| RunError::Tmpdir { path: tmp.clone(), source })?;
        let mut trial = Trial {
            repo,
            name,
            wt: wt.clone(),
            dir,
            confinement: none(),
            env: Vec::new(),
            runs: 0,
            made,
            sandbox: String::new(),
        };
        repo.create_worktree(&wt, &trial.name, base)?;
        let (mut confinement, sandbox) = confine(repo, config, &wt, &trial.name, &tmp)?;
        share(repo, config, &wt, &mut confinement)?;
        let setup = (confinement.effective != Effective::Off && !config.worktree.setup_unconfined).then(|| {
            let mut c = confinement.clone();
            c.policy.network = config.worktree.setup_network.clone();
            c
        });
        crate::run::prepare::prepare(repo, config, &wt, setup.as_ref())?;
        // `run_once` puts the import root on PYTHONPATH, as for every check.
        let env = confinement.env();
        trial.confinement = confinement;
        trial.env = env;
        trial.sandbox = sandbox;
        Ok(trial)
    }

    /// Runs `cmd` (by `sh -c`) in the worktree, confined, reaching only
    /// `network` through the sandbox's proxy (a check's `network`), for at
    /// most `timeout`; its output with the worktree's path made relative.
    /// One that cannot be started at all ends as a shell's would, exit 127,
    /// with the reason as its output.
    pub(crate) fn run(&mut self, cmd: &str, network: &[String], timeout: Duration) -> TrialRan {
        match self.run_once(cmd, network, timeout) {
            Ok(ran) => ran,
            Err(e) => TrialRan { exit_code: Some(127), timed_out: false, output: e.to_string() },
        }
    }

    fn run_once(&mut self, cmd: &str, network: &[String], timeout: Duration) -> Result<TrialRan, StartError> {
        self.runs += 1;
        let check = CheckConfig {
            name: format!("init-{}", self.runs),
            run: cmd.to_string(),
            kind: Default::default(),
            format: Default::default(),
            timeout: DurationSpec::secs(timeout.as_secs()),
            network: network.to_vec(),
            baseline: None,
            inputs: None,
            reuse: None,
            reads: Vec::new(),
        };
        let out = self.dir.join(format!("{}.out", self.runs));
        let f = run_once(&check, &self.wt, &self.env, &out, &self.confinement)?;
        let output = relativize(&String::from_utf8_lossy(&f.output.bytes()), &self.wt);
        Ok(TrialRan { exit_code: f.exit_code, timed_out: f.timed_out, output })
    }
}

impl Drop for Trial<'_> {
    fn drop(&mut self) {
        let _ = self.repo.remove_worktree(&self.wt, &self.name);
        let _ = std::fs::remove_dir_all(&self.dir);
        for d in &self.made {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// A confinement that confines nothing (until the real one is made).
fn none() -> Confinement {
    Confinement {
        effective: Effective::Off,
        abi: 0,
        policy: sandbox::Policy::default(),
        tmpdir: None,
        exe: PathBuf::new(),
        supervisor: Vec::new(),
        found: sandbox::Found::default(),
        away: Vec::new(),
        hidden: Vec::new(),
        extra_env: Vec::new(),
        keep: Vec::new(),
        host_network: false,
        unix_sockets: false,
        limits: sandbox::Limits::default(),
    }
}

/// The confinement of a check in the trial's worktree `wt` (git read-only,
/// no network but the proxy's refusals), as `run` confines a check, and
/// the mode in words.
/// `[worktree] share` in the trial's worktree as `run` makes it: each
/// directory of the checkout mounted read-only at the same path where the
/// checks run in their own namespaces, else copied.
fn share(repo: &Repo, config: &Config, wt: &Path, confinement: &mut Confinement) -> Result<(), RunError> {
    let Some(checkout) = repo.workdir() else { return Ok(()) };
    for rel in &config.worktree.share {
        let rel = rel.trim_end_matches('/');
        let (src, dst) = (checkout.join(rel), wt.join(rel));
        if !src.is_dir() || std::fs::symlink_metadata(&dst).is_ok() {
            continue;
        }
        if confinement.effective == Effective::Namespaces {
            std::fs::create_dir_all(&dst).map_err(|e| RunError::io(format!("cannot make {}", dst.display()), e))?;
            confinement.policy.shared.push((src, dst));
        } else {
            crate::run::share::copy_tree(&src, &dst)
                .map_err(|e| RunError::io(format!("[worktree] share: cannot copy {}", src.display()), e))?;
        }
    }
    Ok(())
}

fn confine(repo: &Repo, config: &Config, wt: &Path, name: &str, tmp: &Path) -> Result<(Confinement, String), RunError> {
    let sb = &config.sandbox;
    let abi = sandbox::layers::landlock::abi();
    let namespaces = match sb.mode {
        SandboxMode::Auto | SandboxMode::Namespaces => {
            sandbox::layers::namespaces::probe().map(|_| ()).map_err(|e| e.to_string())
        }
        _ => Err("not asked for".to_string()),
    };
    let sandbox::ModeInForce { effective, note } = sandbox::resolve(
        sb.mode,
        abi,
        namespaces.as_ref().map(|_| ()).map_err(String::as_str),
        &sandbox::layers::landlock::kernel(),
    )?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = repo.workdir().unwrap_or(repo.common_dir()).to_path_buf();
    let extra = sandbox::prepare_writable(&sb.writable, home.as_deref(), &root)?;
    let git_paths = sandbox::GitPaths {
        objects: repo.common_dir().join("objects"),
        admin: repo.worktree_meta(name),
        quarantine: tmp.join("objects"),
        submodule_objects: Vec::new(),
    };
    let mut policy = sandbox::policy(wt, tmp, SandboxGit::ReadOnly, &git_paths, &extra);
    policy.hidden = sandbox::hidden_paths(&sb.deny_read, home.as_deref(), &root);
    let vars: Vec<(String, String)> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let mut checkouts = vec![root.clone()];
    if let Ok(real) = std::fs::canonicalize(&root)
        && real != root
    {
        checkouts.push(real);
    }
    let mut keep = vec![repo.common_dir().to_path_buf()];
    keep.extend(repo.workdir().map(Path::to_path_buf));
    let exe = std::env::current_exe().map_err(|source| RunError::OwnExecutable { source })?;
    let c = Confinement {
        effective,
        abi,
        policy,
        tmpdir: (effective != Effective::Off).then(|| tmp.to_path_buf()),
        supervisor: sandbox::supervisor::line::supervisor_for(&exe),
        found: sandbox::Found::now(),
        exe,
        away: sandbox::away_from_checkout(&vars, &checkouts, wt, &|p| p.exists()),
        hidden: sandbox::credentials(&vars, &config.agent.env_pass),
        extra_env: Vec::new(),
        keep,
        host_network: sb.network_mode == NetworkMode::Host,
        unix_sockets: sb.unix_sockets,
        limits: sandbox::Limits { processes: sb.max_processes, file_size: sb.max_file_size.bytes },
    };
    let mode = match effective {
        Effective::Namespaces => "confined by the sandbox (namespaces)",
        Effective::Landlock => "confined by the sandbox (Landlock)",
        Effective::Detect => "unconfined (sandbox mode detect)",
        Effective::Off => "unconfined (sandbox mode off)",
    };
    let mode = match note {
        Some(n) => format!("{mode}: {n}"),
        None => mode.to_string(),
    };
    Ok((c, mode))
}
