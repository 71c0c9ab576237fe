//! The order of an attempt's checks (docs/honest-success.md, "Order and fail-fast"):
//! the cheapest failing signal first. With `fail_fast = "targets"` the
//! first stage runs the task's targets alone (each test check that can
//! select them) beside the lint checks; the full suites run in a second
//! stage, only when the first passed. A failing stage ends the checks, the
//! rest recorded as not run with the reason. `fail_fast = "none"` runs every
//! check in full, as one stage. Within a stage, the checks the base ran
//! fastest come first (they start first when slots are short). Pure: the
//! shell that runs the stages is `run::gates::checks`.

use crate::config::FailFast;
use crate::model::CheckKind;

/// What the planner knows of one configured check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckFacts {
    pub kind: CheckKind,
    /// A targets-only run of it can be made (a test runner that selects
    /// the task's targets).
    pub selects_targets: bool,
    /// How long its run on the base took, when known.
    pub base_ms: Option<u64>,
}

/// Which run of a check a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RunOfCheck {
    /// Only the task's targets, selected in the runner.
    Targets,
    /// The check as configured.
    Full,
}

impl RunOfCheck {
    /// As the record and the prompt name it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunOfCheck::Targets => "targets",
            RunOfCheck::Full => "full",
        }
    }
}

/// One run of a check: `check` indexes the configured checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub check: usize,
    pub part: RunOfCheck,
}

/// Steps that may run at once; the next stage starts when all have ended.
pub(crate) type Stage = Vec<Step>;

/// The stages of an attempt's checks. Every check appears once in full,
/// whatever `fail_fast` says (unless a stage before fails).
pub(crate) fn plan(checks: &[CheckFacts], fail_fast: FailFast) -> Vec<Stage> {
    let all: Vec<usize> = (0..checks.len()).collect();
    let full = |i: &usize| Step { check: *i, part: RunOfCheck::Full };
    if fail_fast == FailFast::None {
        let one: Stage = all.iter().map(full).collect();
        return if one.is_empty() { Vec::new() } else { vec![one] };
    }
    let first_in_full = |c: &CheckFacts| c.kind == CheckKind::Lint;
    let mut first: Stage = all
        .iter()
        .filter_map(|&i| {
            let c = &checks[i];
            if first_in_full(c) {
                Some(Step { check: i, part: RunOfCheck::Full })
            } else if c.selects_targets {
                Some(Step { check: i, part: RunOfCheck::Targets })
            } else {
                None
            }
        })
        .collect();
    let mut second: Stage = all.iter().filter(|&&i| !first_in_full(&checks[i])).map(full).collect();
    // A targets run costs a fraction of its full run: order by what the
    // base's full run took, unknown last, ties in the config's order.
    let cost = |s: &Step| checks[s.check].base_ms.unwrap_or(u64::MAX);
    first.sort_by_key(|s| (cost(s), s.check));
    second.sort_by_key(|s| (cost(s), s.check));
    [first, second].into_iter().filter(|s| !s.is_empty()).collect()
}

/// One step's result, as the stop decision reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepEnded<'a> {
    pub check: &'a str,
    pub part: RunOfCheck,
    /// It failed: its check failed, or (a targets run) a target did not pass.
    pub failed: bool,
}

