//! What one attempt did, as data: each gate's result and the outcome.
//!
//! The loop fills an [`AttemptRecord`] step by step and writes it as
//! `attempts/<n>/attempt.json` when the attempt completes; the retry context,
//! `report` and `stats` read it back. Which outcome the results make, in
//! the gate order of docs/commands.md (`run`), is `crate::outcome::classify`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::check::{CheckResult, NotRun};
use super::internals::Halt;
use super::usage::Usage;

/// Outcomes of an attempt (docs/record.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum Outcome {
    Success,
    CheckFailure,
    ScopeViolation,
    VerifierRejection,
    EmptyDiff,
    Crash,
    Timeout,
    Unverified,
    /// Ended by retry-run because another lane of the task won
    /// (`run --lanes`): neither a success nor a failure.
    Stopped,
}

impl Outcome {
    pub(crate) const ALL: [Outcome; 9] = [
        Outcome::Success,
        Outcome::CheckFailure,
        Outcome::ScopeViolation,
        Outcome::VerifierRejection,
        Outcome::EmptyDiff,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::Unverified,
        Outcome::Stopped,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "SUCCESS",
            Outcome::CheckFailure => "CHECK_FAILURE",
            Outcome::ScopeViolation => "SCOPE_VIOLATION",
            Outcome::VerifierRejection => "VERIFIER_REJECTION",
            Outcome::EmptyDiff => "EMPTY_DIFF",
            Outcome::Crash => "CRASH",
            Outcome::Timeout => "TIMEOUT",
            Outcome::Unverified => "UNVERIFIED",
            Outcome::Stopped => "STOPPED",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// The `retry.on` name of a failure; `None` for SUCCESS and UNVERIFIED,
    /// which are never retried.
    pub(crate) fn retry_key(self) -> Option<RetryOn> {
        Some(match self {
            Outcome::CheckFailure => RetryOn::CheckFailure,
            Outcome::ScopeViolation => RetryOn::ScopeViolation,
            Outcome::VerifierRejection => RetryOn::VerifierRejection,
            Outcome::EmptyDiff => RetryOn::EmptyDiff,
            Outcome::Crash => RetryOn::Crash,
            Outcome::Timeout => RetryOn::Timeout,
            Outcome::Success | Outcome::Unverified | Outcome::Stopped => return None,
        })
    }
}

/// An attempt outcome that `retry.on` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryOn {
    CheckFailure,
    ScopeViolation,
    VerifierRejection,
    EmptyDiff,
    Crash,
    Timeout,
}

/// How the agent process ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct AgentRun {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_ms: u64,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// The file the agent wrote last (the newest in the worktree modified
    /// since it started), when it timed out or crashed.
    pub last_activity: Option<String>,
    /// The last lines of its output (for a crash).
    pub output_tail: Vec<String>,
    /// Paths outside the worktree its output says it was refused (the
    /// sandbox at work).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Hosts (`host:port`) the sandbox's proxy refused it, first seen first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_hosts: Vec<String>,
    /// The sandbox's limits it hit (`the process limit (4096) refused 12
    /// processes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits_hit: Vec<String>,
    /// Detect mode: what it connected or sent to that the other modes
    /// would have stopped, or why nothing could be seen. Recorded and told,
    /// never failing the attempt by itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_seen: Vec<super::NetworkSeen>,
    /// Tokens, turns and cost, as the agent reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Its own final message (from its machine-readable output, else the
    /// tail of its output), bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_message: Option<String>,
    /// Its leftovers: files it left in the worktree that are not part of
    /// the change (`[agent] leftovers`), kept out of the snapshot. `ignored`
    /// is read as this field too: records written by earlier versions use it.
    #[serde(default, alias = "ignored", skip_serializing_if = "Vec::is_empty")]
    pub leftovers: Vec<String>,
}

impl AgentRun {
    pub(crate) fn crashed(&self) -> bool {
        !self.timed_out && self.exit_code != Some(0)
    }
}

/// One changed file of the attempt's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileChange {
    /// Quoted the way git quotes paths when not valid UTF-8.
    pub path: String,
    pub old_path: Option<String>,
    pub status: String,
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
}

