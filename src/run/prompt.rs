//! The retry context and the prompt: assembled from the record of the
//! earlier attempts, written with the attempt's manifest, and recorded.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::RunError;
use super::agent::mcp_wiring;
use super::attempt::{Attempt, Fixed};
use super::recorder::Recorder;
use super::share::shared_mounts;
use crate::config::Config;
use crate::context::{self, render::render};
use crate::hash::sha256_hex;
use crate::model::AttemptRecord;
use crate::record::Event;
use crate::record::event::ContextCut;
use crate::record::manifest::{Manifest, canonical_json};
use crate::record::store::write_file;

/// The logs of attempt `r` of task `id` that its facts cite, as its record
/// keeps them (`agent.out`, each check's output), paths made relative to
/// the worktree `wt` as the record's lines are ([`context::facts`]). A
/// log that cannot be read is not there: nothing is checked against it.
pub(super) fn logs_of(
    store: &crate::record::Store,
    id: &str,
    wt: &std::path::Path,
    r: &AttemptRecord,
) -> context::facts::Logs {
    let dir = store.attempt(id, r.number);
    let read =
        |p: PathBuf| std::fs::read(p).ok().map(|b| super::gates::checks::relativize(&String::from_utf8_lossy(&b), wt));
    context::facts::Logs {
        agent: read(dir.agent_out()),
        checks: r.checks.iter().filter_map(|c| Some((c.name.clone(), read(dir.check_out(&c.name))?))).collect(),
    }
}

/// The prompt of attempt `a`, with its context and manifest, in the
/// attempt's directory. Returns the prompt's path.
pub(super) fn assemble_prompt(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    prior: &[AttemptRecord],
    manifests: &mut Vec<String>,
    a: &Attempt,
) -> Result<PathBuf, RunError> {
    t.progress.phase("assembling the context");
    let (n, config) = (a.n, &t.plan.config);
    // A lane's prompt never leads with the task's rejection: round 0 is
    // no round.
    let round_first = if t.reviews.leads { t.first_attempt } else { 0 };
    let reviews = context::Reviews { all: &t.reviews.all, round_first };
    let logs = prior.last().map(|r| logs_of(t.store, &t.plan.id, &t.wt, r)).unwrap_or_default();
    let window = (n, t.last_allowed);
    let ctx = context::assemble_reviewed(&t.task_text, window, (prior, &logs), reviews, &config.context);
    let mut rendered = render(&ctx, &config.context);
    let mounted: Vec<String> = shared_mounts(t)
        .iter()
        .filter_map(|(_, at)| at.strip_prefix(&t.wt).ok().map(|p| p.display().to_string()))
        .collect();
    rendered.prompt.push_str(&super::share::prompt_note(&mounted));
    if let Some(l) = &t.plan.lane {
        rendered.prompt.push_str(&l.shared.feedback_for(l.lane));
    }
    if mcp_wiring(t).is_some() {
        rendered.prompt.push_str(&context::self_check::prompt_note(config.agent.max_self_checks));
    }
    let ctx_json = serde_json::to_value(&ctx).unwrap_or(Value::Null);
    let ctx_bytes = serde_json::to_vec_pretty(&ctx_json).unwrap_or_default();
    write_file(&a.dir.context_json(), &ctx_bytes)?;
    let prompt_path = a.dir.prompt();
    write_file(&prompt_path, rendered.prompt.as_bytes())?;
    rec.event(
        Some(n),
        Event::RetryContextAssembled {
            prior_attempts: prior.len() as u64,
            sources: ctx.sources(),
            bytes: rendered.prompt.len() as u64,
            required_change: ctx.required_change(),
        },
    )?;
    if !rendered.cuts.is_empty() {
        rec.event(
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
    let hashes = (sha256_hex(canonical_json(&ctx_json).as_bytes()), sha256_hex(rendered.prompt.as_bytes()));
    record_manifest(t, rec, manifests, a, hashes)?;
    Ok(prompt_path)
}

/// The attempt's manifest written (what shaped it: the task, the base, the
/// config, the hashes of its context and prompt, the manifests before it)
/// and recorded with those hashes.
fn record_manifest(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    manifests: &mut Vec<String>,
    a: &Attempt,
    (context_sha, prompt_sha): (String, String),
) -> Result<(), RunError> {
    let manifest = Manifest {
        task: t.plan.id.clone(),
        attempt: a.n,
        base: t.base.oid.to_string(),
        config: manifest_config(&t.plan.config),
        context_sha256: context_sha.clone(),
        prompt_sha256: prompt_sha.clone(),
        prior_manifests: manifests.clone(),
    };
    let crate::record::manifest::Canonical { json: manifest_json, sha256: manifest_sha } = manifest.canonical();
    write_file(&a.dir.manifest(), manifest_json.as_bytes())?;
    manifests.push(manifest_sha.clone());
    rec.event(
        Some(a.n),
        Event::AttemptContextAssembled {
            manifest_sha256: manifest_sha,
            prompt_sha256: prompt_sha,
            context_sha256: context_sha,
        },
    )?;
    Ok(())
}

/// The config that shapes an attempt, for its manifest.
fn manifest_config(c: &Config) -> Value {
    json!({
        "agent": c.agent, "checks": c.checks, "scope": c.scope, "context": c.context,
        "retry": c.retry, "verifier": c.verifier, "max_attempts": c.max_attempts, "targets": c.targets,
        "worktree": {"include": c.worktree.include, "setup": c.worktree.setup},
    })
}
