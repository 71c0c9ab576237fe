//! `retry-run judge-output` (hidden): judges a check's saved output exactly
//! as the `run` gate does (parsing, failure keys, the comparison with the
//! base's output, the task's targets) and prints, as JSON, the verdict and
//! how long judging took. It touches no repository; `bench/judge_verbose.py`
//! measures judging with it against the runner's own time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Deserialize;

use super::CliError;
use crate::config::CheckConfig;
use crate::model::BaselineMode;
use crate::outcome::check::{Baseline, Judging, judge};
use crate::run::gates::builtin;
use crate::run::gates::checks::{CheckExit, parse_output};

/// Judge a check's saved output as a run would, and time it (for benchmarks).
#[derive(Debug, Args)]
pub struct JudgeOutputArgs {
    /// The check's command line as configured (it decides which runner failures are read).
    #[arg(long, value_name = "COMMAND")]
    pub run: String,
    /// The check's kind: test, lint, build or custom.
    #[arg(long, value_name = "KIND", default_value = "test")]
    pub kind: String,
    /// The attempt's output of the check.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The exit status the attempt's run ended with.
    #[arg(long, value_name = "N")]
    pub exit: i32,
    /// The base's output of the check, to compare with.
    #[arg(long, value_name = "FILE")]
    pub base_output: Option<PathBuf>,
    /// The exit status the base's run ended with.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub base_exit: i32,
    /// A test the task must make pass; repeatable.
    #[arg(long = "target", value_name = "TEST")]
    pub targets: Vec<String>,
    /// Judge this many times, each timed.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = super::numbers::at_least_one)]
    pub repeat: usize,
}

pub(super) fn run(dir: &Path, args: JudgeOutputArgs) -> Result<i32, CliError> {
    let read = |p: &Path, flag: &str| {
        std::fs::read(super::absolute(p, dir))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| CliError::usage(format!("{flag} {}: {e}", p.display())))
    };
    let output = read(&args.output, "--output")?;
    let base_output = match &args.base_output {
        Some(p) => Some(read(p, "--base-output")?),
        None => None,
    };
    let mut table = toml::Table::new();
    table.insert("name".into(), "check".into());
    table.insert("run".into(), args.run.clone().into());
    table.insert("kind".into(), args.kind.clone().into());
    let check = CheckConfig::deserialize(table)
        .map_err(|e| CliError::usage(format!("--run/--kind: {e}; the kind is test, lint, build or custom")))?;
    let status =
        |code: i32| CheckExit { exit_code: Some(code), signal: None, timed_out: false, duration: Duration::ZERO };
    let no_files = |_: &str| None;
    let here = Path::new(".");
    let mut times = Vec::with_capacity(args.repeat);
    let mut last = None;
    for _ in 0..args.repeat {
        let started = Instant::now();
        let base = base_output.as_ref().map(|text| {
            let p = parse_output(&check, text, status(args.base_exit), (here, None), &no_files);
            Baseline::of(&check.name, &check.run, "base".into(), &p)
        });
        let parsed = parse_output(&check, &output, status(args.exit), (here, None), &no_files);
        let how = Judging { mode: BaselineMode::Auto, targets: &args.targets, renames: &[] };
        let result = judge(&check, &parsed, base.as_ref(), how, 1, false);
        let targets = builtin::targets(&args.targets, std::slice::from_ref(&result));
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        last = Some((result, targets));
    }
    let (result, targets) = last.expect("--repeat is at least one");
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let json = serde_json::json!({
        "judge_ms": times,
        "judge_ms_median": sorted[sorted.len() / 2],
        "output_bytes": output.len(),
        "passed": result.passed,
        "new_failures": result.failures.len(),
        "new_failure_keys": result.failures.iter().take(20).map(|f| f.key.as_str()).collect::<Vec<_>>(),
        "pre_existing_keys": result.pre_existing.iter().take(5).map(|f| f.key.as_str()).collect::<Vec<_>>(),
        "pre_existing": result.pre_existing.len(),
        "tests_ran": result.tests_ran,
        "passed_tests": result.passed_tests.len(),
        "failed_tests": result.failed_tests.len(),
        "targets_passed": targets.map(|t| t.passed),
    });
    println!("{json}");
    Ok(0)
}
