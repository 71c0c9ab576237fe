//! Tests of the retry context on hand-built records: snapshots of rendered
//! prompts for each outcome kind and for tight budgets (insta, reviewed
//! `.snap` files in `snapshots/`), and the budget property (proptest).

use proptest::prelude::*;

use super::render::render;
use super::*;
use crate::config::{ContextConfig, ContextOrder};
use crate::model::ErrorItem;
use crate::model::{AgentRun, CheckKind, CheckResult, Failure, FileChange, ScopeFinding, ScopeReason, VerifierResult};

fn task() -> TaskText {
    TaskText {
        id: "fix-cart".into(),
        title: "Fix the cart total".into(),
        text: "# Fix the cart total\n\nThe total ignores the discount.\n\n## Success criteria\n\n- pytest passes\n"
            .into(),
    }
}

fn agent_ok() -> Option<AgentRun> {
    Some(AgentRun { exit_code: Some(0), timeout_ms: 1_200_000, duration_ms: 41_000, ..AgentRun::default() })
}

fn changed(n: u32, diff: &[&str]) -> AttemptRecord {
    let mut r = AttemptRecord::new(n);
    r.agent = agent_ok();
    r.duration_ms = 52_300;
    r.files = vec![FileChange {
        path: "shop/cart.py".into(),
        status: "M".into(),
        additions: 2,
        deletions: 1,
        ..FileChange::default()
    }];
    r.diff = diff.iter().map(|s| s.to_string()).collect();
    r
}

const DIFF_A: &[&str] = &[
    "diff --git a/shop/cart.py b/shop/cart.py",
    "--- a/shop/cart.py",
    "+++ b/shop/cart.py",
    "@@ -10,3 +10,4 @@ class Cart:",
    "     def total(self):",
    "-        return sum(self.items)",
    "+        import os",
    "+        return sum(self.items) * self.discount",
];

fn check(name: &str, kind: CheckKind, passed: bool) -> CheckResult {
    CheckResult { duration_ms: 800, ..CheckResult::new(name, kind, passed) }
}

fn pytest_failure() -> CheckResult {
    let mut c = check("pytest", CheckKind::Test, false);
    c.failures = vec![Failure {
        key: "tests/test_cart.py::test_total".into(),
        label: "tests/test_cart.py::test_total - AssertionError: assert 90.0 == 81.0".into(),
        test: true,
        target: false,
    }];
    c.digest = vec![
        "failed tests (1):".into(),
        "  tests/test_cart.py::test_total - AssertionError: assert 90.0 == 81.0".into(),
        "totals:".into(),
        "  ===== 1 failed, 11 passed in 0.05s =====".into(),
    ];
    c
}

fn ruff_failure() -> CheckResult {
    let mut c = check("ruff", CheckKind::Lint, false);
    c.failures = vec![Failure {
        key: "shop/cart.py|F401|Cart.total".into(),
        label: "shop/cart.py:12: F401 `os` imported but unused (in Cart.total)".into(),
        test: false,
        target: false,
    }];
    c.errors = vec![ErrorItem {
        tool: "ruff".into(),
        path: "shop/cart.py".into(),
        line: Some(12),
        code: Some("F401".into()),
        message: "`os` imported but unused".into(),
        scope: Some("Cart.total".into()),
        snippet: Some(
            "    9 | class Cart:\n   11 |     def total(self):\n>  12 |         import os\n   13 |         return sum(self.items) * self.discount\n"
                .into(),
        ),
    }];
    c.digest = vec!["errors (1):".into(), "  shop/cart.py:12:16: F401 [*] `os` imported but unused".into()];
    c
}

fn cfg() -> ContextConfig {
    ContextConfig::default()
}

fn prompt_after(prior: &[AttemptRecord], cfg: &ContextConfig) -> String {
    let n = prior.last().map_or(1, |r| r.number + 1);
    render(&assemble(&task(), n, 3, prior, cfg), cfg).prompt
}

fn finish(mut r: AttemptRecord) -> AttemptRecord {
    let c = crate::outcome::classify(&r);
    r.outcome = c.outcome;
    r.reason = c.reason;
    r
}

