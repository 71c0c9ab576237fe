//! `retry-run.toml`: the whole schema of docs/config.md, parsed into
//! typed values with every default filled in.
//!
//! Pure: [`Config::parse`] reads the text, the caller reads the file. An
//! unknown key, a wrong type or an out-of-range value is a [`ConfigError`]
//! that names the file, line and column. The types that records share
//! ([`CheckKind`], [`RetryOn`], [`BaselineMode`]) live in `model`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::model::{BaselineMode, CheckKind, RetryOn};

mod command;

pub use command::{CommandSpec, PresetName};
// `[sandbox] mode` and `git`: the sandbox's own types, read from the file.
pub use crate::sandbox::{SandboxGit, SandboxMode};

/// The file name looked for at the repository root.
pub const FILE_NAME: &str = "retry-run.toml";

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The ref attempts start from; `None`: the default branch.
    pub base: Option<String>,
    pub max_attempts: MaxAttempts,
    pub worktree: WorktreeConfig,
    pub agent: AgentConfig,
    pub retry: RetryConfig,
    pub scope: ScopeConfig,
    #[serde(rename = "check")]
    pub checks: Vec<CheckConfig>,
    pub verifier: Option<VerifierConfig>,
    pub context: ContextConfig,
    pub sandbox: SandboxConfig,
    /// Tests that must pass for an attempt to succeed, whatever the
    /// baseline mode (ids as the runner prints them). Usually set in a
    /// task's front matter.
    pub targets: Vec<String>,
    /// `[[lane]]`: each lane's agent, when lanes use several.
    #[serde(rename = "lane")]
    pub lanes: Vec<lanes::LaneConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            base: None,
            max_attempts: MaxAttempts(3),
            worktree: WorktreeConfig::default(),
            agent: AgentConfig::default(),
            retry: RetryConfig::default(),
            scope: ScopeConfig::default(),
            checks: Vec::new(),
            verifier: None,
            context: ContextConfig::default(),
            sandbox: SandboxConfig::default(),
            targets: Vec::new(),
            lanes: Vec::new(),
        }
    }
}

/// `max_attempts`: at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MaxAttempts(pub u32);

impl<'de> Deserialize<'de> for MaxAttempts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        count(d, &numbers::MAX_ATTEMPTS).map(|n| MaxAttempts(n as u32))
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorktreeConfig {
    /// Where task worktrees live; empty: `<git-common-dir>/retry-run/worktrees`.
    pub root: String,
    /// Ignored files copied from the user's checkout into each fresh worktree.
    pub include: Vec<String>,
    /// A command run in the worktree after each reset, before the agent,
    /// confined like the agent's checks.
    pub setup: Option<String>,
    /// The hosts `setup` may reach through the sandbox's proxy (default:
    /// the package registries a setup usually installs from).
    pub setup_network: Vec<String>,
    /// Run `setup` unconfined (recorded and reported): for a setup that
    /// truly needs more than the sandbox gives.
    pub setup_unconfined: bool,
    /// Which ended tasks keep their worktree (docs/worktrees.md).
    pub keep: KeepWorktrees,
    /// The most disk all of retry-run's worktrees of the repository may
    /// take; the worktrees of ended tasks go first when a new one would
    /// pass it.
    pub max_disk: SizeSpec,
    /// Ignored directories of the checkout (`node_modules`, `.venv`)
    /// copied into each task's worktree once, kept across its attempts.
    pub share: Vec<String>,
}

/// Which ended tasks keep their worktree: the record and the attempts'
/// commits hold what a user needs of the others, and `worktree create
/// TASK --attempt N` brings any attempt back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepWorktrees {
    /// No ended task keeps one (the default).
    #[default]
    None,
    /// Escalated tasks keep theirs, for a look at what failed.
    Failed,
    /// Every ended task keeps its worktree (until `clean`).
    All,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// A built-in preset (`claude-code`, `codex`, `aider`, `gemini`, `opencode`).
    pub preset: Option<PresetName>,
    /// Appended to the preset's command line (the model is the user's choice).
    pub args: Vec<String>,
    /// The agent's leftovers: globs of files it leaves in the worktree that
    /// are not part of the change (`ignore` is read as this key too, so
    /// configs that use that name keep working).
    #[serde(alias = "ignore")]
    pub leftovers: Vec<String>,
    /// Variables that look like credentials (`*_TOKEN`, `AWS_*`, ...) and
    /// that the agent and the checks get all the same.
    pub env_pass: Vec<String>,
    pub command: Option<CommandSpec>,
    pub stdin: bool,
    #[serde(deserialize_with = "nonzero_duration")]
    pub timeout: DurationSpec,
    #[serde(deserialize_with = "any_duration")]
    pub kill_grace: DurationSpec,
    pub reset: ResetMode,
    /// The self-check MCP server (`retry-run mcp`, docs/mcp.md) offered to
    /// the agent: its command in `RETRY_RUN_MCP_COMMAND`, and wired into a
    /// preset's agent that speaks MCP.
    pub mcp: bool,
    /// `run_checks` calls an attempt may make (0: the tool refuses every call).
    #[serde(deserialize_with = "numbers::max_self_checks")]
    pub max_self_checks: u32,
    /// Runs of the agent again, within one attempt, after its model
    /// provider failed it transiently (a rate limit, an overload, a server
    /// error, a dropped connection); past them the run stops, exit 3.
    #[serde(deserialize_with = "numbers::transient_retries")]
    pub transient_retries: u32,
    /// The wait before the first run again, doubled for each after it; a
    /// `Retry-After` the proxy saw is waited instead.
    #[serde(deserialize_with = "any_duration")]
    pub transient_wait: DurationSpec,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            preset: None,
            args: Vec::new(),
            leftovers: Vec::new(),
            env_pass: Vec::new(),
            command: None,
            stdin: false,
            timeout: DurationSpec::secs(20 * 60),
            kill_grace: DurationSpec::secs(5),
            reset: ResetMode::Always,
            mcp: true,
            max_self_checks: 5,
            transient_retries: 3,
            transient_wait: DurationSpec::secs(30),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResetMode {
    /// Every attempt starts at the base.
    Always,
    /// Attempt n+1 starts from attempt n's tree.
    Keep,
}

/// A duration written as `90s`, `5m`, `1h`, `500ms` or a sum like `1h30m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationSpec {
    pub text: String,
    pub value: Duration,
}

impl DurationSpec {
    pub fn secs(s: u64) -> Self {
        let text = if s.is_multiple_of(3600) && s > 0 {
            format!("{}h", s / 3600)
        } else if s.is_multiple_of(60) && s > 0 {
            format!("{}m", s / 60)
        } else {
            format!("{s}s")
        };
        DurationSpec { text, value: Duration::from_secs(s) }
    }

