//! `retry-run enrich` on output captured from the real tools
//! (`tests/diagnostics/captured/`, made by `tests/diagnostics/capture.sh`
//! from the sources beside it). Expected results, reviewed line by line
//! against the sources, are in `tests/diagnostics/expected/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::TestEnv;
use retry_run::diagnostics::{Format, parse};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

/// The directory each capture ran in (its `@ROOT@`).
fn root_of(name: &str) -> &'static str {
    match name {
        n if n.starts_with("rustc") || n == "cargo-json" => "rust/broken",
        n if n.starts_with("clippy") || n.starts_with("cargo-test") => "rust/lints",
        n if n.starts_with("generic") => "c",
        n if n.starts_with("mixed") => "mixed",
        n if ["tsc", "eslint", "biome", "oxlint"].iter().any(|t| n.starts_with(t)) => "ts",
        _ => "python",
    }
}

fn captures() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir().join("captured"))
        .expect("captured/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).expect("read capture");
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// One line per diagnostic: `tool path:line severity code @ scope`.
fn compact(json: &serde_json::Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .expect("diagnostics array")
        .iter()
        .map(|d| {
            let scope = d["scope"]["qualified_name"].as_str().unwrap_or("-");
            let s = |k: &str| match &d[k] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "None".to_string(),
                v => v.to_string(),
            };
            format!("{} {}:{} {} {} @ {scope}", s("tool"), s("path"), s("line"), s("severity"), s("code"))
        })
        .collect()
}

fn enrich_capture(env: &TestEnv, name: &str, text: &str, extra: &[&str]) -> crate::support::Run {
    let root = dir().join(root_of(name));
    let input = env.path(&format!("{name}.txt"));
    std::fs::write(&input, text.replace("@ROOT@", &root.to_string_lossy())).expect("write input");
    let mut args = vec!["enrich", "--format", "json", "--root", root_of(name), "--input"];
    let input = input.to_string_lossy().into_owned();
    args.push(&input);
    args.extend_from_slice(extra);
    env.run(&dir(), &args)
}

#[test]
fn every_captured_output_is_detected_parsed_and_enriched_as_expected() {
    let env = TestEnv::new();
    let captures = captures();
    assert!(captures.len() >= 20, "expected the captures of capture.sh");
    for (name, text) in captures {
        let run = enrich_capture(&env, &name, &text, &[]);
        run.assert_code(0);
        let want = std::fs::read_to_string(dir().join("expected").join(format!("{name}.txt"))).expect("expected file");
        let want: Vec<&str> = want.lines().collect();
        assert_eq!(compact(&run.json()), want, "{name}: enrich's result differs from expected/{name}.txt");
    }
}

#[test]
fn every_format_is_covered_by_a_capture() {
    let names: Vec<String> = captures().into_iter().map(|(n, _)| n).collect();
    for f in Format::ALL {
        let prefix = match f {
            Format::Rustc => "rustc",
            Format::CargoJson => "cargo-json",
            Format::Generic => "generic",
            other => other.name(),
        };
        assert!(names.iter().any(|n| n.starts_with(prefix)), "no capture for {}", f.name());
    }
}

#[test]
fn diagnostics_of_one_scope_share_one_snippet_with_every_error_marked() {
    let env = TestEnv::new();
    let text = std::fs::read_to_string(dir().join("captured/ruff-concise.txt")).expect("capture");
    let json = enrich_capture(&env, "ruff-concise", &text, &[]).json();
    let in_remove: Vec<&serde_json::Value> = json["diagnostics"]
        .as_array()
        .expect("array")
        .iter()
        .filter(|d| d["scope"]["qualified_name"] == "Cart.remove")
        .collect();
    assert_eq!(in_remove.len(), 2);
    assert_eq!(in_remove[0]["snippet"], in_remove[1]["snippet"]);
    let snippet = in_remove[0]["snippet"].as_str().expect("snippet");
    assert_eq!(
        snippet,
        "   18 | class Cart:\n  ... |\n   40 |     def remove(self, name):\n>  41 |         unused = len(self.items)\n>  42 |         self.items = [i for i in self.items if i.name != nme]\n"
    );
    let scope = &in_remove[0]["scope"];
    assert_eq!(scope["kind"], "function");
    assert_eq!(scope["name"], "remove");
    assert_eq!((scope["start_line"].as_u64(), scope["end_line"].as_u64()), (Some(40), Some(42)));
    assert_eq!(scope["signature"], "def remove(self, name):");
}

