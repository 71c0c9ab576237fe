//! The user documentation under `docs/` covers every config key and every
//! subcommand, and its full config example is a valid config.

use std::path::Path;

use clap::CommandFactory;

fn docs() -> String {
    let mut all = String::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("docs/").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                all.push_str(&std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    all
}

/// Every key path of a JSON value: `agent.timeout`, `check.name`, ...
fn keys(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                out.push(path.clone());
                keys(&path, v, out);
            }
        }
        serde_json::Value::Array(a) => {
            if let Some(first) = a.first().filter(|f| f.is_object()) {
                keys(prefix, first, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_config_key_and_every_subcommand_is_in_docs() {
    let docs = docs();
    let config_md =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.md")).expect("config.md");
    let example = config_md.split("```toml\n").nth(1).and_then(|s| s.split("```").next()).expect("the full example");
    let full = retry_run::config::Config::parse(example, Path::new("docs/config.md"))
        .unwrap_or_else(|e| panic!("the example in docs/config.md is not a valid config: {e}"));
    let mut found = Vec::new();
    keys("", &serde_json::to_value(retry_run::config::Config::default()).expect("json"), &mut found);
    keys("", &serde_json::to_value(&full).expect("json"), &mut found);
    found.sort();
    found.dedup();
    assert!(found.len() > 50, "{found:?}");
    for path in &found {
        let key = path.rsplit('.').next().unwrap_or(path);
        // `checks` is written `[[check]]` in the file.
        let key = if key == "checks" { "check" } else { key };
        assert!(
            config_md.contains(&format!("{key} ="))
                || config_md.contains(&format!("[{key}]"))
                || config_md.contains(&format!("[[{key}]]")),
            "docs/config.md does not set `{path}`"
        );
    }
    for sub in retry_run::cli::Cli::command().get_subcommands().filter(|s| !s.is_hide_set()) {
        assert!(docs.contains(&format!("## `{}`", sub.get_name())), "docs/ has no section on `{}`", sub.get_name());
    }
}