#[test]
fn check_failure_lint_and_tests() {
    let mut r = changed(1, DIFF_A);
    r.checks = vec![ruff_failure(), pytest_failure()];
    insta::assert_snapshot!(prompt_after(&[finish(r)], &cfg()));
}

#[test]
fn the_prompt_says_which_checks_were_not_run_and_why() {
    let mut r = changed(1, DIFF_A);
    let mut targets = pytest_failure();
    targets.targets_only = true;
    r.checks = vec![targets];
    r.not_run = vec![crate::model::NotRun {
        check: "pytest".into(),
        part: "full".into(),
        label: "pytest (full suite)".into(),
        reason: "the targets (in `pytest`) failed first; fail_fast = \"targets\"".into(),
    }];
    let p = prompt_after(&[finish(r)], &cfg());
    assert!(
        p.contains("- not run: pytest (full suite) — the targets (in `pytest`) failed first; fail_fast = \"targets\""),
        "{p}"
    );
    assert!(p.contains("tests/test_cart.py::test_total"), "the targets' failure is fed back: {p}");
}

#[test]
fn scope_violation() {
    let mut r = changed(1, DIFF_A);
    r.allow = vec!["shop/**".into(), "tests/**".into()];
    r.scope = vec![
        ScopeFinding { path: "setup.cfg".into(), old_path: None, reason: ScopeReason::OutsideAllow, rule: None },
        ScopeFinding {
            path: "poetry.lock".into(),
            old_path: None,
            reason: ScopeReason::Denied,
            rule: Some("**/*.lock".into()),
        },
    ];
    insta::assert_snapshot!(prompt_after(&[finish(r)], &cfg()));
}

#[test]
fn verifier_rejection_is_advisory() {
    let mut r = changed(1, DIFF_A);
    r.checks = vec![check("pytest", CheckKind::Test, true)];
    r.verifier = Some(VerifierResult {
        answered: true,
        calls: 1,
        verdict: Some("needs_changes".into()),
        confidence: Some(0.85),
        required_change: Some("Apply the discount once, in Cart.total, not per item.".into()),
        critique: Some("The discount is applied twice when a coupon is present.\nSee checkout().".into()),
        problems: Vec::new(),
        min_confidence: 0.6,
    });
    insta::assert_snapshot!(prompt_after(&[finish(r)], &cfg()));
}

#[test]
fn empty_diff_timeout_crash_and_interrupted() {
    let mut empty = AttemptRecord::new(1);
    empty.agent = agent_ok();
    let mut timeout = AttemptRecord::new(2);
    timeout.agent = Some(AgentRun {
        timed_out: true,
        timeout_ms: 1_200_000,
        duration_ms: 1_200_000,
        last_activity: Some("shop/cart.py".into()),
        output_tail: vec!["thinking about the discount...".into()],
        ..AgentRun::default()
    });
    let mut crash = changed(3, DIFF_A);
    crash.agent = Some(AgentRun {
        exit_code: None,
        signal: Some(9),
        output_tail: vec!["Traceback (most recent call last):".into(), "MemoryError".into()],
        ..AgentRun::default()
    });
    let interrupted = AttemptRecord::interrupted(4, 3000);
    let all = [finish(empty), finish(timeout), finish(crash), interrupted];
    let mut snaps = String::new();
    for k in 1..=all.len() {
        let rc = required_change(&all[k - 1]);
        snaps.push_str(&format!("after attempt {k}: {} [{}]\n", rc.text, rc.source));
    }
    insta::assert_snapshot!("required_changes", snaps);
    let mut wide = cfg();
    wide.max_prior_attempts = 2;
    insta::assert_snapshot!("after_four", prompt_after(&all, &wide));
}

