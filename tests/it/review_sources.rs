//! `retry-run review` fed from where the result went: a CI log captured
//! from a real pytest run (plain, and as GitHub Actions writes it), a pull
//! request read through a stand-in `gh` that prints GitHub's documented
//! JSON and records its calls, and review files good and bad. Each is
//! recorded as a `Reviewed` event of the task, or refused with nothing
//! recorded.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::{events, of_type};
use crate::support::{FakeAgent, Run, TestEnv};

/// The captured CI logs and the project they were captured on.
fn ci_log(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/review/ci-log").join(name)
}

fn captured(rel: &str) -> String {
    std::fs::read_to_string(ci_log("project").join(rel)).expect("a captured project file")
}

const CONFIG: &str =
    "[retry]\nbaseline = false\n\n[[check]]\nname = \"pytest\"\nrun = \"true\"\nkind = \"test\"\nformat = \"pytest\"\n";

/// A repository whose task `t` succeeded: its agent wrote the cart and its
/// tests as the CI log's project has them.
fn shop(env: &TestEnv) -> PathBuf {
    let r = env
        .repo("repo")
        .file("pyproject.toml", captured("pyproject.toml"))
        .file("shop/__init__.py", "")
        .file("retry-run.toml", CONFIG)
        .commit();
    let agent = env.agent(
        FakeAgent::new()
            .write("shop/cart.py", &captured("shop/cart.py"))
            .write("tests/test_cart.py", &captured("tests/test_cart.py")),
    );
    env.run_agent(&r, &["run", "--quiet", "--task", "Add a cart", "--id", "t"], &agent).assert_code(0);
    r
}

