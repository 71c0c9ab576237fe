//! `retry-run ui` (docs/ui.md) in a real browser: Debian's chromium,
//! headless, driven through chromedriver. The records are made by real
//! runs of scripted agents (a success after a failure, an escalation, a
//! task in lanes, a task with a review round, a running task); the tests
//! check that the pages show their numbers and diffs, that a running
//! task's page shows each new attempt without a reload, that a rejection
//! with a line comment posted from the page is recorded exactly as
//! `retry-run review` records it (but for its channel), that land from
//! the page lands, that an agent's script tags, event handlers and
//! `javascript:` links never run in the page, and that requests without
//! the token, from another origin or for paths outside the record are
//! refused. With `RETRY_RUN_UI_SCREENSHOTS=<dir>` each page is
//! photographed into it (docs/ui/ holds the pictures of one run).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::browser::{Browser, Ui, http};
use crate::support::record::{events, of_type};
use crate::support::{FakeAgent, Run, TestEnv};

/// A Python project whose unittest passes once `app.py` says `value = 2`.
fn project(env: &TestEnv) -> PathBuf {
    env.repo("repo")
        .file("app.py", "value = 1\nlog = \"off\"\n")
        .file(
            "test_app.py",
            "import unittest\n\nimport app\n\n\nclass AppTest(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(app.value, 2)\n",
        )
        .file(
            "retry-run.toml",
            "[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"python3 -m unittest -v\"\nkind = \"test\"\n",
        )
        .commit()
}

/// `retry-run run` of `task` as `id` with `agent`, to its end.
fn run(env: &TestEnv, r: &Path, id: &str, task: &str, extra: &[&str], agent: &FakeAgent) -> Run {
    let a = env.agent(agent.clone());
    let mut args = vec!["run", "--quiet", "--task", task, "--id", id];
    args.extend_from_slice(extra);
    env.run_agent(r, &args, &a)
}

/// Attempt 1 sets the value to 3 (its test fails), attempt 2 to 2.
fn second_time_right() -> FakeAgent {
    FakeAgent::new()
        .write("app.py", "value = 3\nlog = \"off\"\n")
        .next_call()
        .write("app.py", "value = 2\nlog = \"off\"\n")
}

/// The records of real runs in one repository: `fixed` (a failure, then
/// a success), `stuck` (escalated after two failures), `raced` (two lanes,
/// lane 2 right), `reviewed` (a success rejected by a reviewer with a line
/// comment, then run again to a second success).
fn records(env: &TestEnv) -> PathBuf {
    let r = project(env);
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);
    run(env, &r, "fixed", "Set the value to 2", &["--max-attempts", "3"], &second_time_right()).assert_code(0);
    let wrong =
        FakeAgent::new().write("app.py", "value = 5\nlog = \"off\"\n").next_call().write("app.py", "value = 7\n");
    run(env, &r, "stuck", "Set the value to 2 (stuck)", &["--max-attempts", "2"], &wrong).assert_code(1);
    let lanes = FakeAgent::new().sh(
        "if [ \"$RETRY_RUN_LANE\" = 2 ]; then printf 'value = 2\\nlog = \"off\"\\n' > app.py; else printf 'value = 4\\n' > app.py; fi",
    );
    run(env, &r, "raced", "Set the value to 2 in lanes", &["--lanes", "2", "--max-attempts", "2"], &lanes)
        .assert_code(0);
    let reviewed = FakeAgent::new()
        .write("app.py", "value = 2\nlog = \"off\"\ndebug = True\n")
        .next_call()
        .write("app.py", "value = 2\nlog = \"on\"\n");
    run(env, &r, "reviewed", "Set the value to 2, reviewed", &[], &reviewed).assert_code(0);
    env.run(
        &r,
        &[
            "review",
            "reviewed",
            "--required-change",
            "Drop the debug flag.",
            "--comment",
            "app.py:3",
            "no debug in production",
        ],
    )
    .assert_code(0);
    let again = env.agent(reviewed);
    env.run_agent(&r, &["run", "--quiet", "--id", "reviewed", "--again"], &again).assert_code(0);
    r
}

/// The row of the task list that names `id`.
fn row(b: &Browser, id: &str) -> String {
    let rows = b.texts("tr");
    rows.into_iter()
        .find(|t| t.split_whitespace().any(|w| w == id))
        .unwrap_or_else(|| panic!("no row names {id}; the page says:\n{}", b.page_text()))
}