#[test]
fn pre_existing_failures_and_flaky_checks_are_not_blamed() {
    let mut r = changed(1, DIFF_A);
    let mut base_fail = check("mypy", CheckKind::Lint, true);
    base_fail.failing_on_base = true;
    base_fail.pre_existing = vec![Failure {
        key: "shop/legacy.py|arg-type|".into(),
        label: "shop/legacy.py:3: arg-type Argument 1 has incompatible type".into(),
        test: false,
        target: false,
    }];
    let mut flaky = check("pytest", CheckKind::Test, true);
    flaky.flaky = true;
    flaky.runs = 2;
    r.checks = vec![base_fail, flaky, ruff_failure()];
    let p = prompt_after(&[finish(r)], &cfg());
    assert!(p.contains("Check `mypy`: 1 diagnostic already on the base, none new; not yours, leave them"), "{p}");
    assert!(!p.contains("shop/legacy.py"), "the base's diagnostics are counted, not listed: {p}");
    assert!(p.contains("Check `pytest` is flaky"), "{p}");
    assert!(p.contains("**Required change:** Fix the 1 lint error that `ruff` reports in `shop/cart.py`."), "{p}");
}

#[test]
fn patterns_show_up_as_observations() {
    let mut a = changed(1, DIFF_A);
    a.checks = vec![pytest_failure()];
    let mut b = changed(2, DIFF_A);
    b.checks = vec![pytest_failure()];
    let p = prompt_after(&[finish(a), finish(b)], &cfg());
    assert!(
        p.contains("The same test failed in consecutive attempts: `tests/test_cart.py::test_total` (attempts 1 to 2).")
    );
    assert!(p.contains("Attempt 2's diff is identical to attempt 1's."));
    assert!(p.contains("Attempts 1 and 2 modified the same files: `shop/cart.py`."));
}

fn long_history() -> Vec<AttemptRecord> {
    (1..=3)
        .map(|n| {
            let mut diff: Vec<String> = DIFF_A.iter().map(|s| s.to_string()).collect();
            diff.extend((0..150).map(|i| format!("+    line {i} of attempt {n}")));
            let mut r = changed(n, &[]);
            r.diff = diff;
            let mut c = pytest_failure();
            c.digest.extend((0..60).map(|i| format!("  detail {i}")));
            r.checks = vec![c, ruff_failure()];
            finish(r)
        })
        .collect()
}

#[test]
fn tight_budget_cuts_old_attempts_first_and_says_so() {
    let mut c = cfg();
    c.max_tokens = 700;
    let history = long_history();
    let ctx = assemble(&task(), 4, 5, &history, &c);
    let r = render(&ctx, &c);
    assert!(r.prompt.len() - task().text.len() <= r.budget_bytes, "{} > {}", r.prompt.len(), r.budget_bytes);
    assert!(r.prompt.contains(
        "**Required change:** Make the failing test `tests/test_cart.py::test_total` pass (`pytest`), and fix F401 at `shop/cart.py:12` (`ruff`)."
    ));
    assert!(r.prompt.contains("lines omitted]"));
    assert!(r.prompt.contains("tests/test_cart.py::test_total - AssertionError"), "failing check output kept longest");
    let first_cut = r.cuts.iter().find(|c| c.why == "max_tokens").map(|c| c.section.clone());
    assert_eq!(first_cut.as_deref(), Some("patterns").or(first_cut.as_deref()), "cuts: {:?}", r.cuts);
    assert!(
        r.cuts.iter().any(|c| c.section == "attempt 1" && c.why == "max_tokens"),
        "oldest attempt cut: {:?}",
        r.cuts
    );
    insta::assert_snapshot!(r.prompt);
}

#[test]
fn task_first_puts_the_task_on_top() {
    let mut c = cfg();
    c.order = ContextOrder::TaskFirst;
    let mut r = changed(1, DIFF_A);
    r.checks = vec![pytest_failure()];
    let p = prompt_after(&[finish(r)], &c);
    assert!(p.starts_with("## Task\n\n# Fix the cart total\n"), "{p}");
    assert!(p.contains("\n## Attempt 2 of 3: the previous attempt failed\n"));
}

#[test]
fn same_inputs_same_bytes() {
    let h = long_history();
    assert_eq!(prompt_after(&h, &cfg()), prompt_after(&h.clone(), &cfg()));
}

