//! The retry context and the prompt: assembled from the record of the
//! earlier attempts, written with the attempt's manifest, and recorded.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::task_run::{Attempt, TaskRun};
use super::{RunError, history, plan};
use crate::config::Config;
use crate::context::{self, TaskText, render::render};
use crate::git::Repo;
use crate::hash::sha256_hex;
use crate::outcome::resume;
use crate::record::event::ContextCut;
use crate::record::manifest::{Manifest, canonical_json};
use crate::record::store::write_file;
use crate::record::{Event, Store};

impl TaskRun<'_> {
    /// The prompt of attempt `a`, with its context and manifest, in the
    /// attempt's directory. Returns the prompt's path.
    pub(super) fn assemble_prompt(&mut self, a: &Attempt) -> Result<PathBuf, RunError> {
        self.progress.phase("assembling the context");
        let (n, config) = (a.n, &self.plan.config);
        let ctx = context::assemble(&self.task_text, n, self.last_allowed, &self.prior, &config.context);
        let mut rendered = render(&ctx, &config.context);
        let mounted: Vec<String> = self
            .shared_mounts()
            .iter()
            .filter_map(|(_, at)| at.strip_prefix(&self.wt).ok().map(|p| p.display().to_string()))
            .collect();
        rendered.prompt.push_str(&super::share::prompt_note(&mounted));
        if let Some(l) = &self.plan.lane {
            rendered.prompt.push_str(&l.shared.feedback_for(l.lane));
        }
        if self.mcp_wiring().is_some() {
            rendered.prompt.push_str(&context::self_check::prompt_note(config.agent.max_self_checks));
        }
        let ctx_json = serde_json::to_value(&ctx).unwrap_or(Value::Null);
        let ctx_bytes = serde_json::to_vec_pretty(&ctx_json).unwrap_or_default();
        write_file(&a.dir.context_json(), &ctx_bytes)?;
        let prompt_path = a.dir.prompt();
        write_file(&prompt_path, rendered.prompt.as_bytes())?;
        self.rec.event(
            Some(n),
            Event::RetryContextAssembled {
                prior_attempts: self.prior.len() as u64,
                sources: ctx.sources(),
                bytes: rendered.prompt.len() as u64,
                required_change: ctx.previous.as_ref().map(|p| p.required_change.text.clone()),
            },
        )?;
        if !rendered.cuts.is_empty() {
            self.rec.event(
                Some(n),
                Event::AttemptContextTruncated {
                    budget_bytes: rendered.budget_bytes as u64,
                    before: rendered.before as u64,
                    after: rendered.after as u64,
                    cuts: rendered
                        .cuts
                        .iter()
                        .map(|c| ContextCut { section: c.section.clone(), lines: c.lines as u64, why: c.why.clone() })
                        .collect(),
                },
            )?;
        }
        let context_sha = sha256_hex(canonical_json(&ctx_json).as_bytes());
        let prompt_sha = sha256_hex(rendered.prompt.as_bytes());
        let manifest = Manifest {
            task: self.plan.id.clone(),
            attempt: n,
            base: self.base.oid.to_string(),
            config: manifest_config(config),
            context_sha256: context_sha.clone(),
            prompt_sha256: prompt_sha.clone(),
            prior_manifests: self.manifests.clone(),
        };
        let (manifest_json, manifest_sha) = manifest.canonical();
        write_file(&a.dir.manifest(), manifest_json.as_bytes())?;
        self.manifests.push(manifest_sha.clone());
        self.rec.event(
            Some(n),
            Event::AttemptContextAssembled {
                manifest_sha256: manifest_sha,
                prompt_sha256: prompt_sha,
                context_sha256: context_sha,
            },
        )?;
        Ok(prompt_path)
    }
}

/// The config that shapes an attempt, for its manifest.
fn manifest_config(c: &Config) -> Value {
    json!({
        "agent": c.agent, "checks": c.checks, "scope": c.scope, "context": c.context,
        "retry": c.retry, "verifier": c.verifier, "max_attempts": c.max_attempts, "targets": c.targets,
        "worktree": {"include": c.worktree.include, "setup": c.worktree.setup},
    })
}

/// What the next attempt of a task would receive, from the record alone:
/// the context and its rendered prompt (`retry-run context`).
pub fn next_context(
    repo: &Repo,
    store: &Store,
    id: &str,
    config_path: Option<&Path>,
) -> Result<(context::Context, context::render::Rendered), RunError> {
    let verified = store.read(id)?;
    let task = plan::recorded_task(store, id)?;
    let config = plan::effective_config(repo, config_path, &task.overrides)?;
    let state = history::state(&verified.events);
    let mut prior = history::attempts(store, id, &verified.events);
    if let Some(n) = state.unfinished {
        // The next run records it as interrupted first; show what it will see.
        prior.push(history::interrupted(&verified.events, n));
    }
    let window = resume::window(super::start::so_far(&state), false, config.max_attempts.0);
    let text = TaskText { id: id.to_string(), title: task.title.clone(), text: task.text.clone() };
    let ctx = context::assemble(&text, window.next, window.last.max(window.next), &prior, &config.context);
    let rendered = render(&ctx, &config.context);
    Ok((ctx, rendered))
}
