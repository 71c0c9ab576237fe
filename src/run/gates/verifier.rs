//! The verifier (docs/config.md, `[verifier]`): the diff summary on stdin, a
//! JSON verdict on stdout. A call that fails, times out, prints no valid
//! verdict or answers `retry` has not judged the attempt: it is repeated with
//! backoff up to `retries` times.

use std::path::Path;
use std::time::Duration;

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::confine::confinement_of;
use super::super::lanes::choose::{LaneCandidate, Winner};
use super::super::plan::Plan;
use super::super::recorder::Recorder;
use crate::format::diff_output::{DiffFormat, write as write_diff};
use crate::git::{Comparison, DiffDepth, Repo, Revision};
use crate::model::DiffSummary;
use crate::record::layout::AttemptDir;
use crate::record::{Event, Store};
use crate::sandbox::{self, Confinement};

use crate::config::VerifierConfig;
use crate::judge::verdict::{self, Kind};
use crate::model::VerifierResult;
use crate::process::{self, Spec};

/// Patch lines sent to the verifier.
pub(in crate::run) const VERIFIER_DIFF_LINES: usize = 500;

/// The first wait between calls; doubled after each failed call.
const BACKOFF: Duration = Duration::from_millis(250);

/// Calls the verifier until it answers or the retries run out. Each call's
/// output is written to the attempt's `verifier-<i>.out`.
pub(crate) fn verify(
    cfg: &VerifierConfig,
    worktree: &Path,
    env: &[(String, String)],
    confinement: &Confinement,
    diff_summary: &str,
    out_dir: &AttemptDir,
) -> VerifierResult {
    let mut result = VerifierResult { min_confidence: cfg.min_confidence.0, ..VerifierResult::default() };
    let mut wait = BACKOFF;
    for call in 1..=cfg.retries + 1 {
        result.calls = call;
        if call > 1 {
            std::thread::sleep(wait);
            wait *= 2;
        }
        let mut spec = Spec::shell(&cfg.run, worktree, cfg.timeout.value);
        spec.argv = confinement.argv(spec.argv, Some(&out_dir.path().join(format!("verifier-{call}.network.jsonl"))));
        spec.env = env.to_vec();
        spec.unset = confinement.unset();
        spec.stdin = Some(diff_summary.as_bytes().to_vec());
        spec.grace = Duration::from_secs(2);
        let finished = match process::run(&spec) {
            Ok(f) => f,
            Err(e) => {
                result.problems.push(format!("call {call}: {e}"));
                continue;
            }
        };
        let bytes = finished.output.bytes();
        let _ = crate::record::store::write_file(&out_dir.verifier_out(call), &bytes);
        if finished.interrupted {
            // retry-run is stopping: no further call.
            result.problems.push(format!("call {call}: stopped, retry-run was interrupted"));
            break;
        }
        if finished.timed_out {
            result.problems.push(format!("call {call}: timed out after {}", cfg.timeout.text));
            continue;
        }
        if finished.exit_code != Some(0) {
            result
                .problems
                .push(format!("call {call}: {}", crate::text::exit_text(finished.exit_code, finished.signal)));
            continue;
        }
        match verdict::parse(&String::from_utf8_lossy(&bytes)) {
            Ok(v) if v.kind == Kind::Retry => {
                result.problems.push(format!("call {call}: the verifier answered retry (it could not judge)"));
            }
            Ok(v) => {
                result.answered = true;
                result.verdict = Some(v.kind.as_str().to_string());
                result.confidence = Some(v.confidence);
                result.required_change = v.required_change;
                result.critique = v.critique;
                return result;
            }
            Err(e) => result.problems.push(format!("call {call}: {e}")),
        }
    }
    result
}

/// The verifier, when one is configured and every check passed: the
/// diff summary (and any test-integrity warnings) on its stdin, its
/// verdict recorded into `a.record.verifier`.
pub(in crate::run) fn review(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &mut Attempt,
    cmp: &Comparison<'_>,
) -> Result<(), RunError> {
    let Some(vcfg) = &t.plan.config.verifier else { return Ok(()) };
    if !a.record.checks.iter().all(|c| c.passed) {
        return Ok(());
    }
    t.progress.phase("verifier");
    let summary = DiffSummary::from(cmp);
    let mut md = Vec::new();
    let _ = write_diff(&mut md, DiffFormat::Markdown, &summary, VERIFIER_DIFF_LINES);
    // What the verifier should weigh that no gate failed on.
    let warnings: Vec<&str> =
        a.record.checks.iter().flat_map(|c| c.warnings.iter().map(|w| w.label.as_str())).collect();
    if !warnings.is_empty() {
        use std::io::Write as _;
        let _ = writeln!(md, "\n## Test integrity warnings\n");
        for w in warnings {
            let _ = writeln!(md, "- {w}");
        }
    }
    // The verifier reads the worktree, writes none of it: code the agent
    // planted there (a module its interpreter imports) runs confined.
    let mut policy =
        sandbox::verifier_policy(a.confinement.tmpdir.as_deref().unwrap_or(a.dir.path()), &t.plan.extra_writable);
    policy.hidden = t.plan.hidden.clone();
    policy.network = vcfg.network.clone();
    let confinement = Confinement { policy, ..a.confinement.clone() };
    let v = verify(vcfg, &t.wt, &a.env, &confinement, &String::from_utf8_lossy(&md), &a.dir);
    rec.event(
        Some(a.n),
        Event::VerifierFinished {
            answered: v.answered,
            calls: v.calls,
            verdict: v.verdict.clone(),
            confidence: v.confidence,
            required_change: v.required_change.clone(),
            critique: v.critique.clone(),
            problems: v.problems.clone(),
            min_confidence: v.min_confidence,
            sandbox: Some(confinement.record()),
        },
    )?;
    t.progress.gate(&format!("verifier {}", v.verdict.as_deref().unwrap_or("no answer")));
    a.record.verifier = Some(v);
    Ok(())
}