#[test]
fn the_pages_show_the_numbers_and_diffs_of_real_runs() {
    let env = TestEnv::new();
    let r = records(&env);
    let Some(b) = Browser::start(&env) else { return };
    let ui = Ui::start(&env, &r, &[]);
    b.goto(&ui.url);

    // The task list: one row per task, with its state and attempts.
    for (id, words) in [
        ("fixed", vec!["succeeded", "2"]),
        ("stuck", vec!["escalated", "2"]),
        ("raced", vec!["succeeded", "2"]),
        ("reviewed", vec!["succeeded", "2"]),
    ] {
        let text = row(&b, id).to_lowercase();
        for w in words {
            assert!(
                text.split_whitespace().any(|t| t.trim_matches(|c: char| !c.is_alphanumeric()) == w),
                "{id}: {w} in {text:?}"
            );
        }
    }
    b.screenshot("tasks");

    // A task: its timeline of attempts with their outcomes.
    b.goto(&ui.at("/tasks/fixed"));
    let text = b.page_text();
    assert!(text.contains("Set the value to 2"), "{text}");
    assert!(text.contains("Attempt 1") || text.contains("attempt 1"), "{text}");
    b.screenshot("task");

    // An attempt: its diff, against the base and against the previous one.
    b.goto(&ui.at("/tasks/fixed/attempts/2"));
    let text = b.page_text();
    assert!(text.contains("value = 2"), "{text}");
    assert!(text.contains("value = 1"), "the base's line is shown: {text}");
    b.screenshot("attempt");
    b.goto(&ui.at("/tasks/fixed/attempts/2?against=previous&layout=split"));
    let text = b.page_text();
    assert!(text.contains("value = 3") && text.contains("value = 2"), "{text}");
    assert!(!text.contains("value = 1"), "against the previous attempt, not the base: {text}");
    b.screenshot("attempt-split");

    // The prompt it received and a check's full output.
    b.goto(&ui.at("/tasks/fixed/attempts/2/prompt"));
    assert!(b.page_text().contains("Set the value to 2"), "{}", b.page_text());
    b.screenshot("prompt");
    b.goto(&ui.at("/tasks/fixed/attempts/1/checks/tests"));
    assert!(b.page_text().contains("test_value"), "{}", b.page_text());
    b.screenshot("check");

    // A review round on the timeline.
    b.goto(&ui.at("/tasks/reviewed"));
    let text = b.page_text();
    assert!(text.contains("Drop the debug flag."), "{text}");
    b.screenshot("review-round");

    // The lanes side by side; the stats as charts.
    b.goto(&ui.at("/tasks/raced/lanes"));
    let text = b.page_text();
    assert!(text.contains("value = 2") || text.to_lowercase().contains("lane 2"), "{text}");
    b.screenshot("lanes");
    b.goto(&ui.at("/stats"));
    assert!(b.count("svg") >= 1, "the stats are drawn as SVG: {}", b.page_text());
    b.screenshot("stats");
    let (code, _) = ui.interrupt();
    assert_eq!(code, Some(0), "Ctrl-C ends `retry-run ui` cleanly");
}

/// The `Reviewed` event of `task`, without what differs between two
/// records of the same review (its place in the log, its time, its
/// channel) and with its commit checked against the task's snapshot ref.
fn reviewed_event(env: &TestEnv, r: &Path, task: &str) -> (Value, String) {
    let ev = events(r, task);
    let all = of_type(&ev, "Reviewed");
    assert_eq!(all.len(), 1, "{task}: one Reviewed event: {ev:?}");
    let mut e = all[0].clone();
    assert_eq!(
        e["commit"].as_str().map(str::to_string),
        Some(env.git(r, &["rev-parse", &format!("refs/retry-run/{task}/1")]))
    );
    let channel = e["channel"].as_str().unwrap_or_default().to_string();
    let m = e.as_object_mut().expect("an object");
    for k in ["seq", "ts", "prev", "channel", "commit"] {
        m.remove(k);
    }
    (e, channel)
}