fn arb_record(n: u32) -> impl Strategy<Value = AttemptRecord> {
    (0usize..8, 0usize..400, 0usize..120, 0usize..5, any::<bool>(), 0usize..3000).prop_map(
        move |(kind, diff_lines, out_lines, n_errors, verifier, critique)| {
            let mut r = changed(n, DIFF_A);
            r.diff.extend((0..diff_lines).map(|i| format!("+ changed line {i} {}", "x".repeat(i % 90))));
            match kind {
                0 => r.files.clear(),
                1 => r.agent.as_mut().map(|a| a.exit_code = Some(2)).unwrap_or(()),
                2 => {
                    r.scope = (0..n_errors + 1)
                        .map(|i| ScopeFinding {
                            path: format!("f{i}"),
                            old_path: None,
                            reason: ScopeReason::Denied,
                            rule: None,
                        })
                        .collect()
                }
                _ => {
                    let mut c = pytest_failure();
                    c.digest.extend((0..out_lines).map(|i| format!("  output {i} {}", "y".repeat(i % 70))));
                    let mut l = ruff_failure();
                    l.errors = (0..n_errors).flat_map(|_| l.errors.clone()).collect();
                    r.checks = vec![c, l];
                }
            }
            if verifier && kind > 4 {
                r.checks.iter_mut().for_each(|c| c.passed = true);
                r.verifier = Some(VerifierResult {
                    answered: true,
                    calls: 1,
                    verdict: Some("needs_changes".into()),
                    confidence: Some(0.9),
                    required_change: Some("Do it differently.".into()),
                    critique: Some("z".repeat(critique)),
                    problems: Vec::new(),
                    min_confidence: 0.6,
                });
            }
            finish(r)
        },
    )
}