/// Why the checks stop after a stage whose steps ended as `ended`, or
/// `None` to go on: with `fail_fast = "targets"`, any failure stops them.
pub(crate) fn stop_after(ended: &[StepEnded<'_>], fail_fast: FailFast) -> Option<String> {
    if fail_fast == FailFast::None {
        return None;
    }
    let failed: Vec<String> = ended
        .iter()
        .filter(|e| e.failed)
        .map(|e| match e.part {
            RunOfCheck::Targets => format!("the targets (in `{}`)", e.check),
            RunOfCheck::Full => format!("`{}`", e.check),
        })
        .collect();
    if failed.is_empty() {
        return None;
    }
    Some(format!("{} failed first; fail_fast = \"targets\"", and_list(&failed)))
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The steps of `stages` not yet run, from stage `from` on, less those in
/// `done` (steps of stage `from` already run), each with `why`.
pub(crate) fn not_run(stages: &[Stage], from: usize, done: &[Step], why: &str) -> Vec<(Step, String)> {
    stages.iter().skip(from).flatten().filter(|s| !done.contains(s)).map(|s| (*s, why.to_string())).collect()
}

/// How a step is named to the user: `tests (targets)`, `tests (full
/// suite)` for a test check that has a targets run, else the check's name.
pub(crate) fn label(check: &str, part: RunOfCheck, has_targets_run: bool) -> String {
    match (part, has_targets_run) {
        (RunOfCheck::Targets, _) => format!("{check} (targets)"),
        (RunOfCheck::Full, true) => format!("{check} (full suite)"),
        (RunOfCheck::Full, false) => check.to_string(),
    }
}

/// What a run of a check is judged against, from what is known of its
/// base: a base run in full, a targets-only run, or nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseKnown {
    None,
    TargetsOnly,
    Full,
}

/// Where the base of a `part` run comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseFrom {
    /// The base known (or none).
    Known,
    /// The full run being made aside: waited for.
    Aside,
    /// No base: a full suite is never judged against its targets alone.
    Without,
}