#[test]
fn a_rejection_with_a_line_comment_and_a_land_from_the_page_are_what_the_commands_record() {
    let env = TestEnv::new();
    let r = project(&env);
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);
    let agent = FakeAgent::new().write("app.py", "value = 2\nlog = \"off\"\ndebug = True\n");
    for id in ["by-cli", "by-page", "to-land"] {
        run(&env, &r, id, "Set the value to 2", &[], &agent).assert_code(0);
    }
    let critique = "The value is right.\nThe flag is not.";
    env.write("critique.md", critique);
    env.run(
        &r,
        &[
            "review",
            "by-cli",
            "--required-change",
            "Drop the debug flag.",
            "--critique-file",
            env.path("critique.md").to_str().expect("utf-8"),
            "--comment",
            "app.py:3",
            "no debug in production",
        ],
    )
    .assert_code(0);

    let Some(b) = Browser::start(&env) else { return };
    let ui = Ui::start(&env, &r, &[]);
    b.goto(&ui.url);
    b.goto(&ui.at("/tasks/by-page/attempts/1"));
    // A line comment on the added line 3, then the rejection.
    b.click("[data-path=\"app.py\"][data-line=\"3\"]");
    b.fill("form.review textarea[name=\"comment_text\"]", "no debug in production");
    b.fill("form.review [name=\"required_change\"]", "Drop the debug flag.");
    b.fill("form.review [name=\"critique\"]", critique);
    // The form filled in, in view, before it is posted (docs/ui.md).
    b.js("document.querySelector('form.review').scrollIntoView({block: 'end'})", vec![]);
    b.screenshot("review-form");
    b.click("form.review button[name=\"verdict\"][value=\"reject\"]");
    b.wait_until("return document.readyState === 'complete'", 10, "the review is posted");
    let end = Instant::now() + Duration::from_secs(10);
    while of_type(&events(&r, "by-page"), "Reviewed").is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    let (cli, cli_channel) = reviewed_event(&env, &r, "by-cli");
    let (page, page_channel) = reviewed_event(&env, &r, "by-page");
    assert_eq!(page, cli, "the page's rejection is the command's");
    assert_eq!(cli_channel, "cli");
    assert_eq!(page_channel, "ui", "the page's channel is its own");

    // Land from the page: the result is on main.
    let tree = env.git(&r, &["rev-parse", "refs/retry-run/to-land/1^{tree}"]);
    b.goto(&ui.at("/tasks/to-land"));
    b.fill("form.land [name=\"onto\"]", "main");
    b.js("document.querySelector('form.land').scrollIntoView({block: 'end'})", vec![]);
    b.screenshot("land-form");
    b.click("form[action$=\"/land\"] button");
    let end = Instant::now() + Duration::from_secs(30);
    while of_type(&events(&r, "to-land"), "TaskLanded").is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    let landed = of_type(&events(&r, "to-land"), "TaskLanded").first().map(|e| (*e).clone()).expect("TaskLanded");
    assert_eq!(landed["onto"].as_str(), Some("main"));
    assert_eq!(env.git(&r, &["rev-parse", "main^{tree}"]), tree, "main has the attempt's tree");
}