/// The `Reviewed` events of task `t`.
fn reviews(r: &Path) -> Vec<Value> {
    of_type(&events(r, "t"), "Reviewed").into_iter().cloned().collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

// ---- --from-log ----

#[test]
fn a_ci_log_of_a_real_pytest_run_becomes_a_rejection_naming_the_failing_test_and_its_scope() {
    let env = TestEnv::new();
    let r = shop(&env);
    for (n, log) in ["pytest.log", "actions.log", "gh-run-log.log"].into_iter().enumerate() {
        let path = ci_log(log);
        let out = env.run(
            &r,
            &["review", "t", "--from-log", path.to_str().expect("utf-8"), "--check", "pytest", "--by", "CI", "--json"],
        );
        out.assert_code(0);
        let review = out.json();
        assert_eq!(review["verdict"], "rejected", "{log}");
        assert_eq!(review["channel"], "log", "{log}");
        assert_eq!(review["by"], "CI");
        assert_eq!(review["source"], format!("{log} (check pytest)").as_str());
        let required = review["required_change"].as_str().unwrap_or_default();
        assert!(
            required.starts_with("Make the failing tests pass: `tests/test_cart.py::test_total_applies_a_percentage_discount` and `tests/test_cart.py::test_parse_price_reads_whole_numbers`; they fail in CI (assert -180 == 18)"),
            "{log}: {required}"
        );
        let failures = strings(&review["failures"]);
        assert!(
            failures.iter().any(|f| f.starts_with("tests/test_cart.py::test_parse_price_reads_whole_numbers")),
            "{log}: {failures:?}"
        );
        // The error's place and its enclosing scope, read from the judged
        // commit's files; nothing of what CI added.
        let output = strings(&review["output"]).join("\n");
        assert!(output.contains("- `shop/cart.py:19` pytest ValueError"), "{log}:\n{output}");
        assert!(output.contains("(in `parse_price`)"), "{log}:\n{output}");
        assert!(output.contains(">  19 |     return int(whole) + int(cents) / 100"), "{log}:\n{output}");
        for noise in ["\u{1b}[", "##[", "2026-05-01T", "/home/runner", "/builds/"] {
            assert!(!output.contains(noise), "{log}: {noise:?} left in:\n{output}");
        }
        // Recorded in the task's log, for the attempt that succeeded.
        let recorded = reviews(&r);
        assert_eq!(recorded.len(), n + 1, "{log}");
        assert_eq!(recorded[n]["channel"], "log");
        assert_eq!(recorded[n]["attempt"], 1);
        assert_eq!(recorded[n]["required_change"], review["required_change"]);
    }
}

#[test]
fn a_ci_log_in_which_nothing_failed_an_unknown_check_or_a_missing_log_is_refused() {
    let env = TestEnv::new();
    let r = shop(&env);
    let passed = ci_log("passed.log");
    let out = env.run(&r, &["review", "t", "--from-log", passed.to_str().expect("utf-8"), "--check", "pytest"]);
    out.assert_code(2);
    assert!(out.error_line().contains("passed.log: nothing failed in it"), "{}", out.stderr);
    assert!(out.hints().iter().any(|h| h.contains("--required-change")), "{}", out.stderr);

    let log = ci_log("pytest.log");
    let out = env.run(&r, &["review", "t", "--from-log", log.to_str().expect("utf-8"), "--check", "tests"]);
    out.assert_code(2);
    assert!(
        out.error_line().contains("--check tests: the config has no check named `tests` (its checks: `pytest`)"),
        "{}",
        out.stderr
    );

    let out = env.run(&r, &["review", "t", "--from-log", "no-such.log", "--check", "pytest"]);
    out.assert_code(2);
    assert!(out.error_line().contains("no-such.log: cannot read the CI log"), "the file is named: {}", out.stderr);
    assert!(reviews(&r).is_empty(), "nothing recorded");
}

// ---- --from-github-pr ----

/// A directory with a stand-in `gh` that records its arguments (one line
/// per call, in `calls`) and answers as GitHub's API would: `auth status`
/// with `auth_exit`, `pr view` with `view`, `api` with `comments`.
fn fake_gh(env: &TestEnv, auth_exit: i32, view: &str, comments: &str) -> (PathBuf, PathBuf) {
    let bin = env.path("gh-bin");
    let calls = env.path("gh-calls");
    let view_file = env.write("gh-data/view.json", view);
    let comments_file = env.write("gh-data/comments.json", comments);
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{calls}'\n\
         case \"$1 $2\" in\n\
         'auth status')\n\
           if [ {auth_exit} -ne 0 ]; then echo 'You are not logged into any GitHub hosts. To log in, run: gh auth login' >&2; exit {auth_exit}; fi\n\
           echo 'github.com' >&2; echo '  ✓ Logged in to github.com account octo (keyring)' >&2; exit 0 ;;\n\
         'pr view') cat '{view}' ;;\n\
         'api --paginate') cat '{comments}' ;;\n\
         *) echo \"unknown command: $*\" >&2; exit 1 ;;\n\
         esac\n",
        calls = calls.display(),
        view = view_file.display(),
        comments = comments_file.display(),
    );
    env.write("gh-bin/gh", script);
    let gh = bin.join("gh");
    std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    (bin, calls)
}

/// The test's PATH without any real `gh`, with `first` ahead of it when
/// given.
fn path_with(env: &TestEnv, first: Option<&Path>) -> OsString {
    let dirs = std::env::split_paths(env.path_var()).filter(|d| !d.join("gh").exists());
    std::env::join_paths(first.map(Path::to_path_buf).into_iter().chain(dirs)).expect("a PATH")
}

fn review_with_gh(env: &TestEnv, r: &Path, path: &OsString, args: &[&str]) -> Run {
    Run::of(env.retry_run(r).env("PATH", path).args(args))
}

/// The head of the pull request (not checked against the task: a PR may
/// carry the task's branch rebased).
const HEAD: &str = "9f1c2b7a4e5d6c8b0a1f2e3d4c5b6a7980123456";