fn arb_history() -> impl Strategy<Value = Vec<AttemptRecord>> {
    (1u32..6).prop_flat_map(|len| (1..=len).map(arb_record).collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The prompt never exceeds the budget except by the original task, and
    /// no cut ever drops the required change.
    #[test]
    fn budget_is_kept_and_the_required_change_survives(history in arb_history(), tokens in 400u32..6000) {
        let mut c = cfg();
        c.max_tokens = tokens;
        let n = history.len() as u32 + 1;
        let ctx = assemble(&task(), n, n + 1, &history, &c);
        let r = render(&ctx, &c);
        let required = &ctx.previous.as_ref().expect("previous").required_change.text;
        prop_assert!(r.prompt.contains(required.as_str()));
        prop_assert!(r.prompt.contains(&task().text));
        prop_assert!(
            r.prompt.len() - task().text.len() <= r.budget_bytes,
            "{} bytes without the task, budget {}", r.prompt.len() - task().text.len(), r.budget_bytes
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    /// With rejections, leading or not: the budget is kept, and every
    /// rejection's required change is in the prompt.
    #[test]
    fn every_rejections_required_change_survives_the_budget(
        history in arb_history(),
        tokens in 400u32..6000,
        critiques in proptest::collection::vec(1usize..200, 1..4),
        lead in any::<bool>(),
    ) {
        let mut c = cfg();
        c.max_tokens = tokens;
        let n = history.len() as u32 + 1;
        let last = n - 1;
        let reviews: Vec<crate::model::Review> = critiques
            .iter()
            .enumerate()
            .map(|(i, lines)| {
                let mut r = rejection_of(last, &format!("Make change number {i} of the review."));
                r.critique = Some((0..*lines).map(|l| format!("line {l} of critique {i}, with some words")).collect::<Vec<_>>().join("\n"));
                r
            })
            .collect();
        let round_first = if lead { n } else { 0 };
        let ctx = assemble_reviewed(&task(), (n, n + 1), (&history, &facts::Logs::default()), Reviews { all: &reviews, round_first }, &c);
        let r = render(&ctx, &c);
        for i in 0..critiques.len() {
            let rc = format!("Make change number {i} of the review.");
            prop_assert!(r.prompt.contains(&rc), "{rc} is missing:\n{}", r.prompt);
        }
        prop_assert_eq!(ctx.rejected, lead);
        if lead {
            let heading = format!("## ATTEMPT #{n} — previous attempt rejected");
            prop_assert!(r.prompt.starts_with(&heading));
        }
        prop_assert!(
            r.prompt.len() - task().text.len() <= r.budget_bytes,
            "{} bytes without the task, budget {}", r.prompt.len() - task().text.len(), r.budget_bytes
        );
    }
}

#[test]
fn several_failing_checks_make_one_sentence_naming_three_then_counting() {
    let mut r = changed(1, DIFF_A);
    let mut labelled = pytest_failure();
    labelled.name = "pytest-unit".into();
    labelled.failing_on_base = true;
    labelled.pre_existing = std::mem::take(&mut labelled.failures);
    let mut integrity = check("test-integrity", CheckKind::Custom, false);
    integrity.failures = vec![Failure {
        key: "test-integrity|removed|tests/test_cart.py::test_empty".into(),
        label: "`tests/test_cart.py::test_empty`: removed or renamed".into(),
        test: false,
        target: false,
    }];
    let mut timed_out = check("slow", CheckKind::Test, false);
    timed_out.timed_out = true;
    r.checks = vec![ruff_failure(), labelled, integrity, timed_out];
    let r = finish(r);
    let req = required_change(&r);
    assert_eq!(
        req.text,
        "Fix F401 at `shop/cart.py:12` (`ruff`), make the failing test `tests/test_cart.py::test_total` pass (`pytest-unit`; already failing on the base), restore the weakened test `tests/test_cart.py::test_empty` (`test-integrity`), and fix the 1 more failing check below."
    );
    assert_eq!(req.source, "check:ruff,pytest-unit,test-integrity,slow");
}

#[test]
fn acts_after_land_names_the_file_why_and_who_allows_it() {
    let mut r = changed(1, DIFF_A);
    r.scope = vec![ScopeFinding {
        path: ".github/workflows/x.yml".into(),
        old_path: None,
        reason: ScopeReason::ActsAfterLand,
        rule: Some(".github/workflows/**".into()),
    }];
    let prompt = prompt_after(&[finish(r.clone())], &cfg());
    for want in [
        "Revert your change to `.github/workflows/x.yml`: it acts once the change lands (GitHub Actions: run on pushes",
        "a human allows it by naming it in the task's or the config's `[scope] allow` (`\".github/workflows/**\"`)",
        "- `.github/workflows/x.yml`: acts-after-land: it acts once the change lands",
    ] {
        assert!(prompt.contains(want), "missing {want:?} in\n{prompt}");
    }
    // A command in .gitmodules: no allow glob lifts it, and the prompt says so.
    r.scope[0] = ScopeFinding {
        path: ".gitmodules".into(),
        old_path: None,
        reason: ScopeReason::ActsAfterLand,
        rule: Some("command in .gitmodules: update = !sh".into()),
    };
    let prompt = prompt_after(&[finish(r)], &cfg());
    assert!(
        prompt.contains("`.gitmodules` names a command git would run (update = !sh); no allow glob lifts that"),
        "{prompt}"
    );
    assert!(prompt.contains("only `[scope] acts_after_land = \"flag\"` or `\"off\"` lets it through"), "{prompt}");
}

/// Ten diagnostics in one 12-line function, each enriched with the same
/// snippet, and a 24-line diff: the snippet is shown once, each diagnostic
/// refers to it, and the diff stays whole however many diagnostics come.
fn shared_snippet_attempt() -> AttemptRecord {
    let mut diff: Vec<String> = DIFF_A.iter().map(|s| s.to_string()).collect();
    diff.extend((0..16).map(|i| format!("+        discount_{i} = self.rate * {i}  # spread the discount")));
    let mut r = changed(1, &[]);
    r.diff = diff;
    let snippet: String =
        (1..=12).map(|i| format!("   {:>2} |         value_{i} = compute(self, {i})\n", 10 + i)).collect();
    let mut l = ruff_failure();
    l.errors = (0..10)
        .map(|i| ErrorItem {
            tool: "ruff".into(),
            path: "shop/cart.py".into(),
            line: Some(11 + i),
            code: Some("F841".into()),
            message: format!("Local variable `value_{i}` is assigned to but never used"),
            scope: Some("Cart.total".into()),
            snippet: Some(snippet.clone()),
        })
        .collect();
    l.digest = (0..80)
        .map(|i| format!("  shop/cart.py:{}:9: F841 Local variable `value_{i}` is assigned to but never used", 11 + i))
        .collect();
    r.checks = vec![l, pytest_failure()];
    finish(r)
}

#[test]
fn a_snippet_shared_by_several_diagnostics_is_shown_once() {
    let p = prompt_after(&[shared_snippet_attempt()], &cfg());
    let first = "   11 |         value_1 = compute(self, 1)";
    assert_eq!(p.matches(first).count(), 1, "{p}");
    for i in 0..10 {
        assert!(p.contains(&format!("`value_{i}`")), "diagnostic {i} is named: {p}");
    }
}

#[test]
fn a_short_diff_is_kept_whole_before_diagnostics() {
    let mut c = cfg();
    c.max_tokens = 1500;
    let r = shared_snippet_attempt();
    let whole = r.diff.clone();
    let ctx = assemble(&task(), 2, 3, &[r], &c);
    let out = render(&ctx, &c);
    for line in &whole {
        assert!(out.prompt.contains(line.as_str()), "diff line {line:?} was cut: {}", out.prompt);
    }
    assert!(out.prompt.len() - task().text.len() <= out.budget_bytes);
}

/// The blocks of a prompt that must not repeat: each fenced code block's
/// body, and each line of 40 characters or more outside a fence
/// (trimmed).
fn repeated_blocks(prompt: &str) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut repeated = Vec::new();
    let mut fence: Option<Vec<&str>> = None;
    for line in prompt.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            match fence.take() {
                Some(body) => {
                    let body = body.join("\n");
                    if !body.trim().is_empty() && !seen.insert(format!("fence:{body}")) {
                        repeated.push(body);
                    }
                }
                None => fence = Some(Vec::new()),
            }
            continue;
        }
        match &mut fence {
            Some(body) => body.push(t),
            None if t.len() >= 40 && !seen.insert(format!("line:{t}")) => repeated.push(t.to_string()),
            None => {}
        }
    }
    repeated
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// No block of code or text appears twice in one prompt, whatever the
    /// history and the budget.
    #[test]
    fn no_block_appears_twice(history in arb_history(), tokens in 400u32..6000) {
        let mut c = cfg();
        c.max_tokens = tokens;
        let n = history.len() as u32 + 1;
        let r = render(&assemble(&task(), n, n + 1, &history, &c), &c);
        let body = r.prompt.replace(&task().text, "");
        let repeated = repeated_blocks(&body);
        prop_assert!(repeated.is_empty(), "repeated: {:?}\n{}", repeated, r.prompt);
    }
}

