//! Fleets (docs/fleets.md): several tasks on one machine with `-j`, and
//! tasks shared by several clones ("machines", each with its own HOME)
//! through a bare repository as the remote: `push`, `pull`, leases.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{Agent, FakeAgent, Run, TestEnv};

/// A bare remote with one commit on `main`, and `n` clones of it, each
/// with its own HOME. The repository's config lets agents append to
/// `runs.log` (outside every worktree), one line per agent run.
struct Fleet {
    env: TestEnv,
    clones: Vec<(PathBuf, PathBuf)>,
    runs: PathBuf,
}

impl Fleet {
    fn new(n: usize) -> Fleet {
        let env = TestEnv::new();
        let runs_dir = env.path("runs");
        std::fs::create_dir_all(&runs_dir).expect("mkdir");
        env.repo("seed")
            .file("README.md", "fleet\n")
            .file(
                "retry-run.toml",
                format!("max_attempts = 2\n\n[sandbox]\nwritable = [{:?}]\n", runs_dir.display().to_string()),
            )
            .commit();
        let remote = env.path("remote.git");
        env.git(env.root(), &["clone", "-q", "--bare", "seed", "remote.git"]);
        let mut clones = Vec::new();
        for i in 0..n {
            let home = env.new_home(&format!("home-{i}"));
            let dir = env.path(&format!("clone-{i}"));
            let out = env
                .command_as(&home, "git", env.root())
                .args(["clone", "-q", &remote.display().to_string(), &dir.display().to_string()])
                .output()
                .expect("git runs");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            clones.push((dir, home));
        }
        std::fs::create_dir_all(env.path("tasks")).expect("mkdir");
        Fleet { env, clones, runs: runs_dir.join("runs.log") }
    }

    /// A task file `tasks/<id>.md` whose title gives the id `id`.
    fn task(&self, id: &str) -> String {
        self.env.write(&format!("tasks/{id}.md"), format!("# {id}\n\nWrite a file.\n")).display().to_string()
    }

    /// retry-run in `clone`, as its machine (its HOME).
    fn command(&self, clone: usize, args: &[&str]) -> Command {
        let (dir, home) = &self.clones[clone];
        let mut cmd = self.env.retry_run_as(home, dir);
        cmd.args(args);
        cmd
    }

    fn run(&self, clone: usize, args: &[&str]) -> Run {
        Run::of(&mut self.command(clone, args))
    }

    /// `retry-run <args> -- <agent>` in `clone`.
    fn run_agent(&self, clone: usize, args: &[&str], agent: &Agent) -> Run {
        Run::of(self.command(clone, &[]).args(agent.after(args)))
    }

    /// `retry-run <args> -- <agent>` in `clone`, started.
    fn spawn(&self, clone: usize, args: &[&str], agent: &Agent) -> Child {
        self.command(clone, &[])
            .args(agent.after(args))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("retry-run starts")
    }

    /// The agent's script: one line `<task> <attempt>` in runs.log, a
    /// pause of `sleep` seconds, then a file.
    fn script(&self, sleep: &str) -> FakeAgent {
        FakeAgent::new()
            .sh(&format!("echo \"$RETRY_RUN_TASK $RETRY_RUN_ATTEMPT\" >> {}", self.runs.display()))
            .sleep(sleep)
            .write("out.txt", "done\n")
    }

    /// The agent of [`Fleet::script`].
    fn agent(&self, sleep: &str) -> Agent {
        self.env.agent(self.script(sleep))
    }

