//! The supervisor's executable, as Cargo builds it: a line that neither
//! `retry-run sandbox` nor `run` wrote is refused with exit 2, and the
//! command is not run. (Its confinement is tested through `retry-run`'s
//! own tests, which start it beside `retry-run`.)

use std::process::Command;

#[test]
fn a_line_typed_by_hand_is_refused_and_nothing_runs() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let lines: [&[&str]; 4] = [
        &["sh", "-c", &touch],
        &["--outer", "{}", "--", "sh", "-c", &touch],
        &["--outer", "not json", "--", "sh", "-c", &touch],
        &["--inner", "{}", "sh", "-c", &touch],
    ];
    for words in lines {
        let out = Command::new(env!("CARGO_BIN_EXE_retry-run-supervisor"))
            .args(words)
            .current_dir(dir.path())
            .output()
            .expect("the supervisor starts");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{words:?}: {stderr}");
        assert!(stderr.contains("run `retry-run sandbox -- CMD...` instead"), "{words:?}: {stderr}");
        assert!(!marker.exists(), "{words:?} ran the command");
    }
}