#[test]
fn a_running_tasks_page_shows_each_new_attempt_without_a_reload() {
    let env = TestEnv::new();
    let r = project(&env);
    let go1 = env.path("go1");
    let go2 = env.path("go2");
    let wait = |p: &Path| format!("while [ ! -e '{}' ]; do sleep 0.1; done", p.display());
    let agent = env.agent(
        FakeAgent::new()
            .sh(&wait(&go1))
            .write("app.py", "value = 3\n")
            .next_call()
            .sh(&wait(&go2))
            .write("app.py", "value = 2\nlog = \"off\"\n"),
    );
    let mut running = env
        .retry_run(&r)
        .args(agent.after(&[
            "run",
            "--quiet",
            "--task",
            "Set the value to 2, live",
            "--id",
            "live",
            "--max-attempts",
            "2",
        ]))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run starts");
    let end = Instant::now() + Duration::from_secs(60);
    while of_type(&events(&r, "live"), "AttemptStarted").is_empty() {
        assert!(Instant::now() < end, "attempt 1 did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let Some(b) = Browser::start(&env) else {
        std::fs::write(&go1, "").expect("go1");
        std::fs::write(&go2, "").expect("go2");
        let _ = running.wait();
        return;
    };
    let ui = Ui::start(&env, &r, &[]);
    b.goto(&ui.url);
    b.goto(&ui.at("/tasks/live"));
    b.screenshot("running");
    b.js("window.__sameDocument = 'still here'; return true", vec![]);
    let attempts = |b: &Browser| b.count("#timeline .attempt");
    let before = attempts(&b);

    std::fs::write(&go1, "").expect("go1");
    b.wait_until(
        &format!("return document.querySelectorAll('#timeline .attempt').length > {before}"),
        60,
        "attempt 2 shows up on the page",
    );
    std::fs::write(&go2, "").expect("go2");
    let status = running.wait().expect("run ends");
    assert!(status.success(), "run: {status}");
    b.wait_until("return /succeeded|SUCCESS/.test(document.body.innerText)", 60, "the success shows up on the page");
    assert_eq!(
        b.js("return window.__sameDocument", vec![]),
        Value::from("still here"),
        "the page was updated in place, not reloaded"
    );
}

/// What a hostile script would leave behind: an element of this name.
const MARK: &str = "pwned";
/// Script the agent writes everywhere it can; each piece, if it ran,
/// would add a `<pwned>` element and open an alert.
const SCRIPT: &str = "<script>document.body.append(document.createElement('pwned'));alert('script')</script>";
const HANDLER: &str = "<img src=x onerror=\"document.body.append(document.createElement('pwned'));alert('onerror')\">";
const LINK: &str = "<a href=\"javascript:alert('link')\">click</a> [md](javascript:alert('md'))";

/// An agent that writes hostile bytes into a file's name, its content,
/// a failing unittest's name and message, and its own output.
fn hostile_agent() -> FakeAgent {
    let test = format!(
        "import unittest\n\n\nclass Hostile(unittest.TestCase):\n    pass\n\n\ndef fail(self):\n    self.fail({SCRIPT:?} + {HANDLER:?})\n\n\nsetattr(Hostile, {name:?}, fail)\n",
        name = format!("test_{HANDLER}{SCRIPT}")
    );
    FakeAgent::new()
        .write("app.py", &format!("value = 2\n# {SCRIPT}\n# {HANDLER}\n# {LINK}\n"))
        .write("test_hostile.py", &test)
        .sh(&format!("printf 'x\\n' > '{}.txt'", HANDLER.replace('\'', "'\\''")))
        .sh(&format!("echo '{}'", format!("{SCRIPT} {HANDLER} {LINK}").replace('\'', "'\\''")))
        .sh(&format!("echo '{}' >&2", SCRIPT.replace('\'', "'\\''")))
}

/// Fails when anything the agent wrote ran in the page.
#[track_caller]
fn assert_nothing_ran(b: &Browser, page: &str) {
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(b.alert(), None, "{page}: an alert is open");
    let state = b.js(
        "return [document.getElementsByTagName(arguments[0]).length, \
                 document.querySelectorAll('a[href^=\"javascript:\" i]').length, \
                 document.querySelectorAll('[onerror],[onload],[onclick],[onmouseover]').length]",
        vec![Value::from(MARK)],
    );
    assert_eq!(state, serde_json::json!([0, 0, 0]), "{page}: [marker elements, javascript: links, inline handlers]");
}

#[test]
fn an_agents_script_tags_handlers_and_javascript_links_never_run_in_the_page() {
    let env = TestEnv::new();
    let r = project(&env);
    let title = format!("Set the value to 2 {SCRIPT}");
    run(&env, &r, "hostile", &title, &["--max-attempts", "1"], &hostile_agent()).assert_code(1);
    let Some(b) = Browser::start(&env) else { return };
    let ui = Ui::start(&env, &r, &[]);
    b.goto(&ui.url);
    assert_nothing_ran(&b, "the task list");
    for (path, shown) in [
        ("/tasks/hostile", "<script>"),
        ("/tasks/hostile/attempts/1", "onerror="),
        ("/tasks/hostile/attempts/1?layout=split", "javascript:"),
        ("/tasks/hostile/attempts/1/prompt", "<script>"),
        ("/tasks/hostile/attempts/1/checks/tests", "onerror="),
        ("/stats", ""),
    ] {
        b.goto(&ui.at(path));
        assert_nothing_ran(&b, path);
        assert!(b.page_text().contains(shown), "{path}: the agent's bytes are shown as text:\n{}", b.page_text());
    }
    b.goto(&ui.at("/tasks/hostile/attempts/1"));
    b.screenshot("hostile");

    // Every page carries a policy that allows no inline script.
    let page = http(ui.port(), "GET", "/tasks/hostile", &[("Cookie", ui.cookie().as_str())], "");
    assert_eq!(page.status, 200, "{page:?}");
    let csp = page.header("content-security-policy").unwrap_or_else(|| panic!("no CSP: {page:?}"));
    let script_src = csp
        .split(';')
        .map(str::trim)
        .find(|d| d.starts_with("script-src") || d.starts_with("default-src"))
        .unwrap_or_else(|| panic!("no script-src in {csp}"));
    assert!(!script_src.contains("'unsafe-inline'") && !script_src.contains('*'), "{csp}");
}

#[test]
fn requests_without_the_token_from_another_origin_or_outside_the_record_are_refused() {
    let env = TestEnv::new();
    let r = project(&env);
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);
    run(&env, &r, "t", "Set the value to 2", &[], &FakeAgent::new().write("app.py", "value = 2\n")).assert_code(0);
    let log = std::fs::read(r.join(".git/retry-run/tasks/t/events.jsonl")).expect("the log");
    let base = env.git(&r, &["rev-parse", "main"]);
    let ui = Ui::start(&env, &r, &[]);
    let port = ui.port();
    let tok = format!("token={}", ui.token);
    let cookie = ui.cookie();
    let with_cookie = [("Cookie", cookie.as_str())];

    // The first visit, with the token in the URL: a cookie, and the same
    // page without the token; then the cookie is enough.
    let first = http(port, "GET", &format!("/?{tok}"), &[], "");
    assert!((300..400).contains(&first.status), "{first:?}");
    assert_eq!(first.header("location"), Some("/"), "{first:?}");
    let set = first.header("set-cookie").unwrap_or_else(|| panic!("no cookie: {first:?}"));
    assert!(set.starts_with(&cookie) && set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    let ok = http(port, "GET", "/", &with_cookie, "");
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(ok.body.contains("href=\"/tasks/t\""), "{ok:?}");

    // Without the token, or with another: refused, nothing of the record.
    for (what, target, headers) in [
        ("no token", "/".to_string(), vec![]),
        ("no token, a task", "/tasks/t".to_string(), vec![]),
        ("another token", "/?token=not-the-token".to_string(), vec![]),
        ("another cookie", "/".to_string(), vec![("Cookie", format!("retry-run-ui-{port}=not-the-token"))]),
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let res = http(port, "GET", &target, &headers, "");
        assert_eq!(res.status, 403, "{what}: {res:?}");
        assert!(!res.body.contains("<table") && !res.body.contains("href="), "{what}: {res:?}");
    }

    // Another host name (DNS rebinding) is refused, token or not.
    let rebound = http(port, "GET", "/", &[("Host", "evil.example"), ("Cookie", cookie.as_str())], "");
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert!(!rebound.body.contains("/tasks/t\""), "{rebound:?}");

    // An action from another origin, or without the token in its form, is
    // refused and records nothing.
    let form = "Content-Type";
    let urlencoded = "application/x-www-form-urlencoded";
    let approve = format!("{tok}&verdict=approve");
    for (what, headers, body) in [
        (
            "another origin",
            vec![("Origin", "http://evil.example"), ("Cookie", cookie.as_str()), (form, urlencoded)],
            approve.as_str(),
        ),
        ("no origin", vec![("Cookie", cookie.as_str()), (form, urlencoded)], approve.as_str()),
        (
            "no token in the form",
            vec![("Origin", ui.origin.as_str()), ("Cookie", cookie.as_str()), (form, urlencoded)],
            "verdict=approve",
        ),
    ] {
        let res = http(port, "POST", "/tasks/t/review", &headers, body);
        assert_eq!(res.status, 403, "{what}: {res:?}");
        let land = http(port, "POST", "/tasks/t/land", &headers, body);
        assert_eq!(land.status, 403, "{what}: {land:?}");
    }
    assert_eq!(std::fs::read(r.join(".git/retry-run/tasks/t/events.jsonl")).expect("the log"), log);
    assert_eq!(env.git(&r, &["rev-parse", "main"]), base, "nothing landed");

    // Paths are ids: nothing outside the record is served.
    std::fs::write(r.join(".git/secret.txt"), "SECRET-OUTSIDE-THE-RECORD").expect("a file outside the record");
    for path in [
        "/../../secret.txt",
        "/tasks/..%2F..%2Fsecret.txt",
        "/tasks/t/attempts/1/checks/..%2F..%2F..%2F..%2F..%2Fsecret.txt",
        "/tasks/%2e%2e/attempts/1/prompt",
        "/tasks/t/attempts/1/checks/..%2f..%2f..%2f..%2f..%2f..%2fretry-run.toml",
        "/static/..%2F..%2Fsecret.txt",
        "/tasks/t%2F..%2F..%2F..%2Fsecret.txt",
    ] {
        let res = http(port, "GET", path, &with_cookie, "");
        assert_eq!(res.status, 404, "{path}: {res:?}");
        assert!(!res.body.contains("SECRET-OUTSIDE") && !res.body.contains("[[check]]"), "{path}: {res:?}");
    }
}