/// `gh pr view 12 --json number,headRefOid,reviews,statusCheckRollup`
/// in the shape `gh` prints it: alice requests changes, bob comments
/// without a body (his comments are line comments), one check run failed
/// and one passed.
fn pr_view() -> String {
    serde_json::json!({
        "headRefOid": HEAD,
        "number": 12,
        "reviews": [
            {
                "id": "PRR_kwDOAbc1", "author": {"login": "alice"}, "authorAssociation": "MEMBER",
                "body": "Apply the discount as a percentage. Ten means ten percent, not ten times.\n\nAnd keep `parse_price` strict.",
                "submittedAt": "2026-05-01T12:10:00Z", "includesCreatedEdit": false, "reactionGroups": [],
                "state": "CHANGES_REQUESTED", "commit": {"oid": HEAD}
            },
            {
                "id": "PRR_kwDOAbc2", "author": {"login": "bob"}, "authorAssociation": "CONTRIBUTOR",
                "body": "", "submittedAt": "2026-05-01T12:11:00Z", "includesCreatedEdit": false,
                "reactionGroups": [], "state": "COMMENTED", "commit": {"oid": HEAD}
            }
        ],
        "statusCheckRollup": [
            {
                "__typename": "CheckRun", "completedAt": "2026-05-01T12:05:00Z", "conclusion": "FAILURE",
                "detailsUrl": "https://github.com/acme/shop/actions/runs/42/job/7", "name": "test",
                "startedAt": "2026-05-01T12:00:00Z", "status": "COMPLETED", "workflowName": "CI"
            },
            {
                "__typename": "CheckRun", "completedAt": "2026-05-01T12:01:00Z", "conclusion": "SUCCESS",
                "detailsUrl": "https://github.com/acme/shop/actions/runs/42/job/8", "name": "lint",
                "startedAt": "2026-05-01T12:00:00Z", "status": "COMPLETED", "workflowName": "CI"
            }
        ],
        "url": "https://github.com/acme/shop/pull/12"
    })
    .to_string()
}

/// `gh api --paginate repos/{owner}/{repo}/pulls/12/comments`: the REST
/// API's review comments, as older `gh` prints two pages (one array each).
fn pr_comments() -> String {
    let comment = |id: u64, login: &str, path: &str, line: Value, start: Value, body: &str| {
        serde_json::json!({
            "url": format!("https://api.github.com/repos/acme/shop/pulls/comments/{id}"),
            "pull_request_review_id": 1, "id": id, "node_id": "PRRC_x", "diff_hunk": "@@ -0,0 +1,19 @@",
            "path": path, "commit_id": HEAD, "original_commit_id": HEAD,
            "user": {"login": login, "id": 1, "type": "User"}, "body": body,
            "created_at": "2026-05-01T12:10:00Z", "updated_at": "2026-05-01T12:10:00Z",
            "author_association": "MEMBER", "start_line": start, "original_start_line": start,
            "start_side": if start.is_null() { Value::Null } else { Value::from("RIGHT") },
            "line": line, "original_line": line, "side": "RIGHT", "subject_type": "line"
        })
    };
    let first = serde_json::json!([comment(
        101,
        "alice",
        "shop/cart.py",
        14.into(),
        13.into(),
        "This multiplies by ten: divide by 100."
    ),]);
    let second = serde_json::json!([
        comment(102, "bob", "shop/cart.py", 19.into(), Value::Null, "`int('')` fails for a whole number."),
        comment(103, "bob", "README.md", Value::Null, Value::Null, "Outdated: say what discount means."),
    ]);
    format!("{first}\n{second}\n")
}