    /// Parses `90s`, `5m`, `1h`, `250ms`, `1h30m`, `7d`.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(ValueError::Duration("empty duration: write it like 90s, 5m or 1h".into()));
        }
        let mut total = Duration::ZERO;
        let mut rest = t;
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            if digits == 0 {
                return Err(ValueError::Duration(format!("invalid duration {text:?}: write it like 90s, 5m or 1h")));
            }
            let n: u64 = rest[..digits]
                .parse()
                .map_err(|_| ValueError::Duration(format!("invalid duration {text:?}: number too large")))?;
            rest = &rest[digits..];
            let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
            let unit = &rest[..unit_len];
            rest = &rest[unit_len..];
            let part = match unit {
                "ms" => Duration::from_millis(n),
                "s" => Duration::from_secs(n),
                "m" => Duration::from_secs(n.saturating_mul(60)),
                "h" => Duration::from_secs(n.saturating_mul(3600)),
                "d" => Duration::from_secs(n.saturating_mul(86_400)),
                "" => {
                    return Err(ValueError::Duration(format!(
                        "duration {text:?} has no unit: write it like {n}s, {n}m or {n}h"
                    )));
                }
                other => {
                    return Err(ValueError::Duration(format!(
                        "duration {text:?} has an unknown unit {other:?}: use ms, s, m, h or d"
                    )));
                }
            };
            total = total.saturating_add(part);
        }
        if total > DurationSpec::LONGEST {
            return Err(ValueError::Duration(format!(
                "duration {text:?} is longer than a year (8760h): write a shorter one"
            )));
        }
        Ok(DurationSpec { text: t.to_string(), value: total })
    }

    /// The longest duration accepted anywhere: a year.
    pub const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);
}

/// A size written as `20GiB`, `512MiB`, `10GB` or a number of bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeSpec {
    pub text: String,
    pub bytes: u64,
}

impl SizeSpec {
    /// Parses `20GiB`, `1.5GB`, `512MiB`, `100k`, `4096` (bytes).
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = (&t[..split], t[split..].trim());
        let n: f64 = num
            .parse()
            .map_err(|_| ValueError::Size(format!("invalid size {text:?}: write it like 20GiB, 512MiB or 10GB")))?;
        let scale: u64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1000,
            "kib" => 1 << 10,
            "m" | "mb" => 1000 * 1000,
            "mib" => 1 << 20,
            "g" | "gb" => 1000 * 1000 * 1000,
            "gib" => 1 << 30,
            "t" | "tb" => 1000 * 1000 * 1000 * 1000,
            "tib" => 1 << 40,
            _ => {
                return Err(ValueError::Size(format!(
                    "invalid size {text:?}: unknown unit {unit:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
                )));
            }
        };
        let bytes = n * scale as f64;
        if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
            return Err(ValueError::Size(format!("invalid size {text:?}: it must be at least one byte")));
        }
        Ok(SizeSpec { text: t.to_string(), bytes: bytes as u64 })
    }

    pub fn gib(n: u64) -> Self {
        SizeSpec { text: format!("{n}GiB"), bytes: n << 30 }
    }
}

/// A value of the config or of the command line that is not in its form
/// or out of its range; the message names the key or flag and what to
/// write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{0}")]
    Duration(String),
    #[error("{0}")]
    Size(String),
    #[error("{0}")]
    OutOfRange(String),
}

impl ValueError {
    /// The message, to build another with more context.
    pub fn message(&self) -> &str {
        match self {
            ValueError::Duration(m) | ValueError::Size(m) | ValueError::OutOfRange(m) => m,
        }
    }
}

/// The most a task may cost, in US dollars: more is a typing mistake.
pub const MAX_COST_USD: f64 = 1_000_000.0;

/// A cost in US dollars: a finite number above zero, at most
/// [`MAX_COST_USD`] (`retry.max_cost_usd`, `run --max-cost`).
pub fn check_cost(name: &str, v: f64) -> Result<f64, ValueError> {
    if v.is_nan() || v.is_infinite() {
        return Err(ValueError::OutOfRange(format!("{name} must be a number of US dollars, not {v}")));
    }
    if v <= 0.0 {
        return Err(ValueError::OutOfRange(format!(
            "{name} must be more than 0 US dollars, not {v}; leave it out for no limit"
        )));
    }
    if v > MAX_COST_USD {
        return Err(ValueError::OutOfRange(format!("{name} must be at most {MAX_COST_USD} US dollars, not {v}")));
    }
    Ok(v)
}

/// A duration of more than zero (`agent.timeout`, a check's `timeout`,
/// `retry.max_duration`, `run --max-duration`).
pub fn check_nonzero_duration(name: &str, text: &str) -> Result<DurationSpec, ValueError> {
    let d = DurationSpec::parse(text)?;
    if d.value.is_zero() {
        return Err(ValueError::Duration(format!(
            "{name} must be longer than 0, not {text:?}; write it like 90s, 5m or 1h"
        )));
    }
    Ok(d)
}

/// A whole number of the config in its range, with what it means.
#[derive(Debug, Clone, Copy)]
pub struct Count {
    pub key: &'static str,
    pub min: u64,
    pub max: u64,
    /// Why zero is refused, when `min` is 1 (what to write instead).
    pub instead_of_zero: &'static str,
}

impl Count {
    /// `v` checked against the range, with a message naming the key.
    pub fn check(&self, v: i64) -> Result<u64, ValueError> {
        if v == 0 && self.min > 0 && !self.instead_of_zero.is_empty() {
            return Err(ValueError::OutOfRange(format!(
                "{} must be at least {}, not 0: {}",
                self.key, self.min, self.instead_of_zero
            )));
        }
        match u64::try_from(v) {
            Ok(n) if (self.min..=self.max).contains(&n) => Ok(n),
            _ => Err(ValueError::OutOfRange(format!(
                "{} must be a whole number from {} to {}, not {v}",
                self.key, self.min, self.max
            ))),
        }
    }
}

pub(crate) mod lanes;

/// Every whole number of the schema, its range and a deserializer each.
pub mod numbers {
    use super::{Count, Deserializer, count};