/// How deep a directory of an attempt's tree may be: one this many levels
/// deep or deeper (its path has 100 names) is cut out of the tree before
/// the snapshot. libgit2's walk of a working tree enters no directory that
/// deep, no real project nests its files a hundred directories deep, and
/// each level costs every directory below it a look at its `.gitignore`.
pub(crate) const MAX_TREE_DEPTH: usize = 100;

/// Why a path violates the scope, in order of precedence: when several
/// apply to one path, the first one is reported. Written as the kebab-case
/// name (`outside-worktree`, `git-internal`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeReason {
    /// A write into the user's own checkout (or its git state), outside the
    /// task's worktree: found by watching the checkout, not by `scope::check`.
    OutsideWorktree,
    GitInternal,
    Submodule,
    SymlinkEscape,
    Denied,
    /// The change writes a file that git, an editor, CI, a shell or an
    /// agent executes or honours once the change lands (`.gitattributes`,
    /// a CI workflow, `.envrc`, `retry-run.toml`, ...): `scope::landing`.
    ActsAfterLand,
    OutsideAllow,
    /// A directory too deep for the snapshot to read ([`MAX_TREE_DEPTH`]
    /// levels or more): cut out of the attempt's tree.
    TooDeep,
    /// Where nothing confined the attempt (`sandbox.mode = "detect"` or
    /// `"off"`): a ref of a remote moved by a push (a remote on this
    /// machine read before and after; a tracking ref `git push` moved).
    Pushed,
    /// A file of the user's checkout's git directory beside its refs and
    /// index: a lock (`index.lock`), `ORIG_HEAD`, a reflog (`logs/`), ...
    CheckoutGit,
    /// retry-run's record (`.git/retry-run/`) written by something other
    /// than retry-run: a line added to an event log, a file of the record
    /// changed.
    Record,
    /// retry-run's cache in the user's home (`~/.cache/retry-run`).
    RetryRunCache,
    /// A file of this user's in the machine's shared `/tmp` or `/dev/shm`,
    /// outside the attempt's TMPDIR, written during the attempt: noted, not
    /// a violation (by its time only: another program may have written it).
    SharedTmp,
}

impl ScopeReason {
    /// What a finding of this reason found outside the worktree, in words
    /// for the report and the next prompt; `None` for the reasons of the
    /// change's own scope.
    pub fn outside_words(self) -> Option<&'static str> {
        Some(match self {
            ScopeReason::Pushed => "pushed to a remote: the remote's ref moved",
            ScopeReason::CheckoutGit => {
                "a file of the user's checkout's git directory (a lock, ORIG_HEAD, a reflog) changed"
            }
            ScopeReason::Record => "retry-run's record changed by something other than retry-run",
            ScopeReason::RetryRunCache => "retry-run's cache in the home directory changed",
            ScopeReason::SharedTmp => "a file in the machine's shared /tmp or /dev/shm, outside $TMPDIR",
            _ => return None,
        })
    }

    /// Findings recorded and shown but never a violation (`noted`).
    pub fn only_noted(self) -> bool {
        self == ScopeReason::SharedTmp
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ScopeReason::OutsideWorktree => "outside-worktree",
            ScopeReason::GitInternal => "git-internal",
            ScopeReason::Submodule => "submodule",
            ScopeReason::SymlinkEscape => "symlink-escape",
            ScopeReason::Denied => "denied",
            ScopeReason::ActsAfterLand => "acts-after-land",
            ScopeReason::OutsideAllow => "outside-allow",
            ScopeReason::TooDeep => "too-deep",
            ScopeReason::Pushed => "pushed",
            ScopeReason::CheckoutGit => "checkout-git",
            ScopeReason::Record => "record",
            ScopeReason::RetryRunCache => "retry-run-cache",
            ScopeReason::SharedTmp => "shared-tmp",
        }
    }
}

