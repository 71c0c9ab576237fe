//! The web view's task list as one server keeps it across requests (its
//! rows kept by each log file's identity): a row follows its log when the
//! log grows, and a log edited in place after it was shown whole, its
//! modification time put back, shows as broken on the next request.

use crate::support::browser::{Ui, http};
use crate::support::{FakeAgent, TestEnv};

/// The list's row of task `id`, as HTML.
fn row(port: u16, cookie: &str, id: &str) -> String {
    let list = http(port, "GET", "/", &[("Cookie", cookie)], "");
    assert_eq!(list.status, 200, "{list:?}");
    let link = format!(">{id}</a>");
    list.body.split("<tr ").find(|r| r.contains(&link)).unwrap_or_else(|| panic!("no row {id}: {}", list.body)).into()
}

#[test]
fn a_rows_log_grown_or_edited_in_place_shows_on_the_next_request() {
    let env = TestEnv::new();
    let r = env.repo("repo").file("limit.py", "LIMIT = 1\n").file("retry-run.toml", "max_attempts = 1\n").commit();
    let agent = env.agent(FakeAgent::new().write("limit.py", "LIMIT = 2\n"));
    for id in ["alpha", "beta"] {
        env.run_agent(&r, &["run", "--quiet", "--task", "Raise the limit", "--id", id], &agent).assert_code(0);
    }
    let ui = Ui::start(&env, &r, &[]);
    let (port, cookie) = (ui.port(), ui.cookie());
    for id in ["alpha", "beta"] {
        let shown = row(port, &cookie, id);
        assert!(shown.contains("succeeded") && !shown.contains("approved"), "{shown}");
    }

    // Grown: an approval appended to beta's log.
    env.run(&r, &["review", "beta", "--approve", "--by", "me"]).assert_code(0);
    let shown = row(port, &cookie, "beta");
    assert!(shown.contains("approved"), "the grown log's row: {shown}");

    // Edited in place: the same length, its mtime put back.
    let log = r.join(".git/retry-run/tasks/alpha/events.jsonl");
    let text = std::fs::read_to_string(&log).expect("alpha's log");
    let mtime = std::fs::metadata(&log).and_then(|m| m.modified()).expect("its mtime");
    let edited = text.replacen("\"prev\":\"0000", "\"prev\":\"1000", 1);
    assert_ne!(edited, text, "the first line names the chain's start");
    let file = std::fs::OpenOptions::new().write(true).open(&log).expect("open the log");
    std::io::Write::write_all(&mut &file, edited.as_bytes()).expect("edit the log");
    file.set_modified(mtime).expect("put the mtime back");
    drop(file);
    let shown = row(port, &cookie, "alpha");
    assert!(shown.contains("log broken"), "the edited log's row: {shown}");
    assert!(row(port, &cookie, "beta").contains("approved"), "the other rows stay as they were");
    let (code, _) = ui.interrupt();
    assert_eq!(code, Some(0));
}
