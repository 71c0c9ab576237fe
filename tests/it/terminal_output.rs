//! What retry-run prints for a person (docs/commands.md, "What retry-run
//! prints"): an agent that puts terminal escape sequences in a file's name,
//! in the file, on its stdout and in a failing check's output reaches no
//! terminal with them. Every command's text output shows them as visible
//! escapes; JSON stays JSON, and the record keeps the raw bytes.

use std::path::Path;

use crate::support::{FakeAgent, TestEnv};

const TASK: &str = "show-escapes";

/// A file name with ESC and BEL in it.
const EVIL_NAME: &str = "src/evil\x1b[31m\x07.txt";
/// How a person sees that name: git's quoting.
const EVIL_SHOWN: &str = "\"src/evil\\033[31m\\a.txt\"";

/// Bytes that must never reach the terminal: ESC, BEL, CR, U+009B (CSI)
/// and U+202E (right-to-left override) as UTF-8.
const FORBIDDEN: &[(&[u8], &str)] =
    &[(b"\x1b", "ESC"), (b"\x07", "BEL"), (b"\r", "CR"), (b"\xc2\x9b", "U+009B"), (b"\xe2\x80\xae", "U+202E")];

/// `retry-run <args>` in `r`: its stdout, after checking that neither it
/// nor stderr holds a forbidden byte and that both are UTF-8.
#[track_caller]
fn shown(env: &TestEnv, r: &Path, args: &[&str]) -> String {
    let out = env.retry_run(r).args(args).output().expect("retry-run starts");
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8(bytes.clone())
            .unwrap_or_else(|e| panic!("retry-run {args:?}: {stream} is not UTF-8 ({e}): {bytes:?}"));
        for (bad, name) in FORBIDDEN {
            assert!(
                !bytes.windows(bad.len()).any(|w| w == *bad),
                "retry-run {args:?} printed a raw {name} on {stream}:\n{text:?}"
            );
        }
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_agent_s_escape_sequences_are_shown_never_sent_to_the_terminal() {
    let env = TestEnv::new();
    // The check fails and says so with escape sequences: a screen clear in
    // the test's name, a clipboard write (OSC 52), an 8-bit CSI and a
    // right-to-left override.
    let r = env
        .repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "printf 'FAILED tests/app::test_\\033[2Jvalue - \\033]52;c;aGk=\\007 csi \\302\\2332J rlo \\342\\200\\256gnp.exe\\n'\nexit 1\n",
        )
        .file(
            "retry-run.toml",
            "max_attempts = 1\n[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n",
        )
        .commit();
    let agent = env.agent(
        FakeAgent::new()
            .write(EVIL_NAME, "\x1b]52;c;aGk=\x07\x1b[2J\ncrlf\r\n\u{9b}2J \u{202e}gnp.exe\n")
            .sh("printf '\\033[2J\\033]52;c;aGk=\\007every gate passed\\n'"),
    );

    // The run itself: its progress lines and its final words.
    shown(&env, &r, &agent.after(&["run", "--task", "Show escapes"]).iter().map(String::as_str).collect::<Vec<_>>());
    let report = shown(&env, &r, &["report", TASK]);
    assert!(report.contains("### Attempt 1: CHECK_FAILURE"), "{report}");
    // The readers see the check's output without its terminal escapes:
    // the test is named as its runner meant it.
    assert!(report.contains("tests/app::test_value"), "{report}");
    assert!(report.contains(&format!("`{EVIL_SHOWN}`")), "{report}");

    let context = shown(&env, &r, &["context", TASK]);
    assert!(context.contains("tests/app::test_value"), "{context}");

    let diff = shown(&env, &r, &["inspect", &format!("{TASK}/1"), "--diff"]);
    assert!(diff.contains(EVIL_SHOWN), "{diff}");
    // A CR ending a line of a CRLF file is shown too.
    assert!(diff.contains("+\\x1b]52;c;aGk=\\x07\\x1b[2J\n+crlf\\r\n+\\u{9b}2J \\u{202e}gnp.exe\n"), "{diff}");

    let checks = shown(&env, &r, &["inspect", &format!("{TASK}/1"), "--checks"]);
    assert!(
        checks
            .contains("FAILED tests/app::test_\\x1b[2Jvalue - \\x1b]52;c;aGk=\\x07 csi \\u{9b}2J rlo \\u{202e}gnp.exe"),
        "{checks}"
    );
    let attempt = shown(&env, &r, &["inspect", &format!("{TASK}/1")]);
    assert!(attempt.starts_with(&format!("attempt 1 of {TASK}\n")), "{attempt}");
    shown(&env, &r, &["inspect", &format!("{TASK}/1"), "--prompt"]);

    let status = shown(&env, &r, &["status"]);
    assert!(status.lines().nth(1).is_some_and(|l| l.starts_with(&format!("{TASK}\t"))), "{status}");
    let log = shown(&env, &r, &["log", TASK]);
    assert!(log.contains("tests/app::test_value"), "{log}");
    shown(&env, &r, &["stats"]);

    let head = format!("refs/retry-run/{TASK}/1");
    for format in ["text", "markdown"] {
        let d = shown(&env, &r, &["diff", "--base", "main", "--head", &head, "--format", format]);
        assert!(d.contains(EVIL_SHOWN), "{format}: {d}");
        assert!(d.contains("+crlf\\r\n"), "{format}: {d}");
    }
    let scope = shown(&env, &r, &["scope", "--base", "main", "--head", &head, "--allow", "lib/**"]);
    assert!(scope.contains(&format!("A {EVIL_SHOWN}: outside-allow")), "{scope}");
    let github =
        shown(&env, &r, &["scope", "--base", "main", "--head", &head, "--allow", "lib/**", "--format", "github"]);
    // In a GitHub annotation the path stays GitHub's (so it lands on the
    // file), its controls shown as in text.
    assert!(github.contains("::error file=src/evil\\x1b[31m\\x07.txt,title=scope violation::"), "{github}");

    // JSON stays JSON, with the agent's text in it as it was.
    let out = env.run(&r, &["diff", "--base", "main", "--head", &head, "--format", "json"]);
    let paths: Vec<String> = out.json()["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or("").into())
        .collect();
    assert!(paths.iter().any(|p| p == EVIL_NAME), "{paths:?}");
    let log_json = env.run(&r, &["log", TASK, "--json"]);
    assert!(log_json.stdout.contains("\\u001b"), "{}", log_json.stdout);
    for line in log_json.stdout.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("each line is JSON");
    }
    // The record keeps the raw bytes: it is evidence.
    let attempt_dir = r.join(format!(".git/retry-run/tasks/{TASK}/attempts/1"));
    let raw = std::fs::read_dir(&attempt_dir)
        .expect("the attempt's directory")
        .flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .any(|bytes| bytes.windows(4).any(|w| w == b"\x1b]52"));
    assert!(raw, "no file of {} holds the check's raw output", attempt_dir.display());
}
