//! The attempt's confinement: its private TMPDIR (made afresh unless the
//! sandbox is off) and what its agent and checks may write.

use std::time::Instant;

use super::RunError;
use super::task_run::{Attempt, TaskRun};
use crate::model::AttemptRecord;
use crate::sandbox::{self, Confinement, Effective};

impl TaskRun<'_> {
    /// Attempt `n`, confined: its directory in the record, its TMPDIR and
    /// its sandbox policy.
    pub(super) fn confine(&self, n: u32, started: Instant) -> Result<Attempt, RunError> {
        let (plan, repo) = (&self.plan, self.repo);
        let dir = self.store.attempt(&plan.id, n);
        let tmpdir = (plan.confined != Effective::Off).then(|| dir.tmp());
        if let Some(t) = &tmpdir {
            let _ = std::fs::remove_dir_all(t);
            std::fs::create_dir_all(t).map_err(|source| RunError::Tmpdir { path: t.clone(), source })?;
        }
        let git_paths =
            sandbox::GitPaths { objects: repo.common_dir().join("objects"), admin: repo.worktree_meta(&plan.id) };
        let mut policy = sandbox::policy(
            &self.wt,
            tmpdir.as_deref().unwrap_or(dir.path()),
            plan.config.sandbox.git,
            &git_paths,
            &plan.extra_writable,
        );
        policy.hidden = plan.hidden.clone();
        // retry-run's own environment, as text, read once for both filters.
        let vars: Vec<(String, String)> =
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
        let confinement = Confinement {
            effective: plan.confined,
            abi: plan.abi,
            policy,
            tmpdir,
            exe: plan.exe.clone(),
            away: self.env_away(&vars),
            hidden: self.env_hidden(&vars),
        };
        let mut record = AttemptRecord::new(n);
        record.allow = plan.config.scope.allow.clone();
        Ok(Attempt { n, dir, started, record, confinement, env: Vec::new(), commit: None })
    }
}

impl TaskRun<'_> {
    /// retry-run's own variables that point into the user's checkout, as
    /// the attempt's processes get them: moved to the worktree, or dropped.
    fn env_away(&self, vars: &[(String, String)]) -> Vec<sandbox::EnvChange> {
        let Some(checkout) = self.repo.workdir() else { return Vec::new() };
        let mut checkouts = vec![checkout.to_path_buf()];
        if let Ok(real) = std::fs::canonicalize(checkout)
            && real != checkout
        {
            checkouts.push(real);
        }
        sandbox::away_from_checkout(vars, &checkouts, &self.wt, &|p| p.exists())
    }

    /// retry-run's own variables that look like credentials, but for those
    /// `agent.env_pass` and the preset name.
    fn env_hidden(&self, vars: &[(String, String)]) -> Vec<String> {
        let mut pass = self.plan.config.agent.env_pass.clone();
        if let Some(p) = &self.plan.preset {
            pass.extend(p.env_pass.iter().cloned());
        }
        sandbox::credentials(vars, &pass)
    }
}
