//! What a newcomer reads: an empty repository, a repository named by
//! `GIT_DIR` and `GIT_WORK_TREE`, a shallow clone and a linked worktree
//! of the user's; numbers refused with the file, line and column; and
//! every argument of every command's `--help` with a line of help.

use clap::CommandFactory;

use crate::support::{FakeAgent, Run, TestEnv};

const NO_COMMIT: &str = "the repository has no commit yet";

/// `run`, `scope` and `diff` in a repository without a commit: one line
/// naming the problem, one hint naming the way out, exit 2.
#[test]
fn an_empty_repository_asks_for_a_first_commit() {
    let env = TestEnv::new();
    let r = env.repo("repo").file("app.txt", "v = 1\n").init();
    let agent = env.agent(FakeAgent::new().write("app.txt", "v = 2\n"));
    let runs = [
        ("run", env.run_agent(&r, &["run", "--quiet", "--task", "Change"], &agent)),
        ("scope", env.run(&r, &["scope"])),
        ("diff", env.run(&r, &["diff"])),
        ("scope --base main", env.run(&r, &["scope", "--base", "main"])),
        ("run --base main", env.run_agent(&r, &["run", "--quiet", "--task", "Change", "--base", "main"], &agent)),
    ];
    for (what, run) in runs {
        run.assert_code(2);
        assert_eq!(run.error_line(), format!("retry-run: error: {NO_COMMIT}"), "{what}");
        assert_eq!(run.hints(), ["make a first commit: retry-run needs a base"], "{what}");
    }
}

/// A repository with one commit, its git directory moved out of the
/// working tree: `(git dir, working tree)`.
fn apart(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let toml = "max_attempts = 1\n[[check]]\nname = \"env\"\nkind = \"lint\"\nrun = 'env | sort'\n";
    let r = env.repo("work").file("app.txt", "v = 1\n").file("retry-run.toml", toml).commit();
    let git_dir = env.path("store.git");
    std::fs::rename(r.join(".git"), &git_dir).expect("move .git away");
    (git_dir, r)
}