/// The lanes' choice (`--choose all`): with a verifier and more than one
/// lane that passed every gate and its targets, the verifier is shown each
/// one's diff from `base` and picks one (`lane` and `why` in its verdict);
/// otherwise, or when it gives no valid pick, the gates' choice `best`
/// stands.
pub(in crate::run) fn pick_lane(
    repo: &Repo,
    store: &Store,
    plan: &Plan,
    base: &Revision,
    candidates: &[LaneCandidate],
    by_gates: Winner,
) -> Result<Winner, RunError> {
    let top: Vec<&LaneCandidate> =
        candidates.iter().filter(|c| c.passed && c.targets == by_gates.candidate.targets).collect();
    let Some(cfg) = &plan.config.verifier else { return Ok(by_gates) };
    if top.len() < 2 {
        return Ok(by_gates);
    }
    let Winner { candidate: best, why } = by_gates;
    let id = &plan.id;
    let input = lanes_input(repo, id, base, &top)?;
    // Run in an empty directory of the record, confined as a verifier.
    let dir = store.task(id).choice();
    let tmp = dir.tmp();
    let _ = std::fs::remove_dir_all(dir.path());
    std::fs::create_dir_all(&tmp).map_err(|source| RunError::Tmpdir { path: tmp.clone(), source })?;
    let mut policy = sandbox::verifier_policy(&tmp, &plan.extra_writable);
    policy.network = cfg.network.clone();
    let git_paths = sandbox::GitPaths {
        objects: repo.common_dir().join("objects"),
        admin: tmp.clone(),
        quarantine: tmp.clone(),
        submodule_objects: Vec::new(),
    };
    let confinement = confinement_of(repo, plan, dir.path(), Some(tmp.clone()), policy, &git_paths);
    let mut env = vec![("RETRY_RUN_TASK".to_string(), id.clone())];
    env.extend(confinement.env());
    let v = verify(cfg, dir.path(), &env, &confinement, &input, &dir);
    let _ = std::fs::remove_dir_all(&tmp);
    let out = std::fs::read_to_string(dir.verifier_out(v.calls)).unwrap_or_default();
    let lanes: Vec<u32> = top.iter().map(|c| c.lane).collect();
    Ok(match verdict::pick(&out, &lanes) {
        Ok(verdict::Pick { lane, why: said }) => {
            let chosen = top.iter().find(|c| c.lane == lane).map_or(best, |c| (*c).clone());
            let said = if said.is_empty() { String::new() } else { format!(": {said}") };
            Winner {
                candidate: chosen,
                why: format!("the verifier's pick among {} lanes that passed every gate{said}", top.len()),
            }
        }
        Err(e) => Winner { candidate: best, why: format!("{why} (the verifier gave no pick: {e})") },
    })
}

/// What the verifier is asked to choose among: each lane's diff from `base`.
fn lanes_input(repo: &Repo, id: &str, base: &Revision, top: &[&LaneCandidate]) -> Result<String, RunError> {
    let mut input = format!(
        "# Choose one lane of task {id}\n\nEach lane below is an attempt at the same task that passed every gate. \
         Answer with your JSON verdict, adding `lane` (the number of the lane you pick) and `why`.\n"
    );
    for c in top {
        let head = repo.resolve(&c.commit)?;
        let cmp = repo.compare_commits(base, &head, DiffDepth::Patch { max_lines: VERIFIER_DIFF_LINES }, None)?;
        let mut md = Vec::new();
        let summary = DiffSummary::from(&cmp);
        let _ = write_diff(&mut md, DiffFormat::Markdown, &summary, VERIFIER_DIFF_LINES);
        input.push_str(&format!("\n## Lane {}, attempt {}\n\n{}\n", c.lane, c.attempt, String::from_utf8_lossy(&md)));
    }
    Ok(input)
}