/// Where a run's base comes from: a full suite whose base is so far a
/// targets-only run waits for the full run aside, or, with none under
/// way, is judged without a base; anything else takes what is known.
pub(crate) fn base_from(known: BaseKnown, part: RunOfCheck, aside: bool) -> BaseFrom {
    match (known, part, aside) {
        (BaseKnown::TargetsOnly, RunOfCheck::Full, true) => BaseFrom::Aside,
        (BaseKnown::TargetsOnly, RunOfCheck::Full, false) => BaseFrom::Without,
        _ => BaseFrom::Known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_a_runs_base_comes_from() {
        use BaseFrom::*;
        use BaseKnown::{Full, None as Nothing, TargetsOnly};
        let cases = [
            (TargetsOnly, RunOfCheck::Full, true, Aside),
            (TargetsOnly, RunOfCheck::Full, false, Without),
            (TargetsOnly, RunOfCheck::Targets, true, Known),
            (TargetsOnly, RunOfCheck::Targets, false, Known),
            (Full, RunOfCheck::Full, true, Known),
            (Full, RunOfCheck::Targets, false, Known),
            (Nothing, RunOfCheck::Full, true, Known),
        ];
        for (known, part, aside, want) in cases {
            assert_eq!(base_from(known, part, aside), want, "{known:?} {part:?} aside {aside}");
        }
    }

    const fn lint(base_ms: Option<u64>) -> CheckFacts {
        CheckFacts { kind: CheckKind::Lint, selects_targets: false, base_ms }
    }
    const fn test(selects_targets: bool, base_ms: Option<u64>) -> CheckFacts {
        CheckFacts { kind: CheckKind::Test, selects_targets, base_ms }
    }
    const fn custom(base_ms: Option<u64>) -> CheckFacts {
        CheckFacts { kind: CheckKind::Custom, selects_targets: false, base_ms }
    }

    /// A plan written `"T0 F1 | F0"`: stages split by `|`, each step its
    /// part (`T`argets or `F`ull) and check index.
    fn show(stages: &[Stage]) -> String {
        stages
            .iter()
            .map(|s| {
                s.iter()
                    .map(|x| format!("{}{}", if x.part == RunOfCheck::Targets { "T" } else { "F" }, x.check))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn the_stages_of_an_attempt() {
        let cases: &[(&str, &[CheckFacts], FailFast, &str)] = &[
            ("nothing configured", &[], FailFast::Targets, ""),
            (
                "none: everything in full, one stage, config order",
                &[test(true, Some(20_000)), lint(Some(100))],
                FailFast::None,
                "F0 F1",
            ),
            (
                "targets and lint first, then the suite",
                &[test(true, Some(20_000)), lint(Some(100))],
                FailFast::Targets,
                "F1 T0 | F0",
            ),
            (
                "lint first even when it cannot select",
                &[lint(None), test(false, Some(5))],
                FailFast::Targets,
                "F0 | F1",
            ),
            (
                "a suite that cannot select runs in full second",
                &[test(false, Some(5)), lint(Some(9))],
                FailFast::Targets,
                "F1 | F0",
            ),
            (
                "custom and build checks run with the suites",
                &[custom(Some(1)), test(true, Some(50))],
                FailFast::Targets,
                "T1 | F0 F1",
            ),
            (
                "only suites that cannot select: one stage",
                &[test(false, None), test(false, None)],
                FailFast::Targets,
                "F0 F1",
            ),
            (
                "cheaper on the base first, unknown last",
                &[test(true, None), test(true, Some(30)), test(true, Some(10))],
                FailFast::Targets,
                "T2 T1 T0 | F2 F1 F0",
            ),
            (
                "ties keep the config's order",
                &[lint(Some(5)), lint(Some(5)), lint(Some(1))],
                FailFast::Targets,
                "F2 F0 F1",
            ),
        ];
        for (name, checks, ff, want) in cases {
            assert_eq!(show(&plan(checks, *ff)), *want, "{name}");
        }
    }

    #[test]
    fn every_check_runs_in_full_once_in_every_plan() {
        let checks = [test(true, Some(3)), lint(None), custom(Some(1)), test(false, None)];
        for ff in [FailFast::Targets, FailFast::None] {
            let stages = plan(&checks, ff);
            for i in 0..checks.len() {
                let full = stages.iter().flatten().filter(|s| s.check == i && s.part == RunOfCheck::Full).count();
                assert_eq!(full, 1, "check {i} under {ff:?}: {}", show(&stages));
            }
        }
    }

    #[test]
    fn when_the_checks_stop() {
        let e = |check, part, failed| StepEnded { check, part, failed };
        let cases: &[(&str, Vec<StepEnded<'_>>, FailFast, Option<&str>)] = &[
            (
                "all passed",
                vec![e("tests", RunOfCheck::Targets, false), e("ruff", RunOfCheck::Full, false)],
                FailFast::Targets,
                None,
            ),
            (
                "a target failed",
                vec![e("tests", RunOfCheck::Targets, true), e("ruff", RunOfCheck::Full, false)],
                FailFast::Targets,
                Some("the targets (in `tests`) failed first; fail_fast = \"targets\""),
            ),
            (
                "lint failed",
                vec![e("tests", RunOfCheck::Targets, false), e("ruff", RunOfCheck::Full, true)],
                FailFast::Targets,
                Some("`ruff` failed first; fail_fast = \"targets\""),
            ),
            (
                "three failed",
                vec![e("a", RunOfCheck::Full, true), e("b", RunOfCheck::Full, true), e("c", RunOfCheck::Targets, true)],
                FailFast::Targets,
                Some("`a`, `b` and the targets (in `c`) failed first; fail_fast = \"targets\""),
            ),
            ("none never stops", vec![e("tests", RunOfCheck::Full, true)], FailFast::None, None),
            ("nothing ended", vec![], FailFast::Targets, None),
        ];
        for (name, ended, ff, want) in cases {
            assert_eq!(stop_after(ended, *ff).as_deref(), *want, "{name}");
        }
    }

    #[test]
    fn what_is_left_not_run() {
        let stages = plan(&[test(true, Some(9)), lint(Some(1)), test(true, Some(5))], FailFast::Targets);
        assert_eq!(show(&stages), "F1 T2 T0 | F2 F0");
        let cases: &[(&str, usize, Vec<Step>, &str)] = &[
            ("after the first stage", 1, vec![], "F2 F0"),
            (
                "within the first stage",
                0,
                vec![Step { check: 1, part: RunOfCheck::Full }, Step { check: 2, part: RunOfCheck::Targets }],
                "T0 F2 F0",
            ),
            ("past the end", 2, vec![], ""),
        ];
        for (name, from, done, want) in cases {
            let left = not_run(&stages, *from, done, "why");
            let shown = show(&[left.iter().map(|(s, _)| *s).collect()]);
            assert_eq!(shown, *want, "{name}");
            assert!(left.iter().all(|(_, w)| w == "why"));
        }
    }

    #[test]
    fn step_labels() {
        let cases = [
            ("tests", RunOfCheck::Targets, true, "tests (targets)"),
            ("tests", RunOfCheck::Full, true, "tests (full suite)"),
            ("ruff", RunOfCheck::Full, false, "ruff"),
        ];
        for (check, part, has, want) in cases {
            assert_eq!(label(check, part, has), want);
        }
    }
}