    pub const MAX_ATTEMPTS: Count =
        Count { key: "max_attempts", min: 1, max: 1000, instead_of_zero: "a task needs one attempt at least" };
    pub const FLAKY_RERUNS: Count = Count { key: "retry.flaky_reruns", min: 0, max: 100, instead_of_zero: "" };
    pub const MAX_SELF_CHECKS: Count = Count { key: "agent.max_self_checks", min: 0, max: 1000, instead_of_zero: "" };
    pub const TRANSIENT_RETRIES: Count =
        Count { key: "agent.transient_retries", min: 0, max: 100, instead_of_zero: "" };
    pub const LANES: Count = Count {
        key: "retry.lanes",
        min: 1,
        max: super::lanes::MAX_LANES as u64,
        instead_of_zero: "1 runs the task without lanes",
    };
    pub const JOBS: Count = Count {
        key: "retry.jobs",
        min: 1,
        max: 1024,
        instead_of_zero: "leave it out to run as many checks at once as the machine has cores",
    };
    /// 0: no limit.
    pub const MAX_PROCESSES: Count =
        Count { key: "sandbox.max_processes", min: 0, max: 4_194_304, instead_of_zero: "" };
    pub const VERIFIER_RETRIES: Count = Count { key: "verifier.retries", min: 0, max: 100, instead_of_zero: "" };
    pub const MAX_PRIOR_ATTEMPTS: Count =
        Count { key: "context.max_prior_attempts", min: 0, max: 1000, instead_of_zero: "" };
    pub const MAX_DIFF_LINES: Count = Count {
        key: "context.max_diff_lines",
        min: 1,
        max: 1_000_000,
        instead_of_zero: "to leave diffs out, set include_prior_diffs = false",
    };
    pub const MAX_CHECK_OUTPUT_LINES: Count = Count {
        key: "context.max_check_output_lines",
        min: 1,
        max: 1_000_000,
        instead_of_zero: "to leave check output out, set include_check_output = false",
    };
    pub const MAX_VERIFIER_FEEDBACK_CHARS: Count = Count {
        key: "context.max_verifier_feedback_chars",
        min: 1,
        max: 10_000_000,
        instead_of_zero: "to leave the verifier's feedback out, set include_verifier_feedback = false",
    };
    pub const MAX_TOKENS: Count = Count {
        key: "context.max_tokens",
        min: 1,
        max: 10_000_000,
        instead_of_zero: "the retry context needs room for the task at least",
    };
    pub const MAX_AGENT_NOTES_CHARS: Count = Count {
        key: "context.max_agent_notes_chars",
        min: 1,
        max: 10_000_000,
        instead_of_zero: "to leave the agent's notes out, set include_agent_notes = false",
    };

    macro_rules! deserializers {
        ($($name:ident: $ty:ty = $count:ident;)*) => {$(
            pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                count(d, &$count).map(|n| n as $ty)
            }
        )*};
    }
    /// `retry.jobs`, set.
    pub fn jobs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        count(d, &JOBS).map(|n| Some(n as u32))
    }

    deserializers! {
        flaky_reruns: u32 = FLAKY_RERUNS;
        max_self_checks: u32 = MAX_SELF_CHECKS;
        transient_retries: u32 = TRANSIENT_RETRIES;
        lanes: u32 = LANES;
        max_processes: u64 = MAX_PROCESSES;
        verifier_retries: u32 = VERIFIER_RETRIES;
        max_prior_attempts: u32 = MAX_PRIOR_ATTEMPTS;
        max_diff_lines: u32 = MAX_DIFF_LINES;
        max_check_output_lines: u32 = MAX_CHECK_OUTPUT_LINES;
        max_verifier_feedback_chars: u32 = MAX_VERIFIER_FEEDBACK_CHARS;
        max_tokens: u32 = MAX_TOKENS;
        max_agent_notes_chars: u32 = MAX_AGENT_NOTES_CHARS;
    }
}

/// A whole number in `c`'s range; a float, a string or a number out of
/// range is refused in words.
fn count<'de, D: Deserializer<'de>>(d: D, c: &Count) -> Result<u64, D::Error> {
    struct V<'c>(&'c Count);
    impl<'de> Visitor<'de> for V<'_> {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "{} as a whole number from {} to {}", self.0.key, self.0.min, self.0.max)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            self.0.check(v).map_err(E::custom)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            self.0.check(i64::try_from(v).unwrap_or(i64::MAX)).map_err(E::custom)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            Err(E::custom(format!(
                "{} must be a whole number from {} to {}, not {v}",
                self.0.key, self.0.min, self.0.max
            )))
        }
    }
    d.deserialize_any(V(c))
}

/// A number from 0.0 to 1.0 (`min_confidence`, `drift_threshold`).
fn fraction(key: &str, v: f64) -> Result<f64, ValueError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange(format!("{key} must be a number from 0.0 to 1.0, not {v}")))
    }
}

/// A number, integer or float; other types are refused in words.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
    }
    d.deserialize_any(V)
}

fn drift_threshold<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    fraction("context.drift_threshold", number(d)?).map_err(de::Error::custom)
}

fn some_cost<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    check_cost("retry.max_cost_usd", number(d)?).map(Some).map_err(de::Error::custom)
}

fn nonzero_duration<'de, D: Deserializer<'de>>(d: D) -> Result<DurationSpec, D::Error> {
    check_nonzero_duration("the timeout", &String::deserialize(d)?).map_err(de::Error::custom)
}

fn any_duration<'de, D: Deserializer<'de>>(d: D) -> Result<DurationSpec, D::Error> {
    DurationSpec::deserialize(d)
}

fn some_nonzero_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DurationSpec>, D::Error> {
    check_nonzero_duration("retry.max_duration", &String::deserialize(d)?).map(Some).map_err(de::Error::custom)
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SizeSpec::parse(&s).map_err(de::Error::custom)
    }
}

impl Serialize for SizeSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for DurationSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DurationSpec::parse(&s).map_err(de::Error::custom)
    }
}

impl Serialize for DurationSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// The outcomes retried, and whether the user wrote the list.
    pub on: RetryOnList,
    /// How many times, at most, a failing check's failing tests run again
    /// (where the runner can select them: `test_results::runners`).
    #[serde(deserialize_with = "numbers::flaky_reruns")]
    pub flaky_reruns: u32,
    pub baseline: BaselineMode,
    /// What removed, skipped or de-asserted tests do (the built-in check
    /// `test-integrity`).
    pub test_weakening: WeakeningMode,
    /// Globs naming test files; empty: the conventions of each language
    /// (`tests/`, `test_*.py`, `*_test.py`, `*_test.go`, `*.test.ts`, ...).
    pub test_paths: Vec<String>,
    /// No attempt starts once the task's recorded agent cost reaches this.
    #[serde(deserialize_with = "some_cost")]
    pub max_cost_usd: Option<f64>,
    /// No attempt starts once the task has run this long.
    #[serde(deserialize_with = "some_nonzero_duration")]
    pub max_duration: Option<DurationSpec>,
    /// Attempt chains of the task run at once (`run --lanes`).
    #[serde(deserialize_with = "numbers::lanes")]
    pub lanes: u32,
    /// Which lane wins: the first to pass every gate, or the best of all.
    pub choose: lanes::ChooseMode,
    /// A lane's next prompt also holds the other lanes' failures so far.
    pub share_feedback: bool,
    /// Whether a failing first stage of an attempt's checks (its targets
    /// alone, the lint checks) ends its checks before the full suites.
    pub fail_fast: FailFast,
    /// Checks run at once, across this process's lanes and tasks; `None`:
    /// the machine's cores.
    #[serde(deserialize_with = "numbers::jobs", skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
    /// Whether a check's earlier output on the same inputs stands for a run
    /// (`[[check]] reuse` says so for one check).
    pub reuse: bool,
}