#[test]
fn a_pull_requests_reviews_comments_and_failed_checks_are_read_through_gh() {
    let env = TestEnv::new();
    let r = shop(&env);
    let (bin, calls) = fake_gh(&env, 0, &pr_view(), &pr_comments());
    let path = path_with(&env, Some(&bin));
    let out = review_with_gh(&env, &r, &path, &["review", "t", "--from-github-pr", "12", "--json"]);
    out.assert_code(0);
    let review = out.json();
    assert_eq!(review["verdict"], "rejected");
    assert_eq!(review["channel"], "github-pr");
    assert_eq!(review["by"], "alice", "the reviewer who requested changes");
    assert_eq!(review["source"], "pull request #12 (head 9f1c2b7)");
    assert_eq!(review["required_change"], "Apply the discount as a percentage.");
    let critique = review["critique"].as_str().unwrap_or_default();
    assert!(
        critique.starts_with(
            "Apply the discount as a percentage. Ten means ten percent, not ten times.\n\nAnd keep `parse_price` strict."
        ),
        "the change request verbatim:\n{critique}"
    );
    assert!(critique.contains("Outdated: say what discount means."), "a comment on no line:\n{critique}");
    assert_eq!(
        strings(&review["failures"]),
        ["check `CI / test` failed (failure): https://github.com/acme/shop/actions/runs/42/job/7"]
    );
    let comments = review["comments"].as_array().cloned().unwrap_or_default();
    let placed: Vec<(String, u64, u64, String)> = comments
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap_or_default().to_string(),
                c["start"].as_u64().unwrap_or_default(),
                c["end"].as_u64().unwrap_or_default(),
                c["by"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        placed,
        [("shop/cart.py".into(), 13, 14, "alice".into()), ("shop/cart.py".into(), 19, 19, "bob".into())]
    );
    assert!(comments[0]["lines"].as_array().is_some_and(|l| !l.is_empty()), "placed on the diff's lines: {comments:?}");
    // The calls gh got, in order, and nothing else.
    let said = std::fs::read_to_string(&calls).expect("gh was called");
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        [
            "auth status",
            "pr view 12 --json number,headRefOid,reviews,statusCheckRollup",
            "api --paginate repos/{owner}/{repo}/pulls/12/comments",
        ]
    );
    assert_eq!(reviews(&r).len(), 1);
}

#[test]
fn an_approved_pull_request_with_green_checks_is_an_approval() {
    let env = TestEnv::new();
    let r = shop(&env);
    let view = serde_json::json!({
        "headRefOid": HEAD, "number": 7, "url": "https://github.com/acme/shop/pull/7",
        "reviews": [{"author": {"login": "carol"}, "body": "Ship it.", "state": "APPROVED"}],
        "statusCheckRollup": [{"__typename": "CheckRun", "name": "test", "status": "COMPLETED", "conclusion": "SUCCESS",
            "workflowName": "CI", "detailsUrl": "https://github.com/acme/shop/actions/runs/1/job/1"}]
    });
    let (bin, _) = fake_gh(&env, 0, &view.to_string(), "[]");
    let out =
        review_with_gh(&env, &r, &path_with(&env, Some(&bin)), &["review", "t", "--from-github-pr", "7", "--json"]);
    out.assert_code(0);
    let review = out.json();
    assert_eq!((review["verdict"].as_str(), review["by"].as_str()), (Some("approved"), Some("carol")));
}

#[test]
fn a_pull_request_with_nothing_to_record_is_refused() {
    let env = TestEnv::new();
    let r = shop(&env);
    let view = serde_json::json!({"headRefOid": HEAD, "number": 7, "reviews": [], "statusCheckRollup": [
        {"__typename": "CheckRun", "name": "test", "status": "IN_PROGRESS", "conclusion": ""}]});
    let (bin, _) = fake_gh(&env, 0, &view.to_string(), "[]");
    let out = review_with_gh(&env, &r, &path_with(&env, Some(&bin)), &["review", "t", "--from-github-pr", "7"]);
    out.assert_code(2);
    assert!(out.error_line().contains("pull request #7 has nothing to record"), "{}", out.stderr);
    assert!(out.error_line().contains("1 check still running"), "{}", out.stderr);
    assert!(reviews(&r).is_empty());
}

#[test]
fn gh_missing_or_not_logged_in_is_a_clear_error_and_nothing_is_recorded() {
    let env = TestEnv::new();
    let r = shop(&env);
    let out = review_with_gh(&env, &r, &path_with(&env, None), &["review", "t", "--from-github-pr", "12"]);
    out.assert_code(3);
    assert!(out.error_line().contains("needs GitHub's `gh` program"), "{}", out.stderr);
    assert_eq!(out.hints(), ["install GitHub's gh CLI (https://cli.github.com) or use --from-file"]);

    let (bin, calls) = fake_gh(&env, 1, &pr_view(), &pr_comments());
    let out = review_with_gh(&env, &r, &path_with(&env, Some(&bin)), &["review", "t", "--from-github-pr", "12"]);
    out.assert_code(3);
    assert!(out.error_line().contains("`gh` is not logged in"), "{}", out.stderr);
    assert!(out.error_line().contains("You are not logged into any GitHub hosts"), "gh's words: {}", out.stderr);
    assert!(out.hints().iter().any(|h| h.contains("gh auth login")), "{}", out.stderr);
    let said = std::fs::read_to_string(&calls).expect("gh was called");
    assert_eq!(said.lines().collect::<Vec<_>>(), ["auth status"], "nothing asked of GitHub without a login");
    assert!(reviews(&r).is_empty());
}