impl fmt::Display for ScopeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[scope] acts_after_land`: what a change that writes a file acting
/// once the change lands does to the attempt (docs/sandbox.md, "What would
/// act after the land").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LandGate {
    /// An `acts-after-land` scope violation: the attempt fails.
    #[default]
    Fail,
    /// Recorded and shown (report, final message, next prompt), not
    /// failing. `warn` is read as `flag`, as `[retry] test_weakening`
    /// spells it.
    #[serde(alias = "warn")]
    #[value(alias = "warn")]
    Flag,
    /// Not looked at (`retry-run.toml` stays outside the scope all the same).
    Off,
}

/// One scope violation of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeFinding {
    pub path: String,
    pub old_path: Option<String>,
    pub reason: ScopeReason,
    pub rule: Option<String>,
}

/// What the verifier said (docs/config.md, `[verifier]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VerifierResult {
    /// A valid verdict other than `retry` came back.
    pub answered: bool,
    pub calls: u32,
    pub verdict: Option<String>,
    pub confidence: Option<f64>,
    pub required_change: Option<String>,
    pub critique: Option<String>,
    /// Why calls that did not answer failed.
    pub problems: Vec<String>,
    pub min_confidence: f64,
}

impl VerifierResult {
    /// `needs_changes` with enough confidence.
    pub(crate) fn rejects(&self) -> bool {
        self.answered
            && self.verdict.as_deref() == Some("needs_changes")
            && self.confidence.unwrap_or(1.0) >= self.min_confidence
    }

    pub(crate) fn escalates(&self) -> bool {
        self.answered && self.verdict.as_deref() == Some("escalate")
    }
}

/// Everything one attempt did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AttemptRecord {
    pub number: u32,
    pub duration_ms: u64,
    pub outcome: Outcome,
    /// One line: why the outcome is what it is.
    pub reason: String,
    /// `retry-run` was killed during the attempt.
    pub interrupted: bool,
    pub agent: Option<AgentRun>,
    /// The snapshot commit.
    pub commit: Option<String>,
    pub files: Vec<FileChange>,
    /// The patch of the snapshot against the base, bounded.
    pub diff: Vec<String>,
    /// Patch lines cut from `diff`.
    pub diff_omitted: usize,
    pub scope: Vec<ScopeFinding>,
    /// Files the change writes that act once it lands, flagged and not
    /// failing (`[scope] acts_after_land = "flag"`): reason
    /// `acts-after-land`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flagged: Vec<ScopeFinding>,
    /// What was found outside the worktree, recorded and shown, never a
    /// violation (reason `shared-tmp`: by its time alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noted: Vec<ScopeFinding>,
    /// The allowed globs at the time (for the required change).
    pub allow: Vec<String>,
    pub checks: Vec<CheckResult>,
    /// Runs of checks not made because a check before them failed
    /// (`[retry] fail_fast`): never passed, never failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<NotRun>,
    pub verifier: Option<VerifierResult>,
    /// Parts of the repository's git machinery (config, hooks, info) the
    /// attempt changed and retry-run put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// Nothing confined the attempt and it changed the worktree's git
    /// links or the repository's config or hooks: retry-run ran none of its
    /// unconfined steps after that, and starts no further attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted: Option<Halt>,
    /// The calls the agent made to the self-check tools while it worked
    /// (docs/mcp.md): advisory, never part of the outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_checks: Vec<SelfCheck>,
    /// The runs of its agent that the model provider failed (a rate
    /// limit, an overload, a server error, a dropped connection), each run
    /// again from the attempt's start and not counted (`AgentRetried`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_failures: Vec<ProviderFailure>,
}

/// One run of an attempt's agent its model provider failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProviderFailure {
    /// `rate_limit`, `overloaded`, `server_error` or `dropped`.
    pub kind: String,
    /// The line of the agent's output, or what the proxy saw, that says so.
    pub said: String,
    /// The wait before the next run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

/// One call of the agent to a self-check tool (`run_checks`,
/// `previous_attempts`, `task`), as retry-run answered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheck {
    /// 1, 2, ... in the order the calls arrived.
    pub call: u32,
    pub tool: String,
    /// The arguments as the agent gave them (bounded).
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// When it arrived, since the agent started.
    #[serde(default)]
    pub at_ms: u64,
    #[serde(default)]
    pub duration_ms: u64,
    /// One line: what the answer said.
    #[serde(default)]
    pub summary: String,
    /// `run_checks` that ran: whether every gate it ran passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// The call was refused (the cap, a call under way, bad arguments): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl SelfCheck {
    /// A `run_checks` call that ran the gates.
    pub fn ran_gates(&self) -> bool {
        self.tool == "run_checks" && self.refused.is_none() && self.passed.is_some()
    }
}