/// `retry.on`: the outcomes retried, and whether the user wrote them
/// (`explicit`) or they are the default. A timeout that repeats another
/// stops the task unless the user's own list keeps it
/// ([`crate::outcome::repeated_timeout`]). Read and written as the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOnList {
    pub kinds: Vec<RetryOn>,
    pub explicit: bool,
}

impl RetryOnList {
    /// Whether the user's own `retry.on` lists `timeout`.
    pub fn keeps_timeouts(&self) -> bool {
        self.explicit && self.kinds.contains(&RetryOn::Timeout)
    }
}

impl Default for RetryOnList {
    fn default() -> Self {
        RetryOnList {
            kinds: vec![
                RetryOn::CheckFailure,
                RetryOn::ScopeViolation,
                RetryOn::VerifierRejection,
                RetryOn::EmptyDiff,
                RetryOn::Crash,
                RetryOn::Timeout,
            ],
            explicit: false,
        }
    }
}

impl std::ops::Deref for RetryOnList {
    type Target = [RetryOn];
    fn deref(&self) -> &[RetryOn] {
        &self.kinds
    }
}

impl Serialize for RetryOnList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.kinds.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RetryOnList {
    /// A list read is the user's: it is there only when written.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RetryOnList { kinds: Vec::deserialize(d)?, explicit: true })
    }
}

/// `retry.fail_fast`: whether an attempt's checks stop at the first
/// failing stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailFast {
    /// The task's targets alone and the lint checks run first; a failure
    /// there ends the attempt's checks, the full suites not run.
    #[default]
    Targets,
    /// Every check runs to its end.
    None,
}

impl Default for WorktreeConfig {
    fn default() -> Self {
        WorktreeConfig {
            root: String::new(),
            include: Vec::new(),
            setup: None,
            setup_network: REGISTRIES.iter().map(|h| h.to_string()).collect(),
            setup_unconfined: false,
            keep: KeepWorktrees::None,
            max_disk: SizeSpec::gib(10),
            share: Vec::new(),
        }
    }
}

/// The package registries a `worktree.setup` may reach by default: PyPI,
/// npm, crates.io and Go's module proxy.
pub const REGISTRIES: [&str; 7] = [
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "crates.io",
    "static.crates.io",
    "index.crates.io",
    "proxy.golang.org",
];

/// `[sandbox]`: how the agent and its checks are contained.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    pub mode: SandboxMode,
    /// The hosts (`host`, `host:port`, `*.domain`) the agent may reach
    /// through retry-run's proxy, beside its preset's model API hosts.
    pub network: Vec<String>,
    /// `proxy`: no network but the allowed hosts; `host`: the machine's
    /// network, unconfined (a warning says so).
    pub network_mode: NetworkMode,
    /// Processes a confined command may run at once.
    #[serde(deserialize_with = "numbers::max_processes")]
    pub max_processes: u64,
    /// The largest file a confined command may write (`20GiB`).
    pub max_file_size: SizeSpec,
    /// Let confined commands use named UNIX sockets (off: none can be
    /// created, so no socket outside the sandbox is reachable).
    pub unix_sockets: bool,
    /// More paths the agent and checks may write (`~` expanded, relative
    /// paths from the repository root).
    pub writable: Vec<String>,
    pub git: SandboxGit,
    /// More paths the agent and checks may not read (added to the secrets
    /// always hidden: `~/.ssh`, `~/.aws`, ...).
    pub deny_read: Vec<String>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: SandboxMode::Auto,
            network: Vec::new(),
            network_mode: NetworkMode::Proxy,
            max_processes: 4096,
            max_file_size: SizeSpec::gib(20),
            unix_sockets: false,
            writable: Vec::new(),
            git: SandboxGit::Commit,
            deny_read: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    #[default]
    Proxy,
    Host,
}

/// What the built-in check `test-integrity` does with its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WeakeningMode {
    /// A finding fails the attempt (CHECK_FAILURE of `test-integrity`).
    #[default]
    Fail,
    /// Findings are recorded and reported, the attempt is not failed.
    Warn,
    /// The check does not run.
    Off,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            on: RetryOnList::default(),
            flaky_reruns: 1,
            baseline: BaselineMode::Auto,
            test_weakening: WeakeningMode::Fail,
            test_paths: Vec::new(),
            max_cost_usd: None,
            max_duration: None,
            lanes: 1,
            choose: lanes::ChooseMode::First,
            share_feedback: false,
            fail_fast: FailFast::Targets,
            jobs: None,
            reuse: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopeConfig {
    /// Globs a change may write; empty allows everything.
    pub allow: Vec<String>,
    /// Globs a change may never write; deny wins over allow.
    pub deny: Vec<String>,
    /// Whether an attempt may change a submodule (move its pointer).
    pub submodules: SubmodulePolicy,
    /// What a change writing a file that acts once it lands (CI, git
    /// attributes, editor tasks, `.envrc`, ...) does to the attempt:
    /// `fail`, `flag` or `off` (`scope::landing`).
    pub acts_after_land: crate::model::LandGate,
}

/// `[scope] submodules`: what an attempt may do to a submodule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SubmodulePolicy {
    /// Any change to a submodule (a moved pointer, uncommitted changes
    /// inside it) is a `submodule` violation, whatever the globs say.
    #[default]
    Deny,
    /// A moved pointer is a change of the submodule's path, judged by the
    /// globs; uncommitted changes inside a submodule stay a violation.
    Allow,
}

/// The input formats of `enrich` (docs/commands.md), plus `auto`.
pub const INPUT_FORMATS: &[&str] = &[
    "auto",
    "ruff",
    "flake8",
    "pylint",
    "mypy",
    "pyright",
    "pytest",
    "python-traceback",
    "rustc",
    "cargo-json",
    "cargo-test",
    "tsc",
    "eslint",
    "biome",
    "oxlint",
    "generic",
];

/// A check's output format name, validated against [`INPUT_FORMATS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct InputFormat(pub String);

impl Default for InputFormat {
    fn default() -> Self {
        InputFormat("auto".into())
    }
}

