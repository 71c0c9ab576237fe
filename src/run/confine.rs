//! The attempt's confinement: its private TMPDIR (made afresh unless the
//! sandbox is off) and what its agent and checks may write.

use std::time::Instant;

use super::RunError;
use super::attempt::{Attempt, Fixed};
use super::share::shared_mounts;
use std::path::PathBuf;

use crate::config::{NetworkMode, SandboxGit};
use crate::model::AttemptRecord;
use crate::sandbox::{self, Confinement, Effective};

/// Attempt `n`, confined: its directory in the record, its TMPDIR, its
/// git object quarantine and its sandbox policy.
pub(super) fn confine(t: &Fixed<'_>, n: u32, started: Instant) -> Result<Attempt, RunError> {
    let plan = &t.plan;
    let dir = t.store.attempt(&plan.id, n);
    let tmpdir = (plan.confined != Effective::Off).then(|| dir.tmp());
    if let Some(tmp) = &tmpdir {
        fresh_dir(tmp)?;
    }
    let git_paths = git_paths(t, &dir);
    if plan.confined != Effective::Off && plan.config.sandbox.git == SandboxGit::Commit {
        fresh_dir(&git_paths.quarantine)?;
        for sub in ["pack", "info"] {
            fresh_dir(&git_paths.quarantine.join(sub))?;
        }
    }
    let mut policy = sandbox::policy(
        &t.wt,
        tmpdir.as_deref().unwrap_or(dir.path()),
        plan.config.sandbox.git,
        &git_paths,
        &plan.extra_writable,
    );
    policy.network = plan.config.sandbox.network.clone();
    policy.shared = shared_mounts(t);
    if let Some(p) = &plan.preset {
        policy.network.extend(p.hosts.iter().cloned());
    }
    policy.network.extend(plan.model_endpoints.iter().map(|e| e.host_port.clone()));
    let confinement = confinement(t, tmpdir, policy, &git_paths);
    let mut record = AttemptRecord::new(n);
    record.allow = plan.config.scope.allow.clone();
    Ok(Attempt {
        n,
        dir,
        started,
        record,
        confinement,
        env: Vec::new(),
        commit: None,
        dirty_submodules: Vec::new(),
        cut: Vec::new(),
        reuse: crate::outcome::reuse::Switches { project: plan.config.retry.reuse, fresh: plan.fresh_baseline },
    })
}

/// The git paths of attempt `dir`: the worktree's admin directory, the
/// real objects and the attempt's quarantine.
pub(super) fn git_paths(t: &Fixed<'_>, dir: &crate::record::AttemptDir) -> sandbox::GitPaths {
    sandbox::GitPaths {
        objects: t.repo.common_dir().join("objects"),
        admin: t.repo.worktree_meta(&t.plan.id),
        quarantine: dir.path().join("objects"),
        submodule_objects: t.repo.worktree_module_objects(&t.plan.id),
    }
}

/// A confinement of this run's processes by `policy`.
pub(super) fn confinement(
    t: &Fixed<'_>,
    tmpdir: Option<PathBuf>,
    policy: sandbox::Policy,
    git_paths: &sandbox::GitPaths,
) -> Confinement {
    confinement_of(t.repo, &t.plan, &t.wt, tmpdir, policy, git_paths)
}

/// A confinement of `plan`'s processes working in `wt` by `policy` (also
/// for the lanes' choice, which runs outside any one lane).
pub(in crate::run) fn confinement_of(
    repo: &crate::git::Repo,
    plan: &super::plan::Plan,
    wt: &std::path::Path,
    tmpdir: Option<PathBuf>,
    mut policy: sandbox::Policy,
    git_paths: &sandbox::GitPaths,
) -> Confinement {
    policy.hidden = plan.hidden.clone();
    // retry-run's own environment, as text, read once for both filters.
    let vars: Vec<(String, String)> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let quarantine = plan.confined != Effective::Off && plan.config.sandbox.git == SandboxGit::Commit;
    let mut keep = vec![repo.common_dir().to_path_buf()];
    keep.extend(repo.workdir().map(std::path::Path::to_path_buf));
    let sb = &plan.config.sandbox;
    Confinement {
        effective: plan.confined,
        abi: plan.abi,
        policy,
        tmpdir,
        exe: plan.exe.clone(),
        supervisor: sandbox::supervisor::line::supervisor_for(&plan.exe),
        found: sandbox::Found::now(),
        away: env_away(repo, wt, &vars),
        hidden: env_hidden(plan, &vars),
        extra_env: if quarantine { sandbox::quarantine_env(git_paths) } else { Vec::new() },
        keep,
        host_network: sb.network_mode == NetworkMode::Host,
        unix_sockets: sb.unix_sockets,
        limits: sandbox::Limits { processes: sb.max_processes, file_size: sb.max_file_size.bytes },
    }
}

/// `path` made empty (created with its parents).
fn fresh_dir(path: &std::path::Path) -> Result<(), RunError> {
    let _ = std::fs::remove_dir_all(path);
    std::fs::create_dir_all(path).map_err(|source| RunError::Tmpdir { path: path.to_path_buf(), source })
}

/// retry-run's own variables that point into the user's checkout, as the
/// attempt's processes get them: moved to the worktree `wt`, or dropped.
fn env_away(repo: &crate::git::Repo, wt: &std::path::Path, vars: &[(String, String)]) -> Vec<sandbox::EnvChange> {
    let Some(checkout) = repo.workdir() else { return Vec::new() };
    let mut checkouts = vec![checkout.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(checkout)
        && real != checkout
    {
        checkouts.push(real);
    }
    sandbox::away_from_checkout(vars, &checkouts, wt, &|p| p.exists())
}

/// retry-run's own variables that look like credentials, but for those
/// `agent.env_pass` and the preset name.
fn env_hidden(plan: &super::plan::Plan, vars: &[(String, String)]) -> Vec<String> {
    let mut pass = plan.config.agent.env_pass.clone();
    if let Some(p) = &plan.preset {
        pass.extend(p.env_pass.iter().cloned());
    }
    sandbox::credentials(vars, &pass)
}