impl AttemptRecord {
    /// It ran the gates itself and the last time every one passed.
    pub(crate) fn self_checked_green(&self) -> bool {
        self.self_checks.iter().rev().find(|c| c.ran_gates()).is_some_and(|c| c.passed == Some(true))
    }

    pub(crate) fn new(number: u32) -> Self {
        AttemptRecord {
            number,
            duration_ms: 0,
            outcome: Outcome::Crash,
            reason: String::new(),
            interrupted: false,
            agent: None,
            commit: None,
            files: Vec::new(),
            diff: Vec::new(),
            diff_omitted: 0,
            scope: Vec::new(),
            flagged: Vec::new(),
            noted: Vec::new(),
            allow: Vec::new(),
            checks: Vec::new(),
            not_run: Vec::new(),
            verifier: None,
            restored: Vec::new(),
            halted: None,
            self_checks: Vec::new(),
            provider_failures: Vec::new(),
        }
    }

    /// An attempt that `retry-run` did not finish (it was killed).
    pub(crate) fn interrupted(number: u32, duration_ms: u64) -> Self {
        AttemptRecord {
            duration_ms,
            outcome: Outcome::Crash,
            reason: "interrupted: retry-run stopped before the attempt finished".into(),
            interrupted: true,
            ..AttemptRecord::new(number)
        }
    }

    /// Attempt `number`, stopped after `duration_ms` because another lane
    /// won: `why` names it.
    pub(crate) fn stopped(number: u32, duration_ms: u64, why: &str) -> Self {
        AttemptRecord {
            duration_ms,
            outcome: Outcome::Stopped,
            reason: format!("stopped: {why}"),
            interrupted: true,
            ..AttemptRecord::new(number)
        }
    }

    /// The ids of the failing tests of every failed check.
    pub(crate) fn failing_tests(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .flat_map(|c| &c.failures)
            .filter(|f| f.test)
            .map(|f| f.key.as_str())
            .collect()
    }

    pub(crate) fn failed_checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(|c| !c.passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_names_round_trip() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_string(&o).expect("json"), format!("\"{}\"", o.as_str()));
        }
        assert_eq!(Outcome::Unverified.retry_key(), None);
        assert_eq!(Outcome::Success.retry_key(), None);
        assert_eq!(Outcome::EmptyDiff.retry_key(), Some(RetryOn::EmptyDiff));
    }

    #[test]
    fn leftovers_are_read_under_their_old_name() {
        let old: AgentRun = serde_json::from_str(
            r#"{"exit_code":0,"signal":null,"timed_out":false,"timeout_ms":1,
            "duration_ms":1,"output_bytes":0,"last_activity":null,"output_tail":[],"ignored":[".aider.x"]}"#,
        )
        .expect("an earlier attempt.json's agent");
        assert_eq!(old.leftovers, [".aider.x"]);
        let json = serde_json::to_value(&old).expect("json");
        assert_eq!(json["leftovers"], serde_json::json!([".aider.x"]));
        assert!(json.get("ignored").is_none());
    }

    #[test]
    fn scope_reasons_are_written_as_before() {
        let reasons = [
            (ScopeReason::OutsideWorktree, "outside-worktree"),
            (ScopeReason::GitInternal, "git-internal"),
            (ScopeReason::Submodule, "submodule"),
            (ScopeReason::SymlinkEscape, "symlink-escape"),
            (ScopeReason::Denied, "denied"),
            (ScopeReason::ActsAfterLand, "acts-after-land"),
            (ScopeReason::OutsideAllow, "outside-allow"),
        ];
        for (reason, text) in reasons {
            assert_eq!(reason.as_str(), text);
            assert_eq!(reason.to_string(), text);
            assert_eq!(serde_json::to_value(reason).expect("json"), text);
            assert_eq!(serde_json::from_value::<ScopeReason>(text.into()).expect("read"), reason);
        }
        let old = r#"{"path":"x","old_path":null,"reason":"outside-worktree","rule":null}"#;
        let read: ScopeFinding = serde_json::from_str(old).expect("an earlier finding");
        assert_eq!(read.reason, ScopeReason::OutsideWorktree);
        assert_eq!(serde_json::to_string(&read).expect("json"), old);
    }
}
