//! The verifier (docs/config.md, `[verifier]`): the diff summary on stdin, a JSON verdict
//! on stdout. A call that fails, times out, prints no valid verdict or
//! answers `retry` has not judged the attempt: it is repeated with backoff
//! up to `retries` times.

use std::path::Path;
use std::time::Duration;

use crate::config::VerifierConfig;
use crate::model::VerifierResult;
use crate::process::{self, Spec};
use crate::verdict::{self, Kind};

/// The first wait between calls; doubled after each failed call.
const BACKOFF: Duration = Duration::from_millis(250);

/// Calls the verifier until it answers or the retries run out. Each call's
/// output is written to `out_dir/verifier-<i>.out`.
pub fn verify(
    cfg: &VerifierConfig,
    worktree: &Path,
    env: &[(String, String)],
    diff_summary: &str,
    out_dir: &Path,
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
        spec.env = env.to_vec();
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
        let _ = crate::record::store::write_file(&out_dir.join(format!("verifier-{call}.out")), &bytes);
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
