//! `retry-run sandbox --print bwrap`: the bubblewrap arguments a confined
//! process gets, printed from the code path that runs them, so that
//! `bench/sandbox.py` can time bubblewrap alone with the same mounts (the
//! floor) without retyping them; and a confined command still ends as it
//! did once bubblewrap's PID 1 is waited for by its pid.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::TestEnv;

#[test]
fn the_printed_bubblewrap_arguments_run_true_alone_and_nothing_runs_when_printing() {
    let Some((env, dir)) = with_namespaces() else { return };
    let out = env
        .retry_run(&dir)
        .args(["sandbox", "--layers", "namespaces", "--print", "bwrap", "--", "sh", "-c", "echo ran > ran.txt"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join("ran.txt").exists(), "printing runs nothing");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let args: Vec<String> =
        printed["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("a string").to_string()).collect();
    let line = args.join(" ");
    assert!(line.starts_with("--unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-net"), "{line}");
    assert!(line.contains("--ro-bind / / --dev /dev --proc /proc"), "{line}");
    let real = std::fs::canonicalize(&dir).expect("real path");
    assert!(line.ends_with(&format!("--chdir {}", real.display())), "{line}");
    assert!(!line.contains("--info-fd") && !line.contains("--inner"), "bubblewrap's own arguments only: {line}");
    let made: Vec<PathBuf> =
        printed["made"].as_array().expect("made").iter().map(|d| PathBuf::from(d.as_str().expect("a path"))).collect();
    // The command's TMPDIR is the namespace's own /tmp: nothing made for it.
    assert_eq!(made.len(), 1, "the private run directory: {made:?}");
    assert!(made.iter().all(|d| d.is_dir()), "left for the caller: {made:?}");
    assert!(printed["hidden"].is_array(), "the paths hidden, for a line like run's: {printed}");
    let bwrap = printed["bwrap"].as_str().expect("bwrap");
    let status = Command::new(bwrap).args(&args).args(["--", "true"]).current_dir(&dir).status().expect("bwrap runs");
    assert!(status.success(), "bubblewrap alone runs true with them");
    for d in made {
        std::fs::remove_dir_all(d).expect("removed");
    }
    // Without namespaces there is nothing to print, and nothing runs.
    let out = env
        .retry_run(&dir)
        .args(["sandbox", "--layers", "landlock", "--print", "bwrap", "--", "sh", "-c", "echo ran > ran.txt"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--layers namespaces"), "{out:?}");
    assert!(!dir.join("ran.txt").exists());
}

#[test]
fn a_confined_command_under_namespaces_ends_as_it_ended_and_leaves_nothing() {
    let Some((env, dir)) = with_namespaces() else { return };
    let run = |script: &str| confined_sh(&env, &dir, script);
    let out = run("echo $$ > pid.txt; exit 5");
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    let killed = run("kill -TERM $$");
    assert_eq!(killed.status.code(), Some(128 + 15));
    // A daemon of its own session is ended before the command returns.
    let left = run("setsid sh -c 'sleep 30' & echo started");
    assert_eq!(left.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&left.stderr).contains("process(es) the command left running"), "{left:?}");
    // A program that cannot start, started without a shell (the
    // supervisor's own start of it fails).
    let missing = env
        .retry_run(&dir)
        .args(["sandbox", "--layers", "namespaces", "--", "/no/such/program"])
        .output()
        .expect("runs");
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot start"), "{missing:?}");
}

/// Under namespaces, a command given no `--tmpdir` has the namespace's own
/// `/tmp` as TMPDIR: writable and gone with the namespace; nothing is made
/// in this machine's temporary directory, and what the command wrote
/// there is nowhere outside. A request's `tmpdir` (`run`'s) still binds the
/// directory given.
#[test]
fn a_typed_sandbox_gets_the_namespaces_own_tmp_as_tmpdir_and_makes_nothing_outside() {
    let Some((env, dir)) = with_namespaces() else { return };
    let host_tmp = env.path("host-tmp");
    std::fs::create_dir(&host_tmp).expect("mkdir");
    let script = "test \"$TMPDIR\" = /tmp && test \"$TMP\" = /tmp && echo secret > \"$TMPDIR/scratch\" \
                  && test -f /tmp/scratch";
    let out = env
        .retry_run(&dir)
        .env("TMPDIR", &host_tmp)
        .args(["sandbox", "--layers", "namespaces", "--", "sh", "-c", script])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let left: Vec<_> = std::fs::read_dir(&host_tmp).expect("read").flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "nothing made in this machine's TMPDIR: {left:?}");
    assert!(!Path::new("/tmp/scratch").exists(), "the namespace's /tmp is not this machine's");
    // Given one, the command writes there and it stays.
    let given = env.path("given");
    std::fs::create_dir(&given).expect("mkdir");
    let g = given.display().to_string();
    let request = serde_json::json!({
        "argv": ["sh", "-c", "echo t > \"$TMPDIR/kept\""], "dir": ".", "layers": "namespaces", "tmpdir": g,
    });
    let out = env.retry_run(&dir).args(["supervisor", "--request", &request.to_string()]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(given.join("kept").is_file(), "the tmpdir given is bound in");
}
/// `retry-run sandbox` ends once the supervisor says the command and all
/// it left have ended, without waiting for the kernel to take the
/// namespaces down (as bubblewrap does not for its own PID 1). The
/// descriptor it says that on is not the command's; as root, the pids
/// cgroup it could not remove yet empties by itself and the next confined
/// process removes it.
#[test]
fn the_sandbox_ends_with_its_command_and_the_next_one_removes_the_cgroup_it_left() {
    let Some((env, dir)) = with_namespaces() else { return };
    let confined = |script: &str| {
        env.retry_run(&dir)
            .args(["sandbox", "--layers", "namespaces", "--", "sh", "-c", script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs")
    };
    let first = confined("ls /proc/self/fd > fds.txt; exit 4");
    let maker = first.id();
    let out = first.wait_with_output().expect("waited");
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let fds = std::fs::read_to_string(dir.join("fds.txt")).expect("listed");
    let fds: Vec<&str> = fds.split_whitespace().collect();
    assert_eq!(fds, ["0", "1", "2", "3"], "the standard three and ls's own directory, nothing of the sandbox's");
    let Some(own) = retry_run::sandbox::layers::limits::own_dir_for_limit() else {
        eprintln!("SKIPPED (the cgroup part): not root, or no pids cgroup");
        return;
    };
    let made_by = |pid: u32| -> Vec<PathBuf> {
        std::fs::read_dir(&own)
            .expect("own cgroup")
            .flatten()
            .filter(|e| e.file_name().to_str().and_then(retry_run::sandbox::layers::limits::cgroup_maker) == Some(pid))
            .map(|e| e.path())
            .collect()
    };
    let left = made_by(maker);
    assert!(left.len() <= 1, "one cgroup per confined process: {left:?}");
    if let Some(cg) = left.first() {
        // Emptied by the kernel once the namespaces are down.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read_to_string(cg.join("cgroup.procs")).is_ok_and(|p| !p.trim().is_empty()) {
            assert!(std::time::Instant::now() < deadline, "{} never emptied", cg.display());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let second = confined("true").wait_with_output().expect("waited");
        assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
        assert!(!cg.exists(), "the next confined process removed {}", cg.display());
    }
}

/// Every thread of the supervisor runs under its seccomp filter, the
/// forwarding thread too, which puts it on itself as its first work while
/// the command starts (seen from inside: each task of PID 1 in filter
/// mode, the forwarding thread among them).
#[test]
fn the_supervisors_forwarding_thread_confines_itself() {
    let Some((env, dir)) = with_namespaces() else { return };
    let script = "n=0; while [ $n -lt 100 ]; do all=1; \
        for t in /proc/1/task/*; do grep -q '^Seccomp:[[:space:]]*2' $t/status || all=0; done; \
        [ $all = 1 ] && break; n=$((n+1)); sleep 0.05; done; \
        for t in /proc/1/task/*; do printf '%s ' \"$(cat $t/comm)\"; grep '^Seccomp:' $t/status; done";
    let out = confined_sh(&env, &dir, script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let tasks: Vec<&str> = stdout.lines().collect();
    assert!(tasks.iter().any(|t| t.starts_with("retry-run-super ")), "{stdout}");
    assert!(tasks.iter().any(|t| t.starts_with("sandbox-forward ")), "{stdout}");
    assert!(tasks.iter().all(|t| t.split_whitespace().last() == Some("2")), "every thread filtered: {stdout}");
}

/// The supervisor is the namespace's PID 1 (bubblewrap's `--as-pid-1`):
/// the command's parent, which the command cannot kill (the kernel
/// delivers a PID 1 no signal from inside that it does not handle), and
/// the command still ends as it ended.
#[test]
fn the_supervisor_is_the_namespaces_pid_1_and_the_command_cannot_kill_it() {
    let Some((env, dir)) = with_namespaces() else { return };
    let script = "echo parent=$PPID; cat /proc/1/comm; kill -KILL 1; echo killed=$?; kill -STOP 1; echo alive; exit 7";
    let out = confined_sh(&env, &dir, script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(7), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("parent=1\nretry-run-super\n"), "{stdout}");
    assert!(stdout.contains("alive"), "the command went on and the supervisor waited for it: {stdout}");
}

/// Inside the namespaces the command's parent is the supervisor: its own
/// executable where it is installed beside `retry-run` (as cargo builds
/// and installs it), `retry-run supervisor --inner` where `retry-run` was
/// copied alone; the command is confined and ends the same either way.
/// The supervisor's line refuses to be typed.
#[test]
fn the_supervisor_is_its_own_executable_beside_retry_run_and_retry_run_itself_where_it_is_missing() {
    let Some((env, dir)) = with_namespaces() else { return };
    let installed = PathBuf::from(env!("CARGO_BIN_EXE_retry-run"));
    assert!(installed.with_file_name("retry-run-supervisor").is_file(), "cargo builds the supervisor beside it");
    let alone = env.path("alone");
    std::fs::create_dir(&alone).expect("mkdir");
    std::fs::copy(&installed, alone.join("retry-run")).expect("copied");
    let script = "cat /proc/$PPID/comm > parent.txt; tr '\\0' ' ' < /proc/$PPID/cmdline > line.txt; \
                  ! (echo x > /etc/retry-run-test) 2>/dev/null && exit 9";
    for (exe, parent, inner) in [
        (installed.clone(), "retry-run-super", "retry-run-supervisor --inner "),
        (alone.join("retry-run"), "retry-run", "retry-run supervisor --inner "),
    ] {
        let out = Command::new(&exe)
            .args(["sandbox", "--layers", "namespaces", "--", "sh", "-c", script])
            .current_dir(&dir)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(9), "{exe:?}: {}", String::from_utf8_lossy(&out.stderr));
        let seen = std::fs::read_to_string(dir.join("parent.txt")).expect("parent");
        assert_eq!(seen.trim(), parent, "{exe:?}");
        let line = std::fs::read_to_string(dir.join("line.txt")).expect("line");
        assert!(line.contains(inner), "{exe:?}: {line}");
    }
    for typed in [
        Command::new(installed.with_file_name("retry-run-supervisor")).args(["--inner", "{}"]).output(),
        Command::new(&installed).args(["supervisor", "--", "true"]).output(),
    ] {
        let typed = typed.expect("runs");
        assert_eq!(typed.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&typed.stderr).contains("retry-run sandbox -- CMD"), "{typed:?}");
    }
}

/// retry-run's own executables under a path the command may write (here
/// the directory itself) are mounted read-only inside: the command cannot
/// replace the program that confines the next one.
#[test]
fn retry_runs_own_executables_in_a_writable_directory_cannot_be_replaced_from_inside() {
    // The environment lives as long as the test: it removes `dir` when dropped.
    let Some((_env, dir)) = with_namespaces() else { return };
    let built = PathBuf::from(env!("CARGO_BIN_EXE_retry-run"));
    for name in ["retry-run", "retry-run-supervisor"] {
        let from = built.with_file_name(name);
        if std::fs::hard_link(&from, dir.join(name)).is_err() {
            std::fs::copy(&from, dir.join(name)).expect("copied");
        }
    }
    let before = std::fs::read(dir.join("retry-run-supervisor")).expect("read");
    let script = "for f in retry-run retry-run-supervisor; do \
                  if (echo x >> \"$f\") 2>/dev/null || (rm -f \"$f\") 2>/dev/null; then echo \"$f: changed\"; fi; done; \
                  echo inside > ok.txt";
    let out = Command::new(dir.join("retry-run"))
        .args(["sandbox", "--layers", "namespaces", "--", "sh", "-c", script])
        .current_dir(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "nothing of retry-run's changed");
    assert!(dir.join("ok.txt").exists(), "the directory itself stays writable");
    assert!(std::fs::read(dir.join("retry-run-supervisor")).expect("read") == before, "the supervisor is intact");
}

/// The line `run` starts each agent and check process with: the supervisor
/// with one request (`--print request` prints the request `retry-run
/// sandbox` would make), which confines its command as `retry-run sandbox`
/// does, here with `run`'s TMPDIR and reaping.
#[test]
fn the_line_run_starts_is_the_supervisor_with_one_request_and_confines_as_retry_run_sandbox_does() {
    let Some((env, dir)) = with_namespaces() else { return };
    let tmp = env.path("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    let script = "echo in > in.txt; echo t > \"$TMPDIR/t\"; ! (echo x > /etc/retry-run-test) 2>/dev/null && exit 5";
    let out = env
        .retry_run(&dir)
        .args([
            "sandbox",
            "--layers",
            "namespaces",
            "--git",
            "read-only",
            "--print",
            "request",
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join("in.txt").exists(), "printing runs nothing");
    let mut request: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(request["argv"], serde_json::json!(["sh", "-c", script]));
    assert_eq!(request["layers"], "namespaces");
    request["tmpdir"] = Value::from(tmp.display().to_string());
    request["reap"] = Value::from(true);
    let supervisor = PathBuf::from(env!("CARGO_BIN_EXE_retry-run")).with_file_name("retry-run-supervisor");
    let ran =
        Command::new(&supervisor).args(["--request", &request.to_string()]).current_dir(&dir).output().expect("runs");
    assert_eq!(ran.status.code(), Some(5), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(dir.join("in.txt").exists() && tmp.join("t").exists());
    let typed = Command::new(&supervisor).args(["--request", "{}", "--", "true"]).output().expect("runs");
    assert_eq!(typed.status.code(), Some(2), "a line run did not write");
}

/// A run whose `retry-run` was copied without the supervisor beside it
/// starts `retry-run supervisor` for its agent and checks: the same
/// supervisor, served by `retry-run` itself.
#[test]
fn a_run_without_the_supervisor_beside_retry_run_confines_with_retry_run_supervisor() {
    let Some((env, _)) = with_namespaces() else { return };
    let r = env
        .repo("repo")
        .file("app.txt", "value = 1\n")
        .file("retry-run.toml", "[[check]]\nname = \"parent\"\nrun = \"tr '\\\\0' ' ' < /proc/$PPID/cmdline > /dev/stderr; test -f app.txt\"\n")
        .commit();
    let alone = env.path("alone");
    std::fs::create_dir(&alone).expect("mkdir");
    std::fs::copy(env!("CARGO_BIN_EXE_retry-run"), alone.join("retry-run")).expect("copied");
    let agent = env.agent(
        crate::support::FakeAgent::new()
            .sh("tr '\\0' ' ' < /proc/$PPID/cmdline > parent.txt")
            .append("app.txt", "value = 2\n"),
    );
    let run = crate::support::Run::of(
        env.command(alone.join("retry-run"), &r).args(agent.after(&["run", "--quiet", "--task", "alone"])),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let parent = env.git(&r, &["show", "refs/retry-run/alone/1:parent.txt"]);
    assert!(parent.contains("retry-run supervisor --inner "), "{parent}");
}

/// A probe's success is kept in the user's cache for the same machine
/// state: the next `retry-run sandbox` (layers `auto`) starts no probe of
/// its own; another bubblewrap is another state, probed again, and its
/// refusal is the fallback's as before.
#[test]
fn a_probes_success_is_kept_for_the_same_bubblewrap_and_another_one_is_probed_again() {
    let Some((env, dir)) = with_namespaces() else { return };
    let home = env.home();
    let kept = home.join(".cache/retry-run/namespaces-probe");
    let sandbox = |bwrap: Option<&std::path::Path>| {
        let mut c = env.retry_run(&dir);
        c.env("HOME", &home).env_remove("XDG_CACHE_HOME");
        if let Some(b) = bwrap {
            c.env("RETRY_RUN_BWRAP", b);
        }
        c.args(["sandbox", "--", "sh", "-c", "echo in > in.txt"]).output().expect("runs")
    };
    // bubblewrap behind a script that counts its starts.
    let real = retry_run::sandbox::layers::namespaces::program().expect("bwrap");
    let starts = env.path("starts.txt");
    let counting = env.path("counting-bwrap");
    std::fs::write(
        &counting,
        format!("#!/bin/sh\necho start >> {}\nexec {} \"$@\"\n", starts.display(), real.display()),
    )
    .expect("written");
    std::fs::set_permissions(&counting, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let count = || std::fs::read_to_string(&starts).map(|s| s.lines().count()).unwrap_or(0);
    let first = sandbox(Some(&counting));
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(count(), 2, "the probe, then the command's");
    let state = std::fs::read_to_string(&kept).expect("the success is kept");
    assert!(state.contains("counting-bwrap"), "it names bubblewrap: {state}");
    let again = sandbox(Some(&counting));
    assert_eq!(again.status.code(), Some(0));
    assert!(again.stderr.is_empty(), "no note, no fallback: {}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(count(), 3, "the command's alone: no probe");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), state, "the same state");
    // Another bubblewrap, one that refuses: probed, and the fallback says so.
    let refusing = env.path("bwrap");
    std::fs::write(&refusing, "#!/bin/sh\necho 'no namespaces here' >&2\nexit 1\n").expect("written");
    std::fs::set_permissions(&refusing, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let refused = sandbox(Some(&refusing));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("no namespaces here") && said.contains("Landlock"), "{said}");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), state, "a refusal is not kept");
}

/// Where a container's first process (its PID 1, which adopts every
/// orphan) is retry-run, which reaps only what it started, the supervisor
/// each confined process leaves to be reaped is waited for by the outer
/// process instead: nothing is left as a zombie. Here a stand-in named
/// `retry-run` (so its `/proc/1/comm` reads so) that waits only for its
/// own children, in a PID namespace of its own; as root.
#[test]
fn under_a_retry_run_that_is_pid_1_no_confined_process_leaves_a_zombie() {
    let Some((env, dir)) = with_namespaces_as_root() else { return };
    let python = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().expect("python3");
    let python = PathBuf::from(String::from_utf8_lossy(&python.stdout).trim());
    let init = env.path("init");
    std::fs::create_dir(&init).expect("mkdir");
    std::os::unix::fs::symlink(&python, init.join("retry-run")).expect("symlink");
    let script = [
        "import subprocess, sys, time",
        "for _ in range(3):",
        "    assert subprocess.run(sys.argv[1:]).returncode == 0",
        "time.sleep(0.2)",
        "print(open('/proc/1/comm').read().strip())",
        "for k in open('/proc/1/task/1/children').read().split():",
        "    s = open(f'/proc/{k}/stat').read()",
        "    print(k, s[s.index('(') + 1:s.rindex(')')], s[s.rindex(')') + 2])",
    ]
    .join("\n");
    let out = env
        .command("unshare", &dir)
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(init.join("retry-run"))
        .args(["-c", &script, env!("CARGO_BIN_EXE_retry-run"), "sandbox", "--layers", "namespaces", "--", "true"])
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("retry-run"), "the stand-in is PID 1: {stdout}");
    let zombies: Vec<&str> = lines.filter(|l| l.ends_with(" Z")).collect();
    assert!(zombies.is_empty(), "PID 1 was left these to reap: {zombies:?}");
}

/// `retry-run run` as a container's first process, started by another
/// name (a link `rr`, so its `/proc/1/comm` does not say retry-run): it
/// says in each outer process's line that it is the init, so each waits
/// for its supervisor, and no zombie is left under it while the run goes
/// on (looked at from outside while the run's checks take 1.5 s each).
#[test]
fn a_run_that_is_pid_1_under_another_name_is_left_no_zombie() {
    let Some((env, _)) = with_namespaces_as_root() else { return };
    let r = env
        .repo("repo")
        .file("app.txt", "value = 1\n")
        .file("retry-run.toml", "[[check]]\nname = \"slow\"\nrun = \"sleep 1.5\"\n")
        .commit();
    let bin = env.path("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_retry-run"), bin.join("rr")).expect("symlink");
    let agent = env.agent(crate::support::FakeAgent::new().append("app.txt", "value = 2\n"));
    let mut unshare = env
        .command("unshare", &r)
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(bin.join("rr"))
        .args(agent.after(&["run", "--quiet", "--task", "pid-1"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("unshare runs");
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    // A child the run has not waited for yet (an outer process that has
    // just ended) is a zombie for a moment; one left to the run stays one
    // until the run ends, across the next check (1.5 s).
    let (mut init, mut name) = (None, String::new());
    let (mut since, mut left) = (std::collections::HashMap::new(), Vec::new());
    while unshare.try_wait().expect("waits").is_none() {
        // unshare's child, once it has become the run (before its exec
        // it is still named unshare).
        if init.is_none()
            && let Some(p) = children(unshare.id()).first().copied()
        {
            name = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            init = (name.trim() != "unshare").then_some(p);
        }
        for child in init.map(children).unwrap_or_default() {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) {
                let first = *since.entry(child).or_insert_with(std::time::Instant::now);
                if first.elapsed() > std::time::Duration::from_millis(800) && !left.contains(&stat) {
                    left.push(stat);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = unshare.wait_with_output().expect("waited");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(name.trim(), "rr", "the run was PID 1, by its link's name");
    assert!(left.is_empty(), "left to the run to reap: {left:?}");
}

/// `retry-run sandbox --layers namespaces -- sh -c SCRIPT` in `dir`: how it
/// ended and what it printed.
fn confined_sh(env: &TestEnv, dir: &Path, script: &str) -> std::process::Output {
    env.retry_run(dir).args(["sandbox", "--layers", "namespaces", "--", "sh", "-c", script]).output().expect("runs")
}

/// [`with_namespaces`] for root only, who can make the PID namespace of
/// the test's own that stands for a container.
fn with_namespaces_as_root() -> Option<(TestEnv, PathBuf)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: a PID namespace of the test's own needs root");
        return None;
    }
    with_namespaces()
}

/// A test environment with an empty directory `work`, where bubblewrap
/// can make namespaces; `None` (the test skipped, said on stderr) where
/// it cannot.
fn with_namespaces() -> Option<(TestEnv, PathBuf)> {
    if retry_run::sandbox::layers::namespaces::probe().is_err() {
        eprintln!("SKIPPED: bubblewrap missing or user namespaces refused");
        return None;
    }
    let env = TestEnv::new();
    let dir = env.path("work");
    std::fs::create_dir(&dir).expect("mkdir");
    Some((env, dir))
}