    /// Waits until an agent of `run` wrote `line` to runs.log; panics if
    /// `run` ends before.
    fn wait_for_run(&self, run: &mut Child, line: &str) {
        while !self.runs().iter().any(|l| l == line) {
            if let Some(status) = run.try_wait().expect("the run's status") {
                panic!("retry-run ended ({status}) before an agent run {line:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn runs(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.runs).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    }

    /// `push task` from `clone` is refused and the remote stays as it was.
    fn push_is_refused(&self, clone: usize, task: &str) {
        let refs = self.remote_refs();
        let push = self.run(clone, &["push", task]);
        assert_eq!(push.code, 3, "{}", push.stderr);
        assert!(push.stderr.contains("refused"), "{}", push.stderr);
        assert_eq!(self.remote_refs(), refs, "the remote changed");
    }

    fn remote_refs(&self) -> String {
        self.env.git(&self.env.path("remote.git"), &["for-each-ref", "refs/retry-run/"])
    }
}

fn finish(child: Child) -> Run {
    Run::from_output(&child.wait_with_output().expect("wait"))
}

#[test]
fn four_tasks_with_j2_run_two_at_a_time() {
    let f = Fleet::new(1);
    let mut args: Vec<String> = vec!["run".into(), "-j".into(), "2".into(), "--quiet".into()];
    for id in ["t1", "t2", "t3", "t4"] {
        args.push("--task-file".into());
        args.push(f.task(id));
    }
    // Each agent says when it starts and ends, and waits (for at most
    // 30 s) until another agent runs beside it or every task has started:
    // with -j 2 two run at once, and never a third.
    let overlap = f.runs.with_file_name("overlap.log");
    let log = overlap.display();
    let running = format!("$(( $(grep -c '^start' {log}) - $(grep -c '^end' {log}) ))");
    let agent = f.env.agent(
        f.script("0")
            .sh(&format!("echo start >> {log}"))
            .sh(&format!(
                "i=0; while [ {running} -lt 2 ] && [ $(grep -c '^start' {log}) -lt 4 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
            ))
            .sh(&format!("echo end >> {log}")),
    );
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = f.run_agent(0, &argv, &agent);
    first.assert_code(0);
    let (out, err) = (&first.stdout, &first.stderr);
    let (mut now, mut most) = (0i32, 0i32);
    for line in std::fs::read_to_string(&overlap).expect("overlap.log").lines() {
        now += if line == "start" { 1 } else { -1 };
        most = most.max(now);
    }
    assert_eq!(most, 2, "agents running at once, at most\n{err}");
    assert_eq!(f.runs(), ["t1 1", "t2 1", "t3 1", "t4 1"]);
    // The table, and plain lines labelled with the task.
    let table: Vec<&str> = out.lines().collect();
    assert!(table[0].starts_with("task") && table[0].contains("outcome") && table[0].contains("attempts"), "{out}");
    for id in ["t1", "t2", "t3", "t4"] {
        assert!(out.lines().any(|l| l.starts_with(id) && l.contains("succeeded")), "{out}");
        assert!(err.contains(&format!("[{id}] attempt 1/2: agent running")), "{err}");
    }
    // Run again: every task is skipped and counted with its result.
    let again = f.run_agent(0, &argv, &agent);
    assert_eq!(again.code, 0);
    assert_eq!(again.stdout.matches("succeeded (earlier)").count(), 4, "{}", again.stdout);
    assert_eq!(f.runs().len(), 4);
}

#[test]
fn several_tasks_with_json_tag_every_event_and_exit_1_when_one_escalates() {
    let f = Fleet::new(1);
    let (good, bad) = (f.task("good"), f.task("bad"));
    // `bad` changes nothing: every attempt fails, the task escalates.
    let agent = f.env.agent(f.script("0").sh("[ \"$RETRY_RUN_TASK\" = bad ] && rm out.txt; true"));
    let run = f.run_agent(0, &["run", "--json", "-j", "2", "--task-file", &good, "--task-file", &bad], &agent);
    run.assert_code(1);
    let (out, err) = (&run.stdout, &run.stderr);
    let events: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert!(events.len() > 10);
    assert!(events.iter().all(|e| e["task"] == "good" || e["task"] == "bad"), "{out}");
    assert!(events.iter().any(|e| e["task"] == "bad" && e["type"] == "TaskEscalated"));
    assert!(events.iter().any(|e| e["task"] == "good" && e["type"] == "TaskSucceeded"));
    // The table goes to stderr with --json.
    assert!(err.lines().any(|l| l.starts_with("bad") && l.contains("escalated")), "{err}");
}

#[test]
fn push_and_pull_carry_a_record_and_refuse_a_diverged_one() {
    let f = Fleet::new(2);
    let task = f.task("carried");
    let agent = f.agent("0");
    f.run_agent(0, &["run", "--quiet", "--task-file", &task], &agent).assert_code(0);
    let push = f.run(0, &["push"]);
    push.assert_code(0);
    assert!(push.stdout.contains("carried: pushed to origin"), "{}", push.stdout);
    assert!(f.remote_refs().contains("refs/retry-run/carried/record"), "{}", f.remote_refs());
    assert!(f.remote_refs().contains("refs/retry-run/carried/1"));

    let pull = f.run(1, &["pull"]);
    pull.assert_code(0);
    assert!(pull.stdout.contains("carried: took 1"), "{}", pull.stdout);
    let status = f.run(1, &["status"]);
    assert_eq!(status.code, 0);
    assert!(status.stdout.contains("carried\tsucceeded"), "{}", status.stdout);
    for clone in [0, 1] {
        let log = f.run(clone, &["log", "carried", "--verify"]);
        log.assert_code(0);
        assert!(log.stdout.contains("chain intact"), "{}", log.stdout);
    }
    let (dir1, home1) = &f.clones[1];
    let branch = f.env.command_as(home1, "git", dir1).args(["rev-parse", "retry-run/carried"]).status();
    assert!(branch.expect("git runs").success(), "the success branch came with the record");
    // Pulling again: up to date.
    assert!(f.run(1, &["pull", "carried"]).stdout.contains("carried: up to date"));

    // Both clones run the same new task on their own: the records diverge.
    let other = f.task("split");
    for clone in [0, 1] {
        assert_eq!(f.run_agent(clone, &["run", "--quiet", "--task-file", &other], &agent).code, 0);
    }
    assert_eq!(f.run(0, &["push", "split"]).code, 0);
    let before = std::fs::read(dir1.join(".git/retry-run/tasks/split/events.jsonl")).expect("events");
    let pull = f.run(1, &["pull", "split"]);
    pull.assert_code(3);
    let err = &pull.stderr;
    assert!(err.contains("task split") && err.contains("diverged at event 1"), "{err}");
    assert!(err.contains("TaskStarted"), "{err}");
    let after = std::fs::read(dir1.join(".git/retry-run/tasks/split/events.jsonl")).expect("events");
    assert_eq!(before, after, "nothing is merged");
    // And the remote refuses the other clone's record.
    f.push_is_refused(1, "split");
}

#[test]
fn a_killed_run_is_taken_over_once_its_lease_expires() {
    let f = Fleet::new(2);
    let task = f.task("killed");
    let leased = ["run", "--quiet", "--task-file", &task, "--remote", "origin", "--lease", "2s"];
    let mut first = f.spawn(0, &leased, &f.agent("8"));
    // Wait until its agent runs, then kill retry-run itself.
    f.wait_for_run(&mut first, "killed 1");
    first.kill().expect("kill -9");
    let _ = first.wait();

    // While the lease is live, another clone is turned away.
    let fast = f.agent("0");
    let turned_away = f.run_agent(1, &leased, &fast);
    turned_away.assert_code(3);
    assert!(turned_away.stderr.contains("task killed is held by"), "{}", turned_away.stderr);

    std::thread::sleep(Duration::from_millis(2500));
    let taken = f.run_agent(1, &leased, &fast);
    taken.assert_code(0);
    assert!(taken.stderr.contains("took over the lease"), "{}", taken.stderr);
    assert!(taken.stdout.contains("succeeded at attempt 2"), "{}", taken.stdout);
    let events = crate::support::record::events(&f.clones[1].0, "killed");
    let completed: Vec<&serde_json::Value> = events.iter().filter(|e| e["type"] == "AttemptCompleted").collect();
    assert_eq!(completed[0]["attempt"], 1);
    assert_eq!(completed[0]["outcome"], "CRASH");
    assert_eq!(completed[0]["interrupted"], true);
    assert_eq!(completed[1]["attempt"], 2);
    assert_eq!(completed[1]["outcome"], "SUCCESS");

    // The killed clone's record is stale: its push is refused, the remote unchanged.
    f.push_is_refused(0, "killed");
}

#[test]
fn clones_starting_the_same_task_at_once_run_it_once() {
    let f = Fleet::new(3);
    let agent = f.agent("1");
    for round in 0..3 {
        let id = format!("race-{round}");
        let task = f.task(&id);
        let children: Vec<Child> = (0..3)
            .map(|c| f.spawn(c, &["run", "--quiet", "--task-file", &task, "--remote", "origin"], &agent))
            .collect();
        let ends: Vec<Run> = children.into_iter().map(finish).collect();
        let ran: Vec<String> = f.runs().into_iter().filter(|l| l.starts_with(&format!("{id} "))).collect();
        assert_eq!(ran, [format!("{id} 1")], "{ends:#?}");
        assert_eq!(
            ends.iter().filter(|e| e.code == 0 && e.stdout.contains("succeeded at attempt 1")).count(),
            1,
            "{ends:#?}"
        );
        // The others were turned away, or found it done.
        for Run { code, stdout, stderr } in &ends {
            assert!(*code == 0 || *code == 3 && stderr.contains("is held by"), "{code}\n{stdout}\n{stderr}");
        }
    }
}

#[test]
fn ten_tasks_queued_on_three_clones_each_run_once() {
    let f = Fleet::new(3);
    let ids: Vec<String> = (0..10).map(|i| format!("q{i}")).collect();
    let files: Vec<String> = ids.iter().map(|id| f.task(id)).collect();
    let agent = f.agent("0.3");
    let mut args: Vec<&str> = vec!["run", "--quiet", "-j", "2", "--remote", "origin"];
    for file in &files {
        args.extend(["--task-file", file.as_str()]);
    }
    let children: Vec<Child> = (0..3).map(|c| f.spawn(c, &args, &agent)).collect();
    for run in children.into_iter().map(finish) {
        run.assert_code(0);
    }
    // Every task ran once, at attempt 1: numbers never repeat.
    let expected: Vec<String> = ids.iter().map(|id| format!("{id} 1")).collect();
    assert_eq!(f.runs(), expected);
    for clone in 0..3 {
        f.run(clone, &["pull"]).assert_code(0);
        let status = f.run(clone, &["status"]).stdout;
        for id in &ids {
            assert!(status.contains(&format!("{id}\tsucceeded")), "clone {clone}:\n{status}");
            let log = f.run(clone, &["log", id, "--verify"]);
            assert_eq!(log.code, 0, "{}", log.stdout);
            let events = crate::support::record::events(&f.clones[clone].0, id);
            assert_eq!(events.iter().filter(|e| e["type"] == "AgentStarted").count(), 1, "{id} in clone {clone}");
        }
    }
}

#[test]
fn on_a_terminal_each_running_task_has_a_live_line() {
    let f = Fleet::new(1);
    let (a, b) = (f.task("live-a"), f.task("live-b"));
    let agent = f.agent("1").shell();
    let bin = env!("CARGO_BIN_EXE_retry-run");
    let inner = format!("{bin} run -j 2 --task-file {a} --task-file {b} -- {agent}");
    // `script` gives retry-run a terminal.
    let out = {
        let (dir, home) = &f.clones[0];
        let mut cmd = f.env.command_as(home, "script", dir);
        cmd.args(["-qec", &inner, "/dev/null"]).output().expect("script (util-linux) runs")
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // Both tasks' lines drawn together, then redrawn in place.
    assert!(text.contains("live-a: attempt 1/2 · agent running"), "{text}");
    assert!(text.contains("live-b: attempt 1/2 · agent running"), "{text}");
    assert!(text.contains("\x1b[2A"), "the two live lines are redrawn together:\n{text}");
    assert!(text.contains("live-a: succeeded at attempt 1"), "{text}");
}

#[test]
fn a_task_held_here_is_skipped_and_a_broken_one_fails_the_queue_but_not_the_others() {
    let f = Fleet::new(1);
    let (busy, fine, broken) = (f.task("busy"), f.task("fine"), f.task("broken"));
    let agent = f.agent("0");
    // `broken` has run once; then its log is damaged.
    assert_eq!(f.run_agent(0, &["run", "--quiet", "--task-file", &broken, "--again"], &agent).code, 0);
    let log = f.clones[0].0.join(".git/retry-run/tasks/broken/events.jsonl");
    let text = std::fs::read_to_string(&log).expect("events");
    std::fs::write(&log, text.replacen("\"TaskStarted\"", "\"TaskStartled\"", 1)).expect("write");
    // `busy` is being run by another process.
    let mut holder = f.spawn(0, &["run", "--quiet", "--task-file", &busy], &f.agent("4"));
    f.wait_for_run(&mut holder, "busy 1");
    let queue = f.run_agent(
        0,
        &["run", "--quiet", "-j", "2", "--task-file", &busy, "--task-file", &fine, "--task-file", &broken],
        &agent,
    );
    queue.assert_code(3);
    let out = &queue.stdout;
    assert!(out.lines().any(|l| l.starts_with("busy") && l.contains("skipped: held by process")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("fine") && l.contains("succeeded")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("broken") && l.contains("failed: ") && l.contains("broken")), "{out}");
    assert_eq!(finish(holder).code, 0);
}

#[test]
fn remote_work_without_the_git_program_says_what_needs_it() {
    let f = Fleet::new(1);
    let task = f.task("nogit");
    assert_eq!(f.run_agent(0, &["run", "--quiet", "--task-file", &task], &f.agent("0")).code, 0);
    let empty = f.env.path("empty-bin");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = f.command(0, &["push", "nogit"]).env("PATH", &empty).output().expect("runs");
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`git` is not on PATH: retry-run push nogit runs it"), "{err}");
}

#[test]
fn a_run_whose_lease_was_taken_over_stops_without_pushing() {
    let f = Fleet::new(2);
    let task = f.task("stalled");
    let leased = ["run", "--quiet", "--task-file", &task, "--remote", "origin", "--lease", "2s"];
    let mut first = f.spawn(0, &leased, &f.agent("5"));
    f.wait_for_run(&mut first, "stalled 1");
    // retry-run (not its agent) stops answering: its lease runs out.
    let pid = first.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().expect("kill").success());
    std::thread::sleep(Duration::from_millis(2500));
    f.run_agent(1, &leased, &f.agent("0")).assert_code(0);
    let refs = f.remote_refs();
    assert!(Command::new("kill").args(["-CONT", &pid]).status().expect("kill").success());
    let stopped = finish(first);
    stopped.assert_code(3);
    let err = &stopped.stderr;
    assert!(err.contains("another run took over its lease") && err.contains("pushes nothing more and stops"), "{err}");
    assert_eq!(f.remote_refs(), refs, "the remote is as the run that took over left it");
}

/// The `retry-run run` lines of the two engine examples use only flags
/// `run` has, and the files are valid YAML.
#[test]
fn the_engine_examples_are_valid_and_use_real_flags() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let help = TestEnv::new().run(root, &["run", "--help"]).stdout;
    for rel in ["examples/github-actions/retry-run-tasks.yml", "examples/kubernetes/job.yaml"] {
        let text = std::fs::read_to_string(root.join(rel)).expect("example");
        yaml_rust2::YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("retry-run run ")).collect();
        assert!(!lines.is_empty(), "{rel} runs no task");
        for line in lines {
            assert!(line.contains("--remote origin"), "{rel}: {line}");
            for flag in line.split_whitespace().filter(|w| w.starts_with("--")) {
                assert!(help.contains(flag), "{rel}: `run` has no {flag}");
            }
        }
        assert!(root.join(rel).with_file_name("README.md").is_file(), "{rel} has no README");
    }
}