/// A success rejected by a reviewer: a required change, a critique of
/// several lines and two line comments (as `retry-run review` records
/// them).
fn rejection_of(attempt: u32, required: &str) -> crate::model::Review {
    use crate::model::{LineComment, Review, Verdict};
    Review {
        verdict: Verdict::Rejected,
        attempt,
        commit: format!("{attempt}abcdef0123456789"),
        by: "Ann Reviewer <ann@example.com>".into(),
        required_change: Some(required.into()),
        critique: Some("The discount is applied to every item,\nincluding the ones already on sale.\n\nKeep `import os` out of it.".into()),
        comments: vec![
            LineComment {
                path: "shop/cart.py".into(),
                start: 11,
                end: 11,
                text: "Why import os here?".into(),
                lines: vec!["+        import os".into()],
                by: None,
            },
            LineComment {
                path: "shop/cart.py".into(),
                start: 12,
                end: 12,
                text: "Sale items must keep their price.".into(),
                lines: vec!["-        return sum(self.items)".into(), "+        return sum(self.items) * self.discount".into()],
                by: None,
            },
        ],
        ..Review::default()
    }
}

/// A round that succeeded at attempt 1.
fn succeeded_once() -> AttemptRecord {
    let mut r = changed(1, DIFF_A);
    r.checks = vec![check("pytest", CheckKind::Test, true)];
    r.commit = Some("1abcdef0123456789".into());
    finish(r)
}

fn prompt_reviewed(
    prior: &[AttemptRecord],
    reviews: &[crate::model::Review],
    round_first: u32,
    cfg: &ContextConfig,
) -> super::render::Rendered {
    let n = prior.last().map_or(1, |r| r.number + 1);
    let ctx = assemble_reviewed(
        &task(),
        (n, round_first + 2),
        (prior, &facts::Logs::default()),
        Reviews { all: reviews, round_first },
        cfg,
    );
    render(&ctx, cfg)
}