/// `GIT_DIR` and `GIT_WORK_TREE` name the repository from another
/// directory, as for git: `scope`, `diff` and `run` work there, and
/// neither the agent nor the checks get those variables.
#[test]
fn git_dir_and_git_work_tree_are_honoured_and_not_passed_on() {
    let env = TestEnv::new();
    let (git_dir, work) = apart(&env);
    std::fs::write(work.join("app.txt"), "v = 2\n").expect("change the working tree");
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("another directory");
    let with_env = |args: &[&str]| {
        Run::of(env.retry_run(&elsewhere).env("GIT_DIR", &git_dir).env("GIT_WORK_TREE", &work).args(args))
    };
    // Without the variables: not a repository.
    let run = env.run(&elsewhere, &["scope"]);
    assert!(run.stderr.contains("not a git repository"), "{}", run.stderr);

    let run = with_env(&["scope", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["checked"], 1, "{}", run.stdout);
    let run = with_env(&["diff"]);
    run.assert_code(0);
    assert!(run.stdout.contains("+v = 2"), "{}", run.stdout);

    let agent = env.agent(FakeAgent::new().sh("env | sort > agent-env.txt").write("app.txt", "v = 3\n"));
    let run = Run::of(
        env.retry_run(&elsewhere)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", &work)
            .args(agent.after(&["run", "--quiet", "--task", "Env"])),
    );
    run.assert_code(0);
    let seen =
        env.git(&work, &["--git-dir", git_dir.to_str().expect("utf-8"), "show", "refs/retry-run/env/1:agent-env.txt"]);
    let check =
        std::fs::read_to_string(git_dir.join("retry-run/tasks/env/attempts/1/checks/env.out")).expect("env.out");
    for (who, text) in [("the agent", &seen), ("the check", &check)] {
        assert!(text.contains("PATH="), "{who} printed no environment:\n{text}");
        for var in ["GIT_DIR=", "GIT_WORK_TREE=", "GIT_COMMON_DIR="] {
            assert!(!text.lines().any(|l| l.starts_with(var)), "{who} got {var}:\n{text}");
        }
    }
    // The user's working tree is as it was; the record is in GIT_DIR.
    assert_eq!(std::fs::read_to_string(work.join("app.txt")).expect("app.txt"), "v = 2\n");
    assert!(git_dir.join("retry-run/tasks/env").is_dir());
}

/// `GIT_DIR` alone: the current directory is the top of the working tree
/// (git's rule); a `GIT_COMMON_DIR` that names another directory than the
/// one the git directory shares is refused in words, the same one works.
#[test]
fn git_dir_alone_and_git_common_dir() {
    let env = TestEnv::new();
    let (git_dir, work) = apart(&env);
    std::fs::write(work.join("app.txt"), "v = 2\n").expect("change the working tree");
    let run = Run::of(env.retry_run(&work).env("GIT_DIR", &git_dir).args(["diff"]));
    run.assert_code(0);
    assert!(run.stdout.contains("+v = 2"), "{}", run.stdout);

    let run = Run::of(env.retry_run(&work).env("GIT_DIR", &git_dir).env("GIT_COMMON_DIR", &git_dir).args(["diff"]));
    run.assert_code(0);
    let other = env.path("other");
    std::fs::create_dir_all(&other).expect("dir");
    let run = Run::of(env.retry_run(&work).env("GIT_DIR", &git_dir).env("GIT_COMMON_DIR", &other).args(["diff"]));
    run.assert_code(2);
    let line = run.error_line();
    assert!(line.contains("GIT_COMMON_DIR="), "{line}");
    assert_eq!(run.hints(), ["fix or unset GIT_COMMON_DIR"], "{}", run.stderr);

    let run = Run::of(env.retry_run(&work).env("GIT_DIR", env.path("nowhere")).args(["diff"]));
    run.assert_code(2);
    let line = run.error_line();
    assert!(line.contains("GIT_DIR=") && line.contains("not a git directory"), "{line}");
    assert_eq!(run.hints(), ["fix or unset GIT_DIR"], "{}", run.stderr);
}

/// A `git clone --depth 1` checkout runs a task: the base is its one
/// commit, the branch of the success is made.
#[test]
fn a_shallow_clone_runs_a_task() {
    let env = TestEnv::new();
    let origin = env.repo("origin").file("app.txt", "v = 1\n").file("retry-run.toml", "max_attempts = 1\n").commit();
    env.git(&origin, &["commit", "-q", "--allow-empty", "-m", "second"]);
    let url = format!("file://{}", origin.display());
    env.git(env.root(), &["clone", "-q", "--depth", "1", &url, "shallow"]);
    let r = env.path("shallow");
    assert_eq!(env.git(&r, &["rev-parse", "--is-shallow-repository"]), "true");
    let agent = env.agent(FakeAgent::new().write("app.txt", "v = 2\n"));
    let run = env.run_agent(&r, &["run", "--quiet", "--task", "Shallow"], &agent);
    run.assert_code(0);
    assert_eq!(env.git(&r, &["show", "retry-run/shallow:app.txt"]), "v = 2");
    let run = env.run(&r, &["diff", "--head", "retry-run/shallow"]);
    run.assert_code(0);
    assert!(run.stdout.contains("+v = 2"), "{}", run.stdout);
}

/// Started inside a linked worktree of the user's: the record is the
/// repository's (in the common directory), the base is the linked worktree's HEAD,
/// and the linked worktree is left as it was.
#[test]
fn a_linked_worktree_of_the_user_runs_a_task() {
    let env = TestEnv::new();
    let r = env.repo("repo").file("app.txt", "v = 1\n").file("retry-run.toml", "max_attempts = 1\n").commit();
    env.git(&r, &["worktree", "add", "-q", "-b", "topic", "../linked"]);
    let linked = env.path("linked");
    std::fs::write(linked.join("app.txt"), "v = local\n").expect("a change of the linked worktree");
    let agent = env.agent(FakeAgent::new().write("app.txt", "v = 2\n"));
    let run = env.run_agent(&linked, &["run", "--quiet", "--task", "Linked"], &agent);
    run.assert_code(0);
    assert!(r.join(".git/retry-run/tasks/linked").is_dir(), "the record is in the common directory");
    assert_eq!(env.git(&r, &["show", "retry-run/linked:app.txt"]), "v = 2");
    assert_eq!(std::fs::read_to_string(linked.join("app.txt")).expect("app.txt"), "v = local\n");
    let run = env.run(&linked, &["scope", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["checked"], 1, "{}", run.stdout);
}

/// A negative cost in the config, in a task's front matter and on the
/// command line: the file, line and column (or the flag), exit 2, nothing run.
#[test]
fn numbers_are_refused_with_file_line_and_column() {
    let env = TestEnv::new();
    let toml = "max_attempts = 2\n[retry]\nmax_cost_usd = -3.0\n";
    let r = env.repo("repo").file("app.txt", "v = 1\n").file("retry-run.toml", toml).commit();
    let agent = env.agent(FakeAgent::new().write("app.txt", "v = 2\n"));
    let run = env.run_agent(&r, &["run", "--quiet", "--task", "Cost"], &agent);
    run.assert_code(2);
    let path = r.join("retry-run.toml");
    assert_eq!(
        run.error_line(),
        format!(
            "retry-run: error: {}:3:16: retry.max_cost_usd must be more than 0 US dollars, not -3; leave it out for no limit",
            path.display()
        )
    );
    assert!(!r.join(".git/retry-run/tasks/cost").exists(), "nothing is recorded");

    let r = env.repo("repo2").file("app.txt", "v = 1\n").commit();
    let task = env.write("task.md", "+++\n[context]\nmax_tokens = 0\n+++\n# Zero\n");
    let run = env.run_agent(&r, &["run", "--quiet", "--task-file", task.to_str().expect("utf-8")], &agent);
    run.assert_code(2);
    let line = run.error_line();
    assert!(line.contains(&format!("{}:3:14: context.max_tokens must be at least 1, not 0", task.display())), "{line}");

    for (flag, words) in [
        ("--max-cost=-3", "--max-cost must be more than 0 US dollars"),
        ("--max-cost=NaN", "--max-cost must be a number of US dollars"),
        ("--max-attempts=0", "--max-attempts must be at least 1"),
        ("--max-duration=0s", "--max-duration must be longer than 0"),
    ] {
        let run = env.run_agent(&r, &["run", "--quiet", "--task", "Flag", flag], &agent);
        run.assert_code(2);
        assert!(run.stderr.contains(words), "{flag}: {}", run.stderr);
    }
}

/// Every argument of every command, through clap's tree: a line of help.
#[test]
fn every_argument_of_every_command_has_help() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        if cmd.get_about().is_none() && cmd.get_long_about().is_none() && !path.is_empty() {
            missing.push(format!("the command `retry-run {path}`"));
        }
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("`retry-run {path}` argument {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let p = if path.is_empty() { sub.get_name().to_string() } else { format!("{path} {}", sub.get_name()) };
            walk(sub, &p, missing);
        }
    }
    let mut cmd = retry_run::cli::Cli::command();
    cmd.build();
    let mut missing = Vec::new();
    walk(&cmd, "", &mut missing);
    assert!(missing.is_empty(), "without a line of help:\n{}", missing.join("\n"));
}