#[test]
fn text_output_groups_a_scope_and_prints_its_snippet_once() {
    let env = TestEnv::new();
    let root = dir().join("python");
    let out = env
        .run(&root, &["enrich", "--input", &dir().join("captured/ruff-concise.txt").to_string_lossy()])
        .assert_code(0)
        .stdout
        .clone();
    let group = "shop/cart.py:41:9: error[F841]: Local variable `unused` is assigned to but never used (ruff)\nshop/cart.py:42:58: error[F821]: Undefined name `nme` (ruff)\n  in function Cart.remove (lines 40-42)\n";
    assert!(out.contains(group), "{out}");
    assert_eq!(out.matches("def remove(self, name):").count(), 1);
}

#[test]
fn input_format_forces_a_parser_and_bad_names_are_usage_errors() {
    let env = TestEnv::new();
    let text = std::fs::read_to_string(dir().join("captured/ruff-concise.txt")).expect("capture");
    let json = enrich_capture(&env, "ruff-concise", &text, &["--input-format", "generic"]).json();
    assert!(json["diagnostics"].as_array().expect("array").iter().all(|d| d["tool"] == "generic"));
    let run = enrich_capture(&env, "ruff-concise", &text, &["--input-format", "jshint"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("unknown --input-format \"jshint\"") && run.stderr.contains("cargo-json"),
        "{}",
        run.stderr
    );
    let run = env.run(&dir(), &["enrich", "--input", "no/such/file.txt"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no/such/file.txt"), "{}", run.stderr);
}

#[test]
fn the_output_is_an_operand_as_well_as_input_and_a_dash_is_stdin() {
    let env = TestEnv::new();
    let name = "ruff-concise";
    let root = dir().join(root_of(name));
    let text = std::fs::read_to_string(dir().join(format!("captured/{name}.txt"))).expect("capture");
    let text = text.replace("@ROOT@", &root.to_string_lossy());
    env.write("out/ruff.txt", &text);
    let out = env.path("out");
    let by_input =
        env.run(&out, &["enrich", "--format", "json", "--root", &root.to_string_lossy(), "--input", "ruff.txt"]);
    by_input.assert_code(0);
    assert!(!by_input.json()["diagnostics"].as_array().expect("array").is_empty(), "{}", by_input.stdout);
    // The operand, before or after the options.
    let root = root.to_string_lossy();
    for args in [
        vec!["enrich", "ruff.txt", "--format", "json", "--root", &root],
        vec!["enrich", "--format", "json", "--root", &root, "ruff.txt"],
    ] {
        let run = env.run(&out, &args);
        run.assert_code(0);
        assert_eq!(run.stdout, by_input.stdout, "{args:?}");
    }
    // `-` (as the operand or after --input), or nothing: stdin.
    for file in [&["-"][..], &["--input", "-"], &[]] {
        let mut args = vec!["enrich", "--format", "json", "--root", &root];
        args.extend_from_slice(file);
        let run = env.run_with_stdin(&out, &args, text.as_bytes());
        run.assert_code(0);
        assert_eq!(run.stdout, by_input.stdout, "{args:?}");
    }
    // Both the operand and --input: a usage error.
    let run = env.run(&out, &["enrich", "ruff.txt", "--input", "ruff.txt"]);
    run.assert_code(2);
    assert!(run.stderr.contains("cannot be used with") && run.stderr.contains("--input"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // A missing file is named as it was given.
    let run = env.run(&out, &["enrich", "no/such/file.txt"]);
    run.assert_code(2);
    assert!(run.error_line().contains("no/such/file.txt"), "{}", run.stderr);
}

#[test]
fn unreadable_files_keep_their_diagnostics_and_syntax_errors_keep_intact_scopes() {
    let env = TestEnv::new();
    let root = env.path("tree");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("bin.py"), b"def f():\x00\n    pass\n").expect("write");
    std::fs::write(root.join("latin1.py"), b"def f():\n    return '\xe9'\n").expect("write");
    std::fs::copy(dir().join("python/broken.py"), root.join("broken.py")).expect("copy");
    std::fs::create_dir(root.join("adir.py")).expect("mkdir");
    let input = "missing.py:3:1: E1 gone\nbin.py:2:1: E2 binary\nlatin1.py:2:5: E3 latin-1\nadir.py:1:1: E4 a directory\n\
                 broken.py:15:16: F821 undefined name\nbroken.py:5:5: E5 fine\n/usr/lib/python3.11/json/__init__.py:10:1: E6 outside\n";
    std::fs::write(env.path("in.txt"), input).expect("write");
    let run = env.run(&root, &["enrich", "--format", "json", "--input", &env.path("in.txt").to_string_lossy()]);
    let got = compact(&run.assert_code(0).json());
    assert_eq!(
        got,
        [
            "flake8 missing.py:3 error E1 @ -",
            "flake8 bin.py:2 error E2 @ -",
            "flake8 latin1.py:2 error E3 @ -",
            "flake8 adir.py:1 error E4 @ -",
            "flake8 broken.py:15 error F821 @ Survivor.method",
            "flake8 broken.py:5 error E5 @ fine",
            "flake8 /usr/lib/python3.11/json/__init__.py:10 error E6 @ -",
        ]
    );
    let json = run.json();
    let d = json["diagnostics"].as_array().expect("array");
    assert!(d[..4].iter().all(|d| d["snippet"].is_null()), "no snippet for unreadable files");
    assert!(d[4]["snippet"].as_str().is_some_and(|s| s.contains(">  15 |         return undefined_name")));
}

#[test]
fn garbage_and_truncated_input_never_panics() {
    for (name, text) in captures() {
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                for f in Format::ALL {
                    let _ = parse(f, &text[..cut]);
                }
                let _ = retry_run::diagnostics::detect::detect(&text[..cut]);
            }
            cut += 1 + text.len() / 300;
        }
        let _ = name;
    }
    let env = TestEnv::new();
    let junk: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(env.path("junk"), &junk).expect("write");
    for f in ["auto", "generic", "cargo-json", "pytest"] {
        env.run(env.root(), &["enrich", "--input", "junk", "--input-format", f]).assert_code(0);
    }
}

/// Re-runs each tool that is installed on the same sources and checks that
/// the committed capture is still what it prints (same tool version) or at
/// least that its output is still recognised and parsed (another version).
#[test]
fn live_tools_still_print_what_was_captured() {
    let versions = std::fs::read_to_string(dir().join("captured/VERSIONS")).unwrap_or_default();
    let env = TestEnv::new();
    let work = env.path("sources");
    copy_dir(&dir(), &work);
    let target = env.path("target");
    let cases: &[(&str, &str, &[&str])] = &[
        ("ruff-concise", "ruff", &["check", "--no-cache", "--output-format=concise", "."]),
        ("flake8", "flake8", &["."]),
        ("pylint", "pylint", &["--persistent=n", "shop", "broken.py"]),
        ("mypy", "mypy", &["--no-incremental", "shop"]),
        ("pyright", "pyright", &["shop"]),
        ("pytest", "python3", &["-m", "pytest", "-p", "no:cacheprovider"]),
        ("python-traceback", "python3", &["crash.py"]),
        ("clippy-human", "cargo", &["clippy"]),
        ("cargo-test", "cargo", &["test"]),
        ("mixed-ruff-default", "ruff", &["check", "--no-cache", "inventory.py", "scripts/nightly.py"]),
        ("mixed-tracebacks", "python3", &["scripts/nightly.py"]),
        ("mixed-syntax-error", "python3", &["scripts/broken.py"]),
    ];
    for (name, tool, args) in cases {
        let version_arg: &[&str] = match *name {
            "pytest" => &["-m", "pytest", "--version"],
            "mixed-tracebacks" | "mixed-syntax-error" => &["--version"],
            "clippy-human" => &["clippy", "--version"],
            _ => &["--version"],
        };
        let Ok(v) = Command::new(tool).args(version_arg).output() else {
            eprintln!(
                "SKIPPED live check of {name}: {tool} is not installed (pip install ruff flake8 pylint mypy pytest; npm install -g pyright)"
            );
            continue;
        };
        if !v.status.success() {
            eprintln!("SKIPPED live check of {name}: `{tool} {}` failed", version_arg.join(" "));
            continue;
        }
        let version = String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr);
        let same_version = version.lines().next().is_some_and(|l| versions.contains(l.trim()));
        let root = work.join(root_of(name));
        let out = Command::new(tool)
            .args(*args)
            .current_dir(&root)
            .env("CARGO_TARGET_DIR", &target)
            .env("NO_COLOR", "1")
            .env("RUST_BACKTRACE", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("tool runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        std::fs::write(env.path("live.txt"), &text).expect("write");
        let run = env.run(&root, &["enrich", "--format", "json", "--input", &env.path("live.txt").to_string_lossy()]);
        // Sorted: parallel test runners print failures in the order they finish.
        let mut got = compact(&run.assert_code(0).json());
        got.sort();
        let want = std::fs::read_to_string(dir().join("expected").join(format!("{name}.txt"))).expect("expected");
        let mut want: Vec<&str> = want.lines().collect();
        want.sort();
        if same_version {
            assert_eq!(
                got, want,
                "{name}: the live output of {tool} no longer matches; re-run tests/diagnostics/capture.sh"
            );
        } else {
            eprintln!(
                "NOTE: {tool} is another version than captured ({}); checking only that its output parses",
                version.trim()
            );
            assert!(!got.is_empty(), "{name}: nothing parsed from the live output of {tool}:\n{text}");
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let name = e.file_name();
        if name == "target" || name == "__pycache__" || name == ".mypy_cache" || name == ".ruff_cache" {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        if e.file_type().expect("type").is_dir() {
            copy_dir(&src, &dst)
        } else {
            std::fs::copy(&src, &dst).map(|_| ()).expect("copy")
        }
    }
}

/// `cargo clippy --all-targets` checks the library twice (lib and lib test)
/// and prints each warning of shared code twice: enrich reports it once.
#[test]
fn a_warning_printed_by_two_targets_of_one_build_is_reported_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/summarize/rust-counts");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/summarize/captured/clippy-all-targets-json.txt"),
    )
    .expect("capture");
    assert_eq!(text.matches("\"reason\":\"compiler-message\"").count(), 2, "the capture holds the warning twice");
    let env = TestEnv::new();
    let input = env.path("clippy.json");
    std::fs::write(&input, text.replace("@ROOT@", &root.to_string_lossy())).expect("write input");
    for format in ["auto", "cargo-json"] {
        let run = env
            .run(&root, &["enrich", "--format", "json", "--input-format", format, "--input", &input.to_string_lossy()]);
        run.assert_code(0);
        assert_eq!(
            compact(&run.json()),
            ["cargo-json src/lib.rs:15 warning clippy::len_zero @ parse"],
            "--input-format {format}"
        );
    }
}