#[test]
fn a_rejection_leads_the_next_round() {
    let reviews = [rejection_of(1, "Apply the discount only to items not on sale.")];
    let r = prompt_reviewed(&[succeeded_once()], &reviews, 2, &cfg());
    insta::assert_snapshot!(r.prompt);
    assert!(
        r.prompt.starts_with("## ATTEMPT #2 — previous attempt rejected\n\n**Required change:** Apply the discount")
    );
    let ctx = assemble_reviewed(
        &task(),
        (2, 4),
        (&[succeeded_once()], &facts::Logs::default()),
        Reviews { all: &reviews, round_first: 2 },
        &cfg(),
    );
    assert!(ctx.sources().contains(&"review".to_string()));
    assert_eq!(ctx.required_change().as_deref(), Some("Apply the discount only to items not on sale."));
    assert_eq!(render(&ctx, &cfg()).prompt, r.prompt, "same inputs, same bytes");
}

#[test]
fn a_second_rejection_keeps_the_first_latest_first() {
    let mut second = succeeded_once();
    second.number = 2;
    second.commit = Some("2abcdef0123456789".into());
    let mut again = rejection_of(2, "Keep sale prices as they are.");
    again.critique = Some("Still discounts sale items.".into());
    again.comments.clear();
    let reviews = [rejection_of(1, "Apply the discount only to items not on sale."), again];
    let p = prompt_reviewed(&[succeeded_once(), second], &reviews, 3, &cfg()).prompt;
    assert!(
        p.starts_with(
            "## ATTEMPT #3 — previous attempt rejected\n\n**Required change:** Keep sale prices as they are."
        ),
        "{p}"
    );
    let earlier = p.find("### Earlier rejections (latest first)").expect(&p);
    let first = p.find("- Attempt 1 (by Ann Reviewer <ann@example.com>, in review): Required change: Apply the discount only to items not on sale.").expect(&p);
    assert!(earlier < first && first < p.find("## Task").expect("task"), "{p}");
    assert!(p[first..].contains("> The discount is applied to every item,"), "the first critique is kept: {p}");
}

#[test]
fn later_attempts_lead_with_the_failure_and_keep_every_rejection() {
    let reviews = [rejection_of(1, "Apply the discount only to items not on sale.")];
    let mut failed = changed(2, DIFF_A);
    failed.checks = vec![pytest_failure()];
    let p = prompt_reviewed(&[succeeded_once(), finish(failed)], &reviews, 2, &cfg()).prompt;
    assert!(p.starts_with("## Attempt 3 of 4: the previous attempt failed"), "{p}");
    assert!(p.contains("### Reviewers' rejections of this task's results (latest first)\n- Attempt 1 (by Ann Reviewer <ann@example.com>, in review): Required change: Apply the discount only to items not on sale."), "{p}");
    // No round after a rejection: nothing leads, nothing is said.
    let none = prompt_reviewed(&[succeeded_once()], &[], 2, &cfg()).prompt;
    assert!(!none.contains("rejected") && !none.contains("Reviewers'"), "{none}");
}

#[test]
fn a_tight_budget_cuts_the_critique_last_says_so_and_never_the_required_change() {
    let mut long = rejection_of(1, "Apply the discount only to items not on sale.");
    long.critique =
        Some((0..400).map(|i| format!("critique line {i} of a long review")).collect::<Vec<_>>().join("\n"));
    let mut c = cfg();
    c.max_tokens = 600;
    let r = prompt_reviewed(&[succeeded_once()], &[long], 2, &c);
    assert!(r.prompt.contains("**Required change:** Apply the discount only to items not on sale."), "{}", r.prompt);
    assert!(
        r.cuts.iter().any(|c| c.section == "reviewer critique" && c.why == "max_verifier_feedback_chars"),
        "{:?}",
        r.cuts
    );
    assert!(r.prompt.contains("> critique line 0 of a long review"), "{}", r.prompt);
    assert!(r.prompt.contains(" lines omitted]"), "{}", r.prompt);
}
