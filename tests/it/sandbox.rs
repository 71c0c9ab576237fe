//! Containment: an agent (a script) tries every way out of its worktree.
//! Under Landlock each one is refused and nothing outside changes, while
//! its own work, its TMPDIR and a `git commit` in the worktree succeed; in
//! `detect` mode the same attempt is a SCOPE_VIOLATION naming the paths,
//! and the git machinery is put back. Also `retry-run sandbox` on its own.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::first;
use crate::support::{Agent, FakeAgent, Run, TestEnv};

fn repo(env: &TestEnv, toml: &str) -> PathBuf {
    let r = env
        .repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", toml)
        .commit();
    std::fs::write(r.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").expect("hook");
    r
}

/// Tries each escape and writes `name: ok` or `name: refused` to
/// `results.txt` in the worktree.
fn escape_agent(env: &TestEnv, r: &Path) -> Agent {
    let checkout = r.display();
    let home = env.home();
    let home = home.display();
    let try_it = |name: &str, command: &str| format!("try {name} {command}");
    env.agent(
        FakeAgent::new()
            .sh(r#"try() { name=$1; shift; if ( "$@" ) 2>/dev/null; then echo "$name: ok" >> results.txt; else echo "$name: refused" >> results.txt; fi; }"#)
            .sh(&try_it("relative", r#"sh -c 'echo x >> "$RETRY_RUN_WORKTREE/../../../../notes.txt"'"#))
            .sh(&try_it("absolute", &format!("sh -c 'echo x >> {checkout}/notes.txt'")))
            .sh(&try_it("home", &format!("sh -c 'echo x > {home}/dropped.txt'")))
            .sh(&try_it("git-config", &format!(r#"sh -c 'echo "[user]" >> {checkout}/.git/config'"#)))
            .sh(&try_it("hook", &format!(r#"sh -c 'echo "echo owned" >> {checkout}/.git/hooks/pre-commit'"#)))
            .sh(&try_it("branch", "git branch evil"))
            .sh(&try_it("symlink", &format!("sh -c 'ln -s {checkout}/notes.txt link && echo x >> link'")))
            .sh(&try_it("rename", &format!("sh -c 'mv src/app.txt {checkout}/moved.txt'")))
            .sh(&try_it("hardlink", &format!("sh -c 'ln {checkout}/notes.txt hl && echo x >> hl'")))
            .sh(&try_it("child", &format!(r#"sh -c 'sh -c "echo x >> {checkout}/notes.txt" & wait $!'"#)))
            // retry-run itself: the parent of the supervisor that confines the agent.
            .sh(&try_it("signal", "kill -0 $(cut -d' ' -f4 /proc/$PPID/stat)"))
            .sh("ls -l /proc/$$/fd > fds.txt")
            .rm("link")
            .rm("hl")
            .sh(&try_it("worktree", r#"sh -c 'echo "value = 2" > src/app.txt'"#))
            .sh(&try_it("tmpdir", r#"sh -c 'echo t > "$TMPDIR/scratch" && test -f "$TMPDIR/scratch"'"#))
            .sh(&try_it("commit", "sh -c 'git add src/app.txt && git -c user.name=a -c user.email=a@b commit -qm agent'"))
            .exit(0),
    )
}

fn run(env: &TestEnv, r: &Path, args: &[&str], agent: &Agent) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

/// Everything outside the worktree that must not change.
fn outside_state(env: &TestEnv, r: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for f in ["notes.txt", "src/app.txt", ".git/config", ".git/hooks/pre-commit", ".git/HEAD"] {
        out.push((f.to_string(), std::fs::read(r.join(f)).unwrap_or_default()));
    }
    out.push(("status".into(), env.git(r, &["status", "--porcelain"]).into_bytes()));
    // retry-run's own success branch aside.
    let branches = env.git(r, &["branch", "--list", "--format=%(refname)"]);
    let branches: Vec<&str> = branches.lines().filter(|b| !b.starts_with("refs/heads/retry-run/")).collect();
    out.push(("branches".into(), branches.join("\n").into_bytes()));
    // retry-run's own cache (`.cache/retry-run`: the namespaces probe's
    // success, scopes), which retry-run writes itself, outside any sandbox.
    let only_ours =
        |d: &Path| std::fs::read_dir(d).into_iter().flatten().flatten().all(|e| e.file_name() == "retry-run");
    let home: Vec<String> = std::fs::read_dir(env.home())
        .expect("home")
        .flatten()
        .filter(|e| !(e.file_name() == ".cache" && only_ours(&e.path())))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.push(("home".into(), format!("{home:?}").into_bytes()));
    out
}

fn results(env: &TestEnv, r: &Path, task: &str) -> String {
    env.git(r, &["show", &format!("refs/retry-run/{task}/1:results.txt")])
}

fn landlock_here() -> bool {
    retry_run::sandbox::layers::landlock::abi() > 0
}

#[test]
fn under_landlock_every_escape_is_refused_and_the_work_inside_succeeds() {
    assert!(landlock_here(), "this kernel has no Landlock; these tests need Linux 5.13+ with Landlock enabled");
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n[sandbox]\nmode = \"landlock\"\n");
    let before = outside_state(&env, &r);
    let agent = escape_agent(&env, &r);
    let out = run(&env, &r, &["--task", "Escape"], &agent);
    out.assert_code(0);
    let res = results(&env, &r, "escape");
    for refused in
        ["relative", "absolute", "home", "git-config", "hook", "branch", "symlink", "rename", "hardlink", "child"]
    {
        assert!(res.contains(&format!("{refused}: refused")), "{refused} was not refused:\n{res}");
    }
    // Signals to processes outside the sandbox (retry-run itself here), where the kernel can scope them.
    if retry_run::sandbox::layers::landlock::abi() >= 6 {
        assert!(res.contains("signal: refused"), "{res}");
    }
    // No descriptor of retry-run's (its lock, the event log) reached the agent.
    let fds = env.git(&r, &["show", "refs/retry-run/escape/1:fds.txt"]);
    assert!(!fds.contains("retry-run/tasks") && !fds.contains("/objects/"), "{fds}");
    for ok in ["worktree", "tmpdir", "commit"] {
        assert!(res.contains(&format!("{ok}: ok")), "{ok} failed:\n{res}");
    }
    assert_eq!(outside_state(&env, &r), before, "something outside the worktree changed");
    let started = first(&r, "escape", "AgentStarted");
    assert_eq!(started["sandbox"]["mode"], "landlock", "{started}");
    assert!(started["sandbox"]["landlock_abi"].as_u64().is_some_and(|a| a >= 1));
    let writable: Vec<&str> =
        started["sandbox"]["writable"].as_array().expect("writable").iter().filter_map(Value::as_str).collect();
    assert!(writable.iter().any(|w| w.ends_with("/worktrees/escape")), "{writable:?}");
    assert!(!writable.iter().any(|w| w.ends_with("/.git") || w.ends_with("/repo")), "{writable:?}");
    // The private TMPDIR is gone with the attempt.
    assert!(!r.join(".git/retry-run/tasks/escape/attempts/1/tmp").exists());
}

#[test]
fn in_detect_mode_the_same_escapes_are_a_scope_violation_and_the_machinery_is_put_back() {
    detect_mode_case(false);
}

#[test]
fn detection_by_stat_data_where_inotify_cannot_watch_finds_the_same() {
    detect_mode_case(true);
}

/// The paths a `ScopeChecked` event names as changed outside the worktree.
fn outside_worktree(scope: &Value) -> Vec<&str> {
    scope["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .filter(|v| v["reason"] == "outside-worktree")
        .filter_map(|v| v["path"].as_str())
        .collect()
}

fn detect_mode_case(by_stat: bool) {
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n[sandbox]\nmode = \"detect\"\n");
    let config_before = std::fs::read(r.join(".git/config")).expect("config");
    let hook_before = std::fs::read(r.join(".git/hooks/pre-commit")).expect("hook");
    let agent = escape_agent(&env, &r);
    let mut cmd = env.retry_run(&r);
    if by_stat {
        cmd.env("RETRY_RUN_WATCH", "stat");
    }
    let out = Run::of(cmd.args(agent.after(&["run", "--quiet", "--task", "Escape"])));
    out.assert_code(1);
    assert_eq!(out.stderr.contains("by stat data instead of inotify"), by_stat, "{}", out.stderr);
    let done = first(&r, "escape", "AttemptCompleted");
    assert_eq!(done["outcome"], "SCOPE_VIOLATION", "{done}");
    let scope = first(&r, "escape", "ScopeChecked");
    let outside = outside_worktree(&scope);
    for p in ["notes.txt", "moved.txt", "refs/heads/evil"] {
        assert!(outside.contains(&p), "{p} not named: {outside:?}");
    }
    // The git machinery is put back; the user's own files are not touched again.
    assert_eq!(std::fs::read(r.join(".git/config")).expect("config"), config_before);
    assert_eq!(std::fs::read(r.join(".git/hooks/pre-commit")).expect("hook"), hook_before);
    assert!(std::fs::read_to_string(r.join("notes.txt")).expect("notes").contains("x\n"), "detect mode only detects");
    let restored: Vec<&str> =
        scope["restored"].as_array().expect("restored").iter().filter_map(Value::as_str).collect();
    assert_eq!(restored, ["config", "hooks/pre-commit"]);
    assert!(out.stderr.contains("changed your checkout outside its worktree"), "{}", out.stderr);
    let ctx = env.run(&r, &["context", "escape"]).stdout;
    assert!(ctx.contains("Write only inside your worktree (the attempt changed"), "{ctx}");
    assert!(ctx.contains("`notes.txt`"), "{ctx}");
    let report = env.run(&r, &["report", "escape"]).stdout;
    assert!(report.contains("An attempt changed your own checkout"), "{report}");
    assert!(report.contains("Restored: the attempt changed the repository's `config`, `hooks/pre-commit`"), "{report}");
}

#[test]
fn the_watch_covers_tracked_files_in_ignored_directories_and_untracked_ones_but_not_ignored_output() {
    for by_stat in [false, true] {
        let env = TestEnv::new();
        let r = env
            .repo("repo")
            .file("src/app.txt", "value = 1\n")
            .file(".gitignore", "vendor/\nbuild/\n")
            .file("vendor/lib.txt", "vendored\n")
            .file("retry-run.toml", "max_attempts = 1\n[sandbox]\nmode = \"detect\"\n")
            .commit();
        env.git(&r, &["add", "-f", "vendor/lib.txt"]);
        env.git(&r, &["commit", "-qm", "vendor a file"]);
        std::fs::create_dir_all(r.join("drafts/deep")).expect("drafts");
        std::fs::write(r.join("drafts/deep/plan.txt"), "plan\n").expect("plan");
        std::fs::create_dir_all(r.join("build")).expect("build");
        let checkout = r.display();
        let agent = env.agent(
            FakeAgent::new()
                .sh(&format!("echo x >> {checkout}/vendor/lib.txt"))
                .sh(&format!("echo x >> {checkout}/drafts/deep/plan.txt"))
                .sh(&format!("echo x > {checkout}/build/out.o"))
                .exit(0),
        );
        let mut cmd = env.retry_run(&r);
        if by_stat {
            cmd.env("RETRY_RUN_WATCH", "stat");
        }
        Run::of(cmd.args(agent.after(&["run", "--quiet", "--task", "Reach"]))).assert_code(1);
        let scope = first(&r, "reach", "ScopeChecked");
        let outside = outside_worktree(&scope);
        assert_eq!(outside, ["drafts/deep/plan.txt", "vendor/lib.txt"], "by stat data: {by_stat}");
    }
}

#[test]
fn a_check_that_writes_into_the_checkout_is_refused_under_landlock_and_caught_in_detect_mode() {
    assert!(landlock_here(), "this kernel has no Landlock");
    for (mode, code, outcome) in [("landlock", 1, "CHECK_FAILURE"), ("detect", 1, "SCOPE_VIOLATION")] {
        let env = TestEnv::new();
        let notes = env.path("repo/notes.txt");
        let r = repo(
            &env,
            &format!(
                "max_attempts = 1\n[sandbox]\nmode = \"{mode}\"\n[[check]]\nname = \"sneaky\"\nrun = \"echo x >> {}\"\n",
                notes.display()
            ),
        );
        let agent = env.agent(FakeAgent::new().append("src/app.txt", "more\n"));
        run(&env, &r, &["--task", "Check"], &agent).assert_code(code);
        let done = first(&r, "check", "AttemptCompleted");
        assert_eq!(done["outcome"], outcome, "{mode}: {done}");
        let changed = std::fs::read_to_string(&notes).expect("notes") != "the user's notes\n";
        assert_eq!(changed, mode == "detect", "{mode}");
    }
}

fn sandbox_cmd(env: &TestEnv, dir: &Path, args: &[&str]) -> std::process::Output {
    env.retry_run(dir).arg("sandbox").args(args).output().expect("runs")
}

#[test]
fn the_sandbox_command_confines_to_the_current_directory_and_passes_exit_codes_on() {
    assert!(landlock_here(), "this kernel has no Landlock");
    let env = TestEnv::new();
    let dir = env.path("work");
    std::fs::create_dir(&dir).expect("mkdir");
    let outside = env.path("outside.txt");
    let cache = env.path("cache");
    let script = format!(
        "echo in > inside.txt && echo t > \"$TMPDIR/t\" && echo c > {}/c && ! (echo out > {}) 2>/dev/null && exit 7",
        cache.display(),
        outside.display()
    );
    let out = sandbox_cmd(&env, &dir, &["--writable", &cache.display().to_string(), "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(7), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "it prints nothing of its own");
    assert!(dir.join("inside.txt").exists() && cache.join("c").exists(), "a missing --writable dir is created");
    assert!(!outside.exists());
    let killed = sandbox_cmd(&env, &dir, &["--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(killed.status.code(), Some(137));
    let missing = sandbox_cmd(&env, &dir, &["--", "/no/such/program"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot start"));
    let bad = sandbox_cmd(&env, &dir, &["--writable", "/no/such/parent/dir", "--", "true"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/no/such/parent/dir"));
}

/// Under Landlock, a hidden file stays unreadable when a link beside it
/// leads to it (`key` hidden, `alias -> key`), by either name; the files
/// beside it, and what a link beside it leads to elsewhere, stay readable.
#[test]
fn under_landlock_a_link_beside_a_hidden_file_does_not_make_it_readable() {
    assert!(landlock_here(), "this kernel has no Landlock");
    let env = TestEnv::new();
    let dir = env.path("work");
    let keys = env.path("keys");
    let elsewhere = env.path("elsewhere");
    for d in [&dir, &keys, &elsewhere] {
        std::fs::create_dir(d).expect("mkdir");
    }
    std::fs::write(keys.join("key"), "secret\n").expect("write");
    std::fs::write(keys.join("public"), "public\n").expect("write");
    std::fs::write(elsewhere.join("notes"), "notes\n").expect("write");
    std::os::unix::fs::symlink("key", keys.join("alias")).expect("link");
    std::os::unix::fs::symlink(elsewhere.join("notes"), keys.join("notes")).expect("link");
    let k = |name: &str| keys.join(name).display().to_string();
    let script = format!(
        "! cat {key} 2>/dev/null && ! cat {alias} 2>/dev/null && cat {public} {notes}",
        key = k("key"),
        alias = k("alias"),
        public = k("public"),
        notes = k("notes")
    );
    let out = sandbox_cmd(&env, &dir, &["--layers", "landlock", "--deny-read", &k("key"), "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "public\nnotes\n");
}

#[test]
fn landlock_required_without_it_is_exit_3_and_auto_falls_back_to_detect_once() {
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n[sandbox]\nmode = \"landlock\"\n");
    let no_landlock = |args: &[&str], agent: FakeAgent| {
        let agent = env.agent(agent);
        // Neither Landlock nor namespaces (no bubblewrap) here.
        env.retry_run(&r)
            .env("RETRY_RUN_LANDLOCK_ABI", "0")
            .env("RETRY_RUN_BWRAP", "")
            .args(agent.after(args))
            .output()
            .expect("runs")
    };
    let out = no_landlock(&["run", "--quiet", "--task", "Need it"], FakeAgent::new());
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no Landlock") && err.contains("\"detect\""), "{err}");
    assert!(!r.join(".git/retry-run/tasks/need-it").exists(), "nothing is recorded");
    std::fs::write(r.join("retry-run.toml"), "max_attempts = 1\n").expect("write");
    let out = no_landlock(&["run", "--quiet", "--task", "Fallback"], FakeAgent::new().write("src/app.txt", "2\n"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("has no Landlock").count(), 1, "{err}");
    let started = first(&r, "fallback", "TaskStarted");
    assert_eq!(started["sandbox"]["mode"], "detect", "{started}");
    assert_eq!(started["sandbox"]["requested"], "auto");
}

#[test]
fn an_agent_stopped_by_the_sandbox_is_told_what_was_refused_and_how_to_allow_it() {
    assert!(landlock_here(), "this kernel has no Landlock");
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 2\n");
    let cache = env.home().join(".cache/tool");
    let state = cache.join("state").display().to_string();
    let agent = env.agent(FakeAgent::new().write("src/app.txt", "2\n").write(&state, "x\n"));
    run(&env, &r, &["--task", "Needs cache"], &agent).assert_code(1);
    let p = std::fs::read_to_string(r.join(".git/retry-run/tasks/needs-cache/attempts/2/prompt.md")).expect("prompt");
    assert!(p.contains("The sandbox refused writes outside the worktree"), "{p}");
    assert!(p.contains(&format!("`{}", env.home().join(".cache").display())), "{p}");
    assert!(p.contains("`[sandbox] writable`"), "{p}");
    let report = env.run(&r, &["report", "needs-cache"]).stdout;
    assert!(report.contains("if the agent needs one of them, add it to `[sandbox] writable`"), "{report}");
    // Allowed, it works.
    std::fs::write(r.join("retry-run.toml"), "max_attempts = 1\n[sandbox]\nwritable = [\"~/.cache\"]\n")
        .expect("write");
    run(&env, &r, &["--task", "Allowed"], &agent).assert_code(0);
    assert!(cache.join("state").exists());
}

/// Started from a shell in the checkout, with variables naming it: the
/// agent and the checks see their worktree, never the checkout (a program
/// that takes its directory from `PWD` works in the worktree), and the
/// record names what was rewritten and dropped.
#[test]
fn the_environment_names_the_worktree_never_the_checkout() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[[check]]\nname = \"env\"\nkind = \"lint\"\n\
                run = 'echo \"check PWD=$PWD\"; echo \"check VENV=${VIRTUAL_ENV-unset}\"'\n";
    let r = repo(&env, toml);
    let agent = env.agent(
        FakeAgent::new()
            .sh(r#"echo "PWD=$PWD" > env.txt"#)
            .sh(r#"echo "OLDPWD=${OLDPWD-unset}" >> env.txt"#)
            .sh(r#"echo "SRC=$SRC_DIR" >> env.txt"#)
            .sh(r#"echo "VENV=${VIRTUAL_ENV-unset}" >> env.txt"#)
            .sh(r#"echo "TOOLS=$TOOLS" >> env.txt"#)
            .sh(r#"echo "GIT_DIR=${GIT_DIR-unset}" >> env.txt"#)
            .sh(r#"echo "OTHER=$OTHER" >> env.txt"#),
    );
    let checkout = r.display().to_string();
    let run = Run::of(
        env.retry_run(&r)
            .env("SRC_DIR", format!("{checkout}/src"))
            .env("VIRTUAL_ENV", format!("{checkout}/.venv"))
            .env("TOOLS", format!("{checkout}/.venv/bin:/usr/local/bin"))
            .env("GIT_DIR", format!("{checkout}/.git"))
            .env("OTHER", "/somewhere/else")
            .args(agent.after(&["run", "--quiet", "--task", "Env"])),
    );
    run.assert_code(0);
    let wt = r.join(".git/retry-run/worktrees/env");
    let wt = wt.display();
    let seen = env.git(&r, &["show", "refs/retry-run/env/1:env.txt"]);
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            format!("PWD={wt}"),
            "OLDPWD=unset".to_string(),
            format!("SRC={wt}/src"),
            "VENV=unset".to_string(),
            "TOOLS=/usr/local/bin".to_string(),
            "GIT_DIR=unset".to_string(),
            "OTHER=/somewhere/else".to_string(),
        ],
        "{seen}"
    );
    let check = std::fs::read_to_string(r.join(".git/retry-run/tasks/env/attempts/1/checks/env.out")).expect("env.out");
    assert!(check.contains(&format!("check PWD={wt}")) && check.contains("check VENV=unset"), "{check}");
    let started = first(&r, "env", "AgentStarted");
    let names = |k: &str| -> Vec<String> {
        let mut v: Vec<String> = started["sandbox"]["env"][k]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    assert_eq!(names("rewritten"), ["SRC_DIR", "TOOLS"], "{started}");
    assert_eq!(names("dropped"), ["GIT_DIR", "VIRTUAL_ENV"], "{started}");
}

/// An agent that points its worktree's `.git` file at the user's repository
/// (and its `commondir` at a directory of its own) gets nothing from it:
/// retry-run puts the links back before it opens the
/// worktree again, so neither the snapshot nor the next attempt's reset
/// touches the user's HEAD, index or staged work; the attempt is a scope
/// violation naming the link.
#[test]
fn a_rewritten_git_link_is_put_back_before_retry_run_opens_the_worktree() {
    // Landlock alone: in the namespaces the links are read-only, and the
    // rewrite is refused at the source (tests/it/containment.rs).
    let env = TestEnv::new();
    let r = repo(
        &env,
        "max_attempts = 2\n[worktree]\nkeep = \"all\"\n[sandbox]\nmode = \"landlock\"\n[[check]]\nname = \"t\"\nkind = \"test\"\nrun = \"grep -q fixed src/app.txt\"\n",
    );
    std::fs::write(r.join("notes.txt"), "a staged edit\n").expect("write");
    env.git(&r, &["add", "notes.txt"]);
    std::fs::write(r.join("src/app.txt"), "value = 1\nan unstaged edit\n").expect("write");
    let user = |env: &TestEnv| {
        (
            env.git(&r, &["symbolic-ref", "HEAD"]),
            env.git(&r, &["rev-parse", "HEAD"]),
            env.git(&r, &["diff", "--cached"]),
            env.git(&r, &["status", "--porcelain"]),
        )
    };
    let before = user(&env);
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "wrong\n")
            .sh("mkdir -p \"$TMPDIR/fake\" && echo \"$TMPDIR/fake\" > \"$(git rev-parse --git-dir)/commondir\"")
            .sh(&format!("printf 'gitdir: {}/.git\\n' > .git", r.display()))
            .next_call()
            .append("src/app.txt", "fixed\n"),
    );
    let run = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Link"])));
    run.assert_code(0);
    assert_eq!(user(&env), before, "the user's HEAD, index or working tree changed");
    assert_eq!(crate::support::record::outcomes(&r, "link"), ["SCOPE_VIOLATION", "SUCCESS"]);
    let scope = first(&r, "link", "ScopeChecked");
    let found: Vec<(String, String)> = scope["violations"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|x| (x["path"].as_str().unwrap_or("").into(), x["reason"].as_str().unwrap_or("").into()))
                .collect()
        })
        .unwrap_or_default();
    assert!(found.contains(&("worktree/.git".to_string(), "git-internal".to_string())), "{scope}");
    for part in ["worktree/.git", "worktree-admin/commondir"] {
        assert!(scope["restored"].as_array().is_some_and(|r| r.iter().any(|x| x == part)), "{part}: {scope}");
    }
    let link = std::fs::read_to_string(r.join(".git/retry-run/worktrees/link/.git")).expect(".git file");
    assert!(link.contains("/worktrees/retry-run-link"), "{link}");
}

/// Variables that look like credentials are hidden from the agent and the
/// checks, but for those `agent.env_pass` names; API keys pass.
#[test]
fn credentials_in_the_environment_are_hidden_from_the_agent_and_the_checks() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[agent]\nenv_pass = [\"DEPLOY_TOKEN\"]\n[[check]]\nname = \"env\"\nkind = \"lint\"\n\
                run = 'echo \"check GITHUB_TOKEN=${GITHUB_TOKEN-unset}\"'\n";
    let r = repo(&env, toml);
    let agent = env.agent(FakeAgent::new().sh(
        r#"for v in GITHUB_TOKEN AWS_SECRET_ACCESS_KEY SSH_AUTH_SOCK DB_PASSWORD DEPLOY_TOKEN ANTHROPIC_API_KEY; do eval "echo $v=\${$v-unset}"; done > env.txt"#,
    ));
    let run = Run::of(
        env.retry_run(&r)
            .env("GITHUB_TOKEN", "ghp_x")
            .env("AWS_SECRET_ACCESS_KEY", "aws_x")
            .env("SSH_AUTH_SOCK", "/tmp/agent.sock")
            .env("DB_PASSWORD", "pw")
            .env("DEPLOY_TOKEN", "passed")
            .env("ANTHROPIC_API_KEY", "sk-x")
            .args(agent.after(&["run", "--quiet", "--task", "Creds"])),
    );
    run.assert_code(0);
    let seen = env.git(&r, &["show", "refs/retry-run/creds/1:env.txt"]);
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            "GITHUB_TOKEN=unset",
            "AWS_SECRET_ACCESS_KEY=unset",
            "SSH_AUTH_SOCK=unset",
            "DB_PASSWORD=unset",
            "DEPLOY_TOKEN=passed",
            "ANTHROPIC_API_KEY=sk-x"
        ],
        "{seen}"
    );
    let check =
        std::fs::read_to_string(r.join(".git/retry-run/tasks/creds/attempts/1/checks/env.out")).expect("env.out");
    assert!(check.contains("check GITHUB_TOKEN=unset"), "{check}");
    let started = first(&r, "creds", "AgentStarted");
    let hidden = started["sandbox"]["env"]["credentials"].clone();
    assert_eq!(hidden, serde_json::json!(["AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "SSH_AUTH_SOCK"]));
    let log = std::fs::read_to_string(r.join(".git/retry-run/tasks/creds/events.jsonl")).expect("events");
    assert!(!log.contains("ghp_x") && !log.contains("aws_x"), "a value reached the record");
}

/// The verifier reads the worktree and writes none of it: a module the
/// agent planted where the verifier's interpreter imports from runs
/// confined, and cannot write into the user's checkout.
#[test]
fn code_the_agent_planted_for_the_verifier_runs_confined() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[verifier]\nretries = 0\n\
                run = \"python3 -c 'import json; print(json.dumps({\\\"verdict\\\": \\\"approved\\\"}))'\"\n";
    let r = repo(&env, toml);
    let owned = r.join("owned.txt");
    let planted =
        format!("open({:?}, 'w').write('owned')\nfrom importlib import import_module\n", owned.display().to_string());
    let agent = env.agent(FakeAgent::new().append("src/app.txt", "value = 2\n").write("json.py", &planted));
    let run = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Plant"])));
    assert!(!owned.exists(), "the planted module wrote into the checkout:\n{}", run.stderr);
    let v = first(&r, "plant", "VerifierFinished");
    assert_eq!(v["sandbox"]["mode"], "namespaces", "{v}");
    let writable: Vec<&str> =
        v["sandbox"]["writable"].as_array().map(|w| w.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    assert!(!writable.iter().any(|w| w.ends_with("/worktrees/plant")), "the worktree is writable: {v}");
    assert_eq!(v["answered"], false, "the planted module failed, so the call gave no verdict: {v}");
}

/// A daemon the agent double-forks into its own session (`setsid`) does
/// not outlive the attempt: the confined command's subreaper ends it.
#[test]
fn a_daemon_the_agent_leaves_does_not_outlive_the_attempt() {
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "value = 2\n")
            .sh("( setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & )")
            .sh("i=0; while [ ! -s daemon.pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done"),
    );
    let run = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Daemon"])));
    run.assert_code(0);
    // The pid it wrote is its number inside the sandbox's PID namespace,
    // not this machine's: look for it by its directory instead.
    let _: i32 = env.git(&r, &["show", "refs/retry-run/daemon/1:daemon.pid"]).trim().parse().expect("a pid");
    let wt = std::fs::canonicalize(r.join(".git/retry-run/worktrees/daemon")).unwrap_or_else(|_| r.join(".git"));
    let left = crate::support::processes_in(&wt);
    assert!(left.is_empty(), "the daemon still runs: {left:?}");
    let out = std::fs::read_to_string(r.join(".git/retry-run/tasks/daemon/attempts/1/agent.out")).expect("agent.out");
    assert!(out.contains("ended 1 process(es) the command left running"), "{out}");
}

/// The user's secrets cannot be read by the agent or its checks: the
/// credential stores always (`~/.ssh`, `~/.aws`, ...), and what
/// `sandbox.deny_read` adds; the rest of `HOME` stays readable.
#[test]
fn secrets_in_home_cannot_be_read() {
    let env = TestEnv::new();
    let home = env.home();
    for (rel, text) in [
        (".ssh/id_ed25519", "PRIVATE KEY"),
        (".aws/credentials", "aws_secret"),
        (".git-credentials", "https://u:token@host"),
        ("private/plan.txt", "private plan"),
        ("notes.txt", "readable notes"),
    ] {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, text).expect("plant");
    }
    let toml = "max_attempts = 1\n[sandbox]\ndeny_read = [\"~/private\"]\n[[check]]\nname = \"peek\"\nkind = \"lint\"\n\
                run = 'cat ~/.ssh/id_ed25519 || echo \"check: refused\"'\n";
    let r = repo(&env, toml);
    let agent = env.agent(FakeAgent::new().sh(
        r#"for f in .ssh/id_ed25519 .aws/credentials .git-credentials private/plan.txt notes.txt; do if cat "$HOME/$f" >/dev/null 2>&1; then echo "$f: read"; else echo "$f: refused"; fi; done > read.txt; ls "$HOME/.ssh" > listed.txt"#,
    ));
    let run = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Peek"])));
    run.assert_code(0);
    let seen = env.git(&r, &["show", "refs/retry-run/peek/1:read.txt"]);
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            ".ssh/id_ed25519: refused",
            ".aws/credentials: refused",
            ".git-credentials: refused",
            "private/plan.txt: refused",
            "notes.txt: read"
        ],
        "{seen}"
    );
    let check =
        std::fs::read_to_string(r.join(".git/retry-run/tasks/peek/attempts/1/checks/peek.out")).expect("peek.out");
    assert!(check.contains("check: refused") && !check.contains("PRIVATE KEY"), "{check}");
    let started = first(&r, "peek", "AgentStarted");
    let hidden = started["sandbox"]["hidden"].as_array().map(|h| h.len()).unwrap_or(0);
    assert_eq!(hidden, 4, "{started}");
}

/// Other projects' secrets beside the repository (not beneath `HOME`) are
/// hidden too, under namespaces and under the Landlock fallback: with the
/// repository at `<tmp>/work/app`, `<tmp>/work/billing/.env`, its
/// `.aws/credentials` and a `.netrc` in `<tmp>/work` cannot be read; the
/// repository's own `.env` and a sibling's other files can.
#[test]
fn other_projects_secrets_beside_the_repository_cannot_be_read() {
    let env = TestEnv::new();
    let app = env.repo("work/app").file("src/app.txt", "value = 1\n").commit();
    std::fs::write(app.join(".env"), "OWN=1\n").expect("own .env");
    for (rel, text) in [
        ("work/billing/.env", "BILLING_TOKEN=s3cret"),
        ("work/billing/.aws/credentials", "aws_secret"),
        ("work/billing/README.md", "readable"),
        ("work/.netrc", "machine m login l password p"),
    ] {
        env.write(rel, text);
    }
    let script = format!(
        "for f in {0}/billing/.env {0}/billing/.aws/credentials {0}/.netrc {0}/billing/README.md .env; do \
         if cat \"$f\" >/dev/null 2>&1; then echo \"$f: read\"; else echo \"$f: refused\"; fi; done",
        env.path("work").display()
    );
    let w = env.path("work").display().to_string();
    let want = [
        format!("{w}/billing/.env: refused"),
        format!("{w}/billing/.aws/credentials: refused"),
        format!("{w}/.netrc: refused"),
        format!("{w}/billing/README.md: read"),
        ".env: read".to_string(),
    ];
    let mut layers = vec!["landlock"];
    if retry_run::sandbox::layers::namespaces::probe().is_ok() {
        layers.push("namespaces");
    } else {
        eprintln!("SKIPPED (namespaces): bubblewrap missing or user namespaces refused");
    }
    if !landlock_here() {
        eprintln!("SKIPPED (landlock): this kernel has no Landlock");
        layers.retain(|l| *l != "landlock");
    }
    for l in layers {
        let out = sandbox_cmd(&env, &app, &["--layers", l, "--", "sh", "-c", &script]);
        let seen = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{l}: {seen}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(seen.lines().collect::<Vec<_>>(), want, "{l}");
    }
}

#[test]
fn clean_removes_what_a_killed_sandbox_left_and_nothing_a_live_one_holds() {
    assert!(landlock_here(), "this kernel has no Landlock");
    let env = TestEnv::new();
    let r = repo(&env, "");
    let dir = env.path("work");
    std::fs::create_dir(&dir).expect("mkdir");
    let made_by = |pid: u32| -> Vec<PathBuf> {
        let prefix = |what: &str| format!("retry-run-{what}-{pid}-");
        let mut bases = vec![PathBuf::from("/dev/shm"), PathBuf::from("/tmp"), std::env::temp_dir()];
        bases.dedup();
        bases
            .iter()
            .filter_map(|b| std::fs::read_dir(b).ok())
            .flat_map(|d| d.flatten().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                name.starts_with(&prefix("run")) || name.starts_with(&prefix("sandbox"))
            })
            .collect()
    };
    let start = || env.retry_run(&dir).args(["sandbox", "--", "sleep", "60"]).spawn().expect("starts");
    let wait_for = |pid: u32| {
        for _ in 0..500 {
            if !made_by(pid).is_empty() {
                return made_by(pid);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("no directory of sandbox {pid} appeared");
    };
    let mut killed = start();
    let left = wait_for(killed.id());
    killed.kill().expect("kill -9");
    killed.wait().expect("reaped");
    assert_eq!(made_by(killed.id()), left, "a killed sandbox cannot remove its directories");
    let mut live = start();
    let held = wait_for(live.id());
    let out = env.run(&r, &["clean", "--all"]).assert_code(0).stdout.clone();
    for d in &left {
        assert!(out.contains(&format!("removed {} (a killed sandbox's", d.display())), "{out}");
        assert!(!d.exists(), "{}", d.display());
    }
    for d in &held {
        assert!(d.exists() && !out.contains(&d.display().to_string()), "a live sandbox's: {out}");
    }
    live.kill().expect("kill");
    live.wait().expect("reaped");
    env.run(&r, &["clean", "--all"]).assert_code(0);
}