impl<'de> Deserialize<'de> for InputFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if INPUT_FORMATS.contains(&s.as_str()) {
            Ok(InputFormat(s))
        } else {
            Err(de::Error::custom(format!("unknown format {s:?}: use one of {}", INPUT_FORMATS.join(", "))))
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    pub name: String,
    pub run: String,
    #[serde(default)]
    pub kind: CheckKind,
    #[serde(default)]
    pub format: InputFormat,
    #[serde(default = "default_check_timeout", deserialize_with = "nonzero_duration")]
    pub timeout: DurationSpec,
    /// The hosts it may reach through the sandbox's proxy (default: none).
    #[serde(default)]
    pub network: Vec<String>,
    /// How the base's failures count for this check; `[retry] baseline`
    /// when unset.
    #[serde(default)]
    pub baseline: Option<BaselineMode>,
    /// The files of the attempt's tree it reads, as globs: its earlier
    /// output on the same files (and command and environment) is reused
    /// instead of running it again. `None`: the whole tree.
    #[serde(default, deserialize_with = "input_globs", skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<String>>,
    /// `false`: never reused nor stored for reuse, a check that must always
    /// run (it reads the network, the clock, a database); `None`: `[retry]
    /// reuse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse: Option<bool>,
    /// Paths outside the tree it reads (files or directories; `~/` the
    /// home directory): their identity (sizes, modification times) is part
    /// of what its earlier output is reused on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
}

/// `[[check]] inputs`: globs that compile, at least one.
fn input_globs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    let globs = Vec::<String>::deserialize(d)?;
    if globs.is_empty() {
        return Err(de::Error::custom(
            "inputs = [] would make the check's output depend on no file: name the files it reads, or remove the key to mean the whole tree",
        ));
    }
    inputs_globs(&globs).map_err(de::Error::custom)?;
    Ok(Some(globs))
}

/// A `[[check]] inputs` glob that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputsError {
    #[error("inputs: {glob:?} is not a glob: {kind}")]
    NotAGlob { glob: String, kind: globset::ErrorKind },
    #[error("inputs: {0}")]
    Set(globset::Error),
}

/// `[[check]] inputs` compiled: `/` matched literally (`src/*.py` is one
/// level, `src/**` any depth), a leading `./` dropped. `Err` names the glob.
pub(crate) fn inputs_globs(globs: &[String]) -> Result<globset::GlobSet, InputsError> {
    let mut set = globset::GlobSetBuilder::new();
    for g in globs {
        let glob = globset::GlobBuilder::new(g.trim_start_matches("./"))
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| InputsError::NotAGlob { glob: g.clone(), kind: e.kind().clone() })?;
        set.add(glob);
    }
    set.build().map_err(InputsError::Set)
}

impl CheckConfig {
    /// This check's baseline mode: its own, else `[retry] baseline`.
    pub fn baseline_mode(&self, retry: &RetryConfig) -> BaselineMode {
        self.baseline.unwrap_or(retry.baseline)
    }
}

fn default_check_timeout() -> DurationSpec {
    DurationSpec::secs(10 * 60)
}

/// A confidence threshold in `0.0..=1.0`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Confidence(pub f64);

impl<'de> Deserialize<'de> for Confidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = number(d)?;
        fraction("min_confidence", v).map(Confidence).map_err(de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VerifierConfig {
    pub run: String,
    #[serde(default = "default_min_confidence")]
    pub min_confidence: Confidence,
    #[serde(default = "default_verifier_retries", deserialize_with = "numbers::verifier_retries")]
    pub retries: u32,
    #[serde(default = "default_verifier_timeout", deserialize_with = "nonzero_duration")]
    pub timeout: DurationSpec,
    /// The hosts it may reach through the sandbox's proxy: a reviewer's
    /// model API (default: none).
    #[serde(default)]
    pub network: Vec<String>,
}

fn default_min_confidence() -> Confidence {
    Confidence(0.6)
}
fn default_verifier_retries() -> u32 {
    2
}
fn default_verifier_timeout() -> DurationSpec {
    DurationSpec::secs(5 * 60)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContextOrder {
    FeedbackFirst,
    TaskFirst,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    pub order: ContextOrder,
    #[serde(deserialize_with = "numbers::max_prior_attempts")]
    pub max_prior_attempts: u32,
    #[serde(deserialize_with = "numbers::max_diff_lines")]
    pub max_diff_lines: u32,
    #[serde(deserialize_with = "numbers::max_check_output_lines")]
    pub max_check_output_lines: u32,
    #[serde(deserialize_with = "numbers::max_verifier_feedback_chars")]
    pub max_verifier_feedback_chars: u32,
    #[serde(deserialize_with = "numbers::max_tokens")]
    pub max_tokens: u32,
    pub include_prior_diffs: bool,
    pub include_check_output: bool,
    pub include_verifier_feedback: bool,
    #[serde(deserialize_with = "drift_threshold")]
    pub drift_threshold: f64,
    /// The failed attempt's own final message, labelled advisory.
    pub include_agent_notes: bool,
    #[serde(deserialize_with = "numbers::max_agent_notes_chars")]
    pub max_agent_notes_chars: u32,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            order: ContextOrder::FeedbackFirst,
            max_prior_attempts: 3,
            max_diff_lines: 500,
            max_check_output_lines: 50,
            max_verifier_feedback_chars: 2000,
            max_tokens: 4000,
            include_prior_diffs: true,
            include_check_output: true,
            include_verifier_feedback: true,
            drift_threshold: 0.3,
            include_agent_notes: true,
            max_agent_notes_chars: 1000,
        }
    }
}

/// A config file that could not be read (the caller's read, reported
/// here) or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read the config file: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid { path: PathBuf, line: usize, column: usize, message: String },
}