// ---- --from-file ----

#[test]
fn a_review_file_is_recorded_as_written() {
    let env = TestEnv::new();
    let r = shop(&env);
    let file = env.write(
        "review.json",
        serde_json::json!({
            "version": 1,
            "verdict": "rejected",
            "required_change": "Apply the discount as a percentage.",
            "critique": "Ten means ten percent.\n  Not ten times.\n",
            "by": "review-bot",
            "comments": [{"path": "shop/cart.py", "start": 13, "end": 14, "text": "divide by 100", "by": "carol"}],
            "failures": ["tests/test_cart.py::test_total_applies_a_percentage_discount"],
            "source": "gitlab MR !7"
        })
        .to_string(),
    );
    let out = env.run(&r, &["review", "t", "--from-file", file.to_str().expect("utf-8"), "--json"]);
    out.assert_code(0);
    let recorded = reviews(&r);
    assert_eq!(recorded.len(), 1);
    let review = &recorded[0];
    assert_eq!(review["channel"], "file");
    assert_eq!(review["by"], "review-bot");
    assert_eq!(review["source"], "gitlab MR !7");
    assert_eq!(review["critique"], "Ten means ten percent.\n  Not ten times.\n", "verbatim");
    assert_eq!(review["comments"][0]["by"], "carol");
    assert_eq!((review["comments"][0]["start"].as_u64(), review["comments"][0]["end"].as_u64()), (Some(13), Some(14)));

    let approval = env.write("approve.json", r#"{"verdict": "approved"}"#);
    let out = env.run(&r, &["review", "t", "--from-file", approval.to_str().expect("utf-8"), "--by", "Dana", "--json"]);
    out.assert_code(0);
    assert_eq!((out.json()["verdict"].as_str(), out.json()["by"].as_str()), (Some("approved"), Some("Dana")));
}

#[test]
fn a_bad_review_file_is_refused_with_the_json_path_and_nothing_is_recorded() {
    let env = TestEnv::new();
    let r = shop(&env);
    let cases = [
        (r#"{"verdict": "lgtm"}"#, "$.verdict: \"lgtm\" is not a verdict: say \"approved\" or \"rejected\""),
        (r#"{"verdict": "rejected", "critique": "no"}"#, "$.required_change: missing: a rejection needs"),
        (
            r#"{"verdict": "rejected", "required_change": "Fix it.", "comments": [{"path": "shop/cart.py", "start": 9, "end": 3, "text": "x"}]}"#,
            "$.comments[0].end: 3 is before start 9",
        ),
        (r#"{"verdict": "approved", "verdcit": 1}"#, "$.verdcit: unknown field"),
        ("{\"verdict\": ", "$: not JSON"),
    ];
    for (text, said) in cases {
        let file = env.write("bad.json", text);
        let out = env.run(&r, &["review", "t", "--from-file", file.to_str().expect("utf-8")]);
        out.assert_code(2);
        let line = out.error_line();
        assert!(line.contains(&format!("bad.json: {said}")), "{text}: {}", out.stderr);
        assert!(out.hints().iter().any(|h| h.contains("docs/review-file.md")), "{}", out.stderr);
    }
    let out = env.run(&r, &["review", "t", "--from-file", "missing.json"]);
    out.assert_code(2);
    assert!(out.error_line().contains("missing.json: cannot read the review file"), "{}", out.stderr);
    assert!(reviews(&r).is_empty(), "nothing recorded");
}
