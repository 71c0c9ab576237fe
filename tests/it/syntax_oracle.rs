//! Scopes against an independent oracle: for Python, Python's own `ast`
//! module, on every file of `tests/syntax-corpus/python/`. Target: 100%
//! agreement on kind, name, qualified name, start and end line.

use std::path::Path;
use std::process::Command;

use retry_run::syntax::{language_for, scopes};

fn corpus(lang: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax-corpus").join(lang);
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("corpus dir").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
}

#[test]
fn python_scopes_agree_with_ast() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/py_scopes.py");
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED python_scopes_agree_with_ast: python3 is not installed");
        return;
    }
    let mut compared = 0;
    for file in corpus("python") {
        let out = Command::new("python3").arg(&oracle).arg(&file).output().expect("python3 runs");
        assert!(out.status.success(), "oracle failed on {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        let want: serde_json::Value = serde_json::from_slice(&out.stdout).expect("oracle JSON");
        let want: Vec<(String, String, String, u64, u64)> = want
            .as_array()
            .expect("array")
            .iter()
            .map(|s| {
                (
                    s["kind"].as_str().expect("kind").to_string(),
                    s["name"].as_str().expect("name").to_string(),
                    s["qualified_name"].as_str().expect("qualified").to_string(),
                    s["start_line"].as_u64().expect("start"),
                    s["end_line"].as_u64().expect("end"),
                )
            })
            .collect();
        let source = std::fs::read(&file).expect("corpus file");
        let lang = language_for(file.to_str().expect("utf-8 path").as_bytes()).expect("python");
        let got: Vec<(String, String, String, u64, u64)> = scopes(lang, &source)
            .expect("parses")
            .into_iter()
            .map(|s| (s.kind, s.name, s.qualified_name, s.start_line as u64, s.end_line as u64))
            .collect();
        assert_eq!(got, want, "{}", file.display());
        compared += want.len();
    }
    assert!(compared >= 40, "only {compared} scopes compared");
}