impl Config {
    /// Parses config text; `path` is only used to name the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            ConfigError::Invalid { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
        })?;
        config.validate(text, path)?;
        Ok(config)
    }

    /// Checks that need the whole file: check names must be unique.
    fn validate(&self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let mut seen = std::collections::BTreeSet::new();
        for check in &self.checks {
            if check.name.trim().is_empty() || !seen.insert(check.name.as_str()) {
                let what = if check.name.trim().is_empty() { "an empty" } else { "a duplicate" };
                // Point at the offending `name = ...` line where we can find it.
                let needle = format!("{:?}", check.name);
                let offset = text
                    .match_indices(&needle)
                    .map(|(i, _)| i)
                    .nth(if what == "an empty" { 0 } else { 1 })
                    .unwrap_or(0);
                let (line, column) = line_col(text, offset);
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    line,
                    column,
                    message: format!("[[check]] has {what} name {:?}: every check needs its own name", check.name),
                });
            }
        }
        Ok(())
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..crate::text::floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("retry-run.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn empty_file_gives_every_default() {
        let c = parse("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.max_attempts.0, 3);
        assert_eq!(c.agent.timeout.value, Duration::from_secs(1200));
        assert_eq!(c.agent.kill_grace.value, Duration::from_secs(5));
        assert_eq!(c.context.max_tokens, 4000);
        assert_eq!(c.retry.on.len(), 6);
    }

    #[test]
    fn retry_on_written_is_told_from_the_default() {
        let default = parse("[retry]\nflaky_reruns = 0\n").unwrap().retry.on;
        assert!(!default.explicit && default.contains(&RetryOn::Timeout) && !default.keeps_timeouts());
        let written = parse("[retry]\non = [\"check_failure\", \"timeout\"]\n").unwrap().retry.on;
        assert!(written.explicit && written.keeps_timeouts());
        assert_eq!(written.kinds, [RetryOn::CheckFailure, RetryOn::Timeout]);
        let without = parse("[retry]\non = [\"crash\"]\n").unwrap().retry.on;
        assert!(without.explicit && !without.keeps_timeouts());
        // Through a task's front matter (the merged table) as through the file.
        let merged: Config = toml::from_str("[retry]\non = [\"timeout\"]\n").unwrap();
        assert!(merged.retry.on.keeps_timeouts());
        assert_eq!(toml::Value::try_from(&written).unwrap().as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn the_spec_example_parses() {
        let text = r#"
base = "main"
max_attempts = 3

[worktree]
root = ""
include = [".env"]
setup = "npm ci"

[agent]
command = ["my-agent", "--prompt-file", "{prompt_file}"]
stdin = false
timeout = "20m"
kill_grace = "5s"
reset = "always"
mcp = true
max_self_checks = 5
transient_retries = 3
transient_wait = "30s"

[retry]
on = ["check_failure", "scope_violation", "verifier_rejection", "empty_diff", "crash", "timeout"]
flaky_reruns = 1
baseline = "label"
test_weakening = "fail"

[sandbox]
mode = "auto"
writable = []
git = "commit"

[scope]
allow = ["src/**", "tests/**"]
deny  = ["**/*.lock", ".github/**"]

[[check]]
name = "ruff"
run = "ruff check --output-format=concise ."
kind = "lint"
format = "auto"
timeout = "5m"

[verifier]
run = "my-reviewer --json"
min_confidence = 0.6
retries = 2

[context]
order = "feedback-first"
max_prior_attempts = 3
max_diff_lines = 500
max_check_output_lines = 50
max_verifier_feedback_chars = 2000
max_tokens = 4000
include_prior_diffs = true
include_check_output = true
include_verifier_feedback = true
drift_threshold = 0.3
"#;
        let c = parse(text).unwrap();
        assert_eq!(c.base.as_deref(), Some("main"));
        assert_eq!(c.scope.allow, vec!["src/**", "tests/**"]);
        assert_eq!(c.checks[0].kind, CheckKind::Lint);
        assert_eq!(c.checks[0].timeout.value, Duration::from_secs(300));
        assert_eq!(
            c.agent.command,
            Some(CommandSpec::Argv(vec!["my-agent".into(), "--prompt-file".into(), "{prompt_file}".into()]))
        );
        assert_eq!(c.verifier.unwrap().min_confidence.0, 0.6);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let cases: &[(&str, &str)] = &[
            ("[scope]\nalow = [\"src/**\"]\n", "retry-run.toml:2:1: unknown field `alow`"),
            (
                "[scope]\nsubmodules = \"yes\"\n",
                "retry-run.toml:2:14: unknown variant `yes`, expected `deny` or `allow`",
            ),
            ("max_attempts = \"three\"\n", "retry-run.toml:1:16: invalid type"),
            ("max_attempts = 0\n", "retry-run.toml:1:16: max_attempts must be at least 1, not 0"),
            ("[agent]\ntimeout = \"20\"\n", "retry-run.toml:2:11: duration \"20\" has no unit"),
            ("[agent]\ntimeout = \"5 weeks\"\n", "retry-run.toml:2:11: duration \"5 weeks\" has an unknown unit"),
            ("[agent]\ncommand = []\n", "retry-run.toml:2:11: the command list is empty"),
            ("[retry]\non = [\"crash\", \"oops\"]\n", "retry-run.toml:2:16: unknown variant `oops`"),
            (
                "[[check]]\nname = \"x\"\nrun = \"true\"\nformat = \"rufff\"\n",
                "retry-run.toml:4:10: unknown format \"rufff\"",
            ),
            ("[[check]]\nname = \"x\"\n", "missing field `run`"),
            (
                "[verifier]\nrun = \"v\"\nmin_confidence = 1.5\n",
                "retry-run.toml:3:18: min_confidence must be a number from 0.0 to 1.0",
            ),
            (
                "[[check]]\nname = \"a\"\nrun = \"x\"\n[[check]]\nname = \"a\"\nrun = \"y\"\n",
                "retry-run.toml:5:8: [[check]] has a duplicate name",
            ),
            ("base = \n", "retry-run.toml:1:"),
            ("[context]\norder = \"random\"\n", "retry-run.toml:2:9: unknown variant `random`"),
        ];
        for (text, want) in cases {
            let err = parse(text).expect_err(text);
            assert!(err.starts_with(want) || err.contains(want), "config {text:?}\n got: {err}\nwant: {want}");
        }
    }

    #[test]
    fn baseline_modes_and_their_old_booleans() {
        let mode = |t: &str| parse(&format!("[retry]\nbaseline = {t}\n")).map(|c| c.retry.baseline);
        assert_eq!(parse("").unwrap().retry.baseline, BaselineMode::Auto);
        assert_eq!(mode("\"auto\""), Ok(BaselineMode::Auto));
        let c =
            parse("[retry]\nbaseline = \"off\"\n[[check]]\nname = \"t\"\nrun = \"x\"\nbaseline = \"label\"\n").unwrap();
        assert_eq!(c.checks[0].baseline_mode(&c.retry), BaselineMode::Label);
        assert_eq!(mode("\"label\""), Ok(BaselineMode::Label));
        assert_eq!(mode("\"tolerate\""), Ok(BaselineMode::Tolerate));
        assert_eq!(mode("\"off\""), Ok(BaselineMode::Off));
        assert_eq!(mode("true"), Ok(BaselineMode::Tolerate));
        assert_eq!(mode("false"), Ok(BaselineMode::Off));
        let err = mode("\"sometimes\"").unwrap_err();
        assert!(err.contains("retry-run.toml:2:12") && err.contains("\"label\""), "{err}");
        let c = parse("targets = [\"tests/t.py::test_a\"]\n[retry]\ntest_weakening = \"warn\"\n").unwrap();
        assert_eq!(c.targets, ["tests/t.py::test_a"]);
        assert_eq!(c.retry.test_weakening, WeakeningMode::Warn);
        assert!(parse("[retry]\ntest_weakening = \"maybe\"\n").unwrap_err().contains("unknown variant"));
    }

    #[test]
    fn reuse_switches() {
        let c = parse("").unwrap();
        assert!(c.retry.reuse);
        let c = parse("[retry]\nreuse = false\n[[check]]\nname = \"a\"\nrun = \"x\"\n[[check]]\nname = \"b\"\nrun = \"y\"\nreuse = true\n[[check]]\nname = \"c\"\nrun = \"z\"\nreuse = false\n").unwrap();
        assert!(!c.retry.reuse);
        let own: Vec<Option<bool>> = c.checks.iter().map(|k| k.reuse).collect();
        assert_eq!(own, [None, Some(true), Some(false)]);
        // (text, where and what the error says)
        let cases = [
            ("[retry]\nreuse = \"no\"\n", "retry-run.toml:2:9: invalid type: string \"no\", expected a boolean"),
            (
                "[[check]]\nname = \"a\"\nrun = \"x\"\nreuse = 0\n",
                "retry-run.toml:4:9: invalid type: integer `0`, expected a boolean",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).expect_err(text);
            assert!(err.starts_with(want), "{text:?}\n got: {err}\nwant: {want}");
        }
    }

    #[test]
    fn acts_after_land_modes() {
        use crate::model::LandGate;
        let mode = |t: &str| parse(&format!("[scope]\nacts_after_land = {t}\n")).map(|c| c.scope.acts_after_land);
        assert_eq!(parse("").unwrap().scope.acts_after_land, LandGate::Fail);
        assert_eq!(mode("\"fail\""), Ok(LandGate::Fail));
        assert_eq!(mode("\"flag\""), Ok(LandGate::Flag));
        assert_eq!(mode("\"warn\""), Ok(LandGate::Flag));
        assert_eq!(mode("\"off\""), Ok(LandGate::Off));
        let err = mode("\"sometimes\"").unwrap_err();
        assert!(err.starts_with("retry-run.toml:2:19: unknown variant `sometimes`"), "{err}");
        assert!(mode("true").unwrap_err().contains("retry-run.toml:2:19"));
    }

    #[test]
    fn leftovers_are_read_under_their_old_name_too() {
        for text in ["[agent]\nleftovers = [\".aider*\"]\n", "[agent]\nignore = [\".aider*\"]\n"] {
            assert_eq!(parse(text).expect(text).agent.leftovers, [".aider*"], "{text}");
        }
        let written = toml::to_string(&parse("[agent]\nignore = [\"x\"]\n").expect("config")).expect("toml");
        assert!(written.contains("leftovers = [\"x\"]") && !written.contains("ignore"), "{written}");
    }

    #[test]
    fn command_may_be_a_string() {
        let c = parse("[agent]\ncommand = \"my-agent < {prompt_file}\"\n").unwrap();
        assert_eq!(c.agent.command, Some(CommandSpec::Shell("my-agent < {prompt_file}".into())));
    }

    #[test]
    fn durations() {
        let ok: &[(&str, u64)] =
            &[("90s", 90_000), ("5m", 300_000), ("1h", 3_600_000), ("1h30m", 5_400_000), ("250ms", 250)];
        for (t, ms) in ok {
            assert_eq!(DurationSpec::parse(t).unwrap().value.as_millis() as u64, *ms, "{t}");
        }
        for bad in ["", "s", "10", "10x", "-5s", "1.5h"] {
            assert!(DurationSpec::parse(bad).is_err(), "{bad}");
        }
    }

    /// Every number of the schema: where it is written, a value it takes,
    /// and values it refuses with the words they are refused in. Each bad
    /// value is written on line 2 after the table header (or line 1 at the
    /// top), so the error must name that line and the value's column.
    #[test]
    fn every_number_is_checked() {
        struct Key {
            table: &'static str,
            key: &'static str,
            good: &'static [&'static str],
            bad: &'static [(&'static str, &'static str)],
        }
        const COUNT_BAD: &[(&str, &str)] = &[
            ("-3", "must be a whole number from"),
            ("4294967296", "must be a whole number from"),
            ("99999999999999", "must be a whole number from"),
            ("1.5", "must be a whole number from"),
            ("nan", "must be a whole number from"),
            ("inf", "must be a whole number from"),
            ("\"3\"", "invalid type"),
        ];
        const NONZERO_COUNT_BAD: &[(&str, &str)] = &[
            ("0", "must be at least 1, not 0"),
            ("-3", "must be a whole number from 1"),
            ("1e9", "must be a whole number from"),
            ("nan", "must be a whole number from"),
            ("inf", "must be a whole number from"),
        ];
        const DURATION_BAD: &[(&str, &str)] = &[
            ("\"0s\"", "must be longer than 0"),
            ("\"0m0s\"", "must be longer than 0"),
            ("\"-5m\"", "invalid duration"),
            ("\"100000h\"", "longer than a year"),
            ("\"99999999999999999999s\"", "number too large"),
            ("5", "invalid type"),
            ("nan", "invalid type"),
        ];
        const FRACTION_BAD: &[(&str, &str)] = &[
            ("-0.1", "must be a number from 0.0 to 1.0, not -0.1"),
            ("1.5", "must be a number from 0.0 to 1.0"),
            ("nan", "must be a number from 0.0 to 1.0, not NaN"),
            ("inf", "must be a number from 0.0 to 1.0, not inf"),
        ];
        let keys = [
            Key { table: "", key: "max_attempts", good: &["1", "1000"], bad: NONZERO_COUNT_BAD },
            Key { table: "", key: "max_attempts", good: &[], bad: &[("1001", "from 1 to 1000, not 1001")] },
            Key { table: "agent", key: "timeout", good: &["\"1s\"", "\"8760h\""], bad: DURATION_BAD },
            Key {
                table: "agent",
                key: "kill_grace",
                good: &["\"0s\"", "\"10s\""],
                bad: &[("\"-1s\"", "invalid duration"), ("\"9000h\"", "longer than a year"), ("inf", "invalid type")],
            },
            Key { table: "agent", key: "max_self_checks", good: &["0", "5", "1000"], bad: COUNT_BAD },
            Key { table: "agent", key: "max_self_checks", good: &[], bad: &[("1001", "from 0 to 1000, not 1001")] },
            Key { table: "agent", key: "transient_retries", good: &["0", "3", "100"], bad: COUNT_BAD },
            Key { table: "agent", key: "transient_retries", good: &[], bad: &[("101", "from 0 to 100, not 101")] },
            Key {
                table: "agent",
                key: "transient_wait",
                good: &["\"0s\"", "\"30s\""],
                bad: &[("\"-1s\"", "invalid duration"), ("\"9000h\"", "longer than a year")],
            },
            Key { table: "retry", key: "flaky_reruns", good: &["0", "100"], bad: COUNT_BAD },
            Key { table: "retry", key: "flaky_reruns", good: &[], bad: &[("101", "from 0 to 100, not 101")] },
            Key { table: "retry", key: "lanes", good: &["1", "16"], bad: COUNT_BAD },
            Key { table: "retry", key: "lanes", good: &[], bad: &[("17", "from 1 to 16, not 17"), ("0", "1 runs")] },
            Key { table: "retry", key: "jobs", good: &["1", "1024"], bad: COUNT_BAD },
            Key {
                table: "retry",
                key: "jobs",
                good: &[],
                bad: &[("1025", "from 1 to 1024, not 1025"), ("0", "leave it out to run as many")],
            },
            Key {
                table: "retry",
                key: "fail_fast",
                good: &["\"targets\"", "\"none\""],
                bad: &[("\"all\"", "unknown variant"), ("true", "wanted string")],
            },
            Key {
                table: "retry",
                key: "max_cost_usd",
                good: &["0.5", "3", "1000000"],
                bad: &[
                    ("-3.0", "retry.max_cost_usd must be more than 0 US dollars, not -3"),
                    ("0", "must be more than 0 US dollars, not 0; leave it out for no limit"),
                    ("0.0", "must be more than 0 US dollars"),
                    ("nan", "must be a number of US dollars, not NaN"),
                    ("inf", "must be a number of US dollars, not inf"),
                    ("-inf", "must be a number of US dollars, not -inf"),
                    ("1e12", "must be at most 1000000 US dollars"),
                    ("\"5\"", "invalid type"),
                ],
            },
            Key { table: "retry", key: "max_duration", good: &["\"90s\"", "\"2h\""], bad: DURATION_BAD },
            Key { table: "sandbox", key: "max_processes", good: &["0", "1", "4096"], bad: COUNT_BAD },
            Key { table: "sandbox", key: "max_processes", good: &[], bad: &[("5000000", "from 0 to 4194304")] },
            Key {
                table: "sandbox",
                key: "max_file_size",
                good: &["\"1\"", "\"20GiB\"", "\"1.5GB\""],
                bad: &[
                    ("\"0\"", "at least one byte"),
                    ("\"-3GiB\"", "invalid size"),
                    ("\"nan\"", "invalid size"),
                    ("\"inf\"", "invalid size"),
                    ("\"1e400\"", "invalid size"),
                    ("\"99999999TiB\"", "at least one byte"),
                    ("4096", "invalid type"),
                ],
            },
            Key { table: "context", key: "max_prior_attempts", good: &["0", "3"], bad: COUNT_BAD },
            Key { table: "context", key: "max_diff_lines", good: &["1", "500"], bad: NONZERO_COUNT_BAD },
            Key {
                table: "context",
                key: "max_diff_lines",
                good: &[],
                bad: &[("0", "set include_prior_diffs = false")],
            },
            Key { table: "context", key: "max_check_output_lines", good: &["50"], bad: NONZERO_COUNT_BAD },
            Key { table: "context", key: "max_verifier_feedback_chars", good: &["2000"], bad: NONZERO_COUNT_BAD },
            Key { table: "context", key: "max_tokens", good: &["1", "4000"], bad: NONZERO_COUNT_BAD },
            Key { table: "context", key: "max_agent_notes_chars", good: &["1000"], bad: NONZERO_COUNT_BAD },
            Key { table: "context", key: "drift_threshold", good: &["0.0", "0.3", "1.0"], bad: FRACTION_BAD },
            Key { table: "verifier", key: "min_confidence", good: &["0.0", "0.6", "1"], bad: FRACTION_BAD },
            Key { table: "verifier", key: "retries", good: &["0", "2"], bad: COUNT_BAD },
            Key { table: "verifier", key: "timeout", good: &["\"5m\""], bad: DURATION_BAD },
            Key { table: "[check]", key: "timeout", good: &["\"5m\""], bad: DURATION_BAD },
        ];
        // What a table needs beside the key under test.
        let header = |table: &str| match table {
            "" => String::new(),
            "verifier" => "[verifier]\nrun = \"v\"\n".to_string(),
            "[check]" => "[[check]]\nname = \"c\"\nrun = \"true\"\n".to_string(),
            t => format!("[{t}]\n"),
        };
        for k in &keys {
            let head = header(k.table);
            for good in k.good {
                let text = format!("{head}{} = {good}\n", k.key);
                assert!(parse(&text).is_ok(), "{text:?} refused: {:?}", parse(&text));
            }
            for (bad, words) in k.bad {
                let text = format!("{head}{} = {bad}\n", k.key);
                let line = head.lines().count() + 1;
                let column = k.key.len() + 4;
                let err = parse(&text).expect_err(&text);
                let at = format!("retry-run.toml:{line}:{column}: ");
                assert!(err.starts_with(&at), "{text:?}\n got: {err}\nwant it at {at}");
                assert!(err.contains(words), "{text:?}\n got: {err}\nwant: {words}");
                for debug in ["Some(", "DurationSpec", "f64", "u32", "u64", "i64"] {
                    assert!(!err.contains(debug), "{text:?}: {err} shows {debug}");
                }
            }
        }
        // Every numeric key of the schema is in the table above.
        let defaults = toml::Value::try_from(Config {
            verifier: Some(VerifierConfig {
                run: "v".into(),
                min_confidence: default_min_confidence(),
                retries: default_verifier_retries(),
                timeout: default_verifier_timeout(),
                network: Vec::new(),
            }),
            retry: RetryConfig {
                max_cost_usd: Some(1.0),
                max_duration: Some(DurationSpec::secs(60)),
                ..RetryConfig::default()
            },
            ..Config::default()
        })
        .expect("the defaults as TOML");
        let numeric = ["timeout", "kill_grace", "max_duration", "max_file_size"];
        let mut found = Vec::new();
        let toml::Value::Table(top) = defaults else { panic!("a table") };
        for (name, v) in &top {
            let tables: Vec<(String, &toml::Value)> = match v {
                toml::Value::Table(t) => t.iter().map(|(k, v)| (format!("{name}.{k}"), v)).collect(),
                other => vec![(name.clone(), other)],
            };
            for (path, v) in tables {
                let key = path.rsplit('.').next().unwrap_or(&path).to_string();
                if v.is_integer() || v.is_float() || numeric.contains(&key.as_str()) {
                    found.push((path.split('.').next().filter(|t| *t != key).unwrap_or("").to_string(), key));
                }
            }
        }
        for (table, key) in &found {
            assert!(
                keys.iter().any(|k| k.table == table && k.key == key && !k.bad.is_empty()),
                "the number {table}.{key} of the schema is not in the table of this test"
            );
        }
        assert!(found.len() >= 18, "{found:?}");
    }

    #[test]
    fn cost_and_durations_of_the_command_line_share_the_rules() {
        assert_eq!(check_cost("--max-cost", 2.5), Ok(2.5));
        for bad in [-3.0, 0.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(check_cost("--max-cost", bad).unwrap_err().message().starts_with("--max-cost must be"), "{bad}");
        }
        assert_eq!(check_nonzero_duration("--max-duration", "2h").map(|d| d.value), Ok(Duration::from_secs(7200)));
        assert!(check_nonzero_duration("--max-duration", "0s").unwrap_err().message().contains("longer than 0"));
        assert!(
            check_nonzero_duration("--max-duration", "9000h").unwrap_err().message().contains("longer than a year")
        );
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("a\n\u{e9}\u{e9}x", 6), (2, 3));
        assert_eq!(line_col("abc", 99), (1, 4));
    }
}