/// `run --help` names the placeholders of the agent command, and no help
/// shows a Rust type or a debug print.
#[test]
fn help_names_the_placeholders_and_no_rust() {
    let env = TestEnv::new();
    let run = env.run(env.root(), &["run", "--help"]);
    run.assert_code(0);
    for p in ["{prompt_file}", "{worktree}", "{task_id}", "{attempt}", "{max_attempts}"] {
        assert!(run.stdout.contains(p), "run --help does not name {p}:\n{}", run.stdout);
    }
    let mut cmd = retry_run::cli::Cli::command();
    cmd.build();
    let mut names: Vec<Vec<String>> = vec![Vec::new()];
    fn collect(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            out.push(p.clone());
            collect(sub, p, out);
        }
    }
    collect(&cmd, Vec::new(), &mut names);
    for path in names {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let run = env.run(env.root(), &args);
        run.assert_code(0);
        for rust in ["Some(", "None", "Option<", "PathBuf", "String", "Vec<", "u32", "u64", "usize", "f64"] {
            assert!(!run.stdout.contains(rust), "retry-run {} shows {rust}:\n{}", args.join(" "), run.stdout);
        }
    }
}

/// `retry-run demo` interrupted by Ctrl-C (SIGINT) as soon as its
/// temporary directory exists: the directory is gone afterwards.
#[test]
fn an_interrupted_demo_removes_its_directory() {
    use std::os::unix::process::ExitStatusExt;
    let env = TestEnv::new();
    let tmp = env.path("tmp");
    std::fs::create_dir_all(&tmp).expect("TMPDIR");
    let mut child = env.retry_run(env.root()).env("TMPDIR", &tmp).arg("demo").spawn().expect("demo starts");
    let made = || {
        std::fs::read_dir(&tmp)
            .expect("TMPDIR")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("retry-run-demo-"))
    };
    while !made() {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::yield_now();
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("demo ends");
    let left: Vec<_> = std::fs::read_dir(&tmp).expect("TMPDIR").flatten().map(|e| e.file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().starts_with("retry-run-demo-")), "left behind: {left:?}");
    if let Some(sig) = status.signal() {
        assert_eq!(sig, libc::SIGINT, "{status:?}");
    }
}
