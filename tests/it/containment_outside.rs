//! Containment of what retry-run itself does outside the sandbox, tried as
//! a prompt-injected agent would: links, FIFOs and a branch planted in the
//! worktree's git administrative directory (which the agent may write to
//! commit) for retry-run's own git to follow; an index entry below a
//! directory replaced by a link to the user's keys, for the unconfined
//! snapshot to read; input pushed into the user's terminal; the sandbox's
//! supervisor traced, its and the run's environment read; a datagram sent
//! to a named socket outside; the proxy's log flooded; and `kill -9` of the
//! run. Each under namespaces and under the fallback (Landlock and
//! seccomp), as root and, where the binary can be reached by one, as an
//! unprivileged user; after each, the user's branches, index, reflogs and
//! files under `HOME` are as before.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::modes::{Mode, Who, as_who, can, can_burst, give_back, turn};
use crate::support::record::outcomes;
use crate::support::{FakeAgent, Run, TestEnv, processes_in};

fn repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", toml)
        .commit()
}

/// What of the user's an attack must leave as it was.
#[derive(Debug, PartialEq, Eq)]
struct Users {
    refs: String,
    staged: String,
    reflog: String,
    home: Vec<(String, Vec<u8>)>,
}

fn users(env: &TestEnv, r: &Path) -> Users {
    let mut home = Vec::new();
    let mut stack = vec![env.home()];
    // retry-run's own cache (the namespaces probe's success, scopes),
    // which retry-run writes itself, outside any sandbox.
    let own_cache = env.home().join(".cache/retry-run");
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if p == own_cache {
                continue;
            }
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                home.push((p.display().to_string(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    home.sort();
    Users {
        // The task's own branch (`retry-run/<task>`, made on success) aside.
        refs: env
            .git(r, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"])
            .lines()
            .filter(|l| !l.starts_with("refs/heads/retry-run/"))
            .collect::<Vec<_>>()
            .join("\n"),
        staged: env.git(r, &["diff", "--cached"]),
        reflog: std::fs::read_to_string(r.join(".git/logs/HEAD")).unwrap_or_default(),
        home,
    }
}

/// A check that passes once `src/app.txt` says `fixed`.
const FIXED_CHECK: &str = "max_attempts = 2\n[retry]\nbaseline = false\n[[check]]\nname = \"t\"\nkind = \"test\"\nrun = \"grep -q fixed src/app.txt\"\n";

// ---------------------------------------------------------------------------
// The worktree's administrative directory
// ---------------------------------------------------------------------------

fn planted_admin_links(mode: Mode, who: Who) {
    if !can(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let r = repo(&env, FIXED_CHECK);
    crate::support::keep_worktrees(&env, &r);
    let bashrc = env.home().join(".bashrc");
    std::fs::write(&bashrc, "# the user's\n").expect("bashrc");
    // Staged work of the user's, which an index written through a link
    // would wipe.
    std::fs::write(r.join("notes.txt"), "a staged edit\n").expect("write");
    env.git(&r, &["add", "notes.txt"]);
    let user_index = r.join(".git/index");
    let user_main = r.join(".git/refs/heads/main");
    let plant = format!(
        "gd=$(git rev-parse --git-dir); mkdir -p \"$gd/logs\" \"$gd/refs/bisect\"; \
         rm -f \"$gd/logs/HEAD\"; ln -s {bashrc} \"$gd/logs/HEAD\"; \
         ln -s {main} \"$gd/refs/bisect/bad\"; \
         mkfifo \"$gd/ORIG_HEAD\"; mkfifo \"$gd/FETCH_HEAD\"; \
         cp \"$gd/index\" \"$gd/index.mine\"; rm -f \"$gd/index\"; ln -s {index} \"$gd/index\"; \
         echo 'ref: refs/heads/main' > \"$gd/HEAD\"; echo planted > planted.txt",
        bashrc = bashrc.display(),
        main = user_main.display(),
        index = user_index.display(),
    );
    let agent = env.agent(
        FakeAgent::new().append("src/app.txt", "wrong\n").sh(&plant).next_call().append("src/app.txt", "fixed\n"),
    );
    let before = users(&env, &r);
    let cmd = as_who(
        &env,
        {
            let mut c = env.retry_run(&r);
            c.args(agent.after(&["run", "--quiet", "--task", "Admin"]));
            c
        },
        mode,
        who,
    );
    let run = run_within(cmd, Duration::from_secs(120));
    give_back(&env, who);
    run.assert_code(0);
    assert_eq!(users(&env, &r), before, "something of the user's changed:\n{}", run.stderr);
    assert_eq!(outcomes(&r, "admin"), ["SCOPE_VIOLATION", "SUCCESS"], "{}", run.stderr);
    // The violation names what was planted.
    let report = env.run(&r, &["report", "admin"]);
    for planted in ["logs/HEAD", "ORIG_HEAD", "index", "HEAD"] {
        assert!(
            report.stdout.contains(&format!("worktree-admin/{planted}")),
            "{planted} not named:\n{}",
            report.stdout
        );
    }
    // The evidence is intact: attempt 1's snapshot holds the agent's file.
    assert_eq!(env.git(&r, &["show", "refs/retry-run/admin/1:planted.txt"]), "planted");
}

#[test]
fn planted_admin_links_move_nothing_of_the_users_under_namespaces() {
    planted_admin_links(Mode::Namespaces, Who::Root);
}

#[test]
fn planted_admin_links_move_nothing_of_the_users_under_the_fallback() {
    planted_admin_links(Mode::Fallback, Who::Root);
}

#[test]
fn planted_admin_links_move_nothing_of_the_users_as_an_unprivileged_user() {
    planted_admin_links(Mode::Namespaces, Who::Nobody);
    planted_admin_links(Mode::Fallback, Who::Nobody);
}

/// Runs `cmd` to its end, failing the test when it takes longer than
/// `limit` (a hang is the bug).
fn run_within(mut cmd: Command, limit: Duration) -> Run {
    use std::os::unix::process::CommandExt;
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).process_group(0);
    let child = cmd.spawn().expect("retry-run starts");
    let pid = child.id() as i32;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            while t.elapsed() < limit {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            true
        })
    };
    let out = child.wait_with_output().expect("waited");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let hung = watchdog.join().unwrap_or(false);
    let run = Run::from_output(&out);
    assert!(!hung, "retry-run hung for {limit:?}:\n{}", run.stderr);
    run
}

// ---------------------------------------------------------------------------
// Reads of the worktree
// ---------------------------------------------------------------------------

fn snapshot_through_a_link(mode: Mode) {
    if !can(mode, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let key = env.home().join(".ssh/id_ed25519");
    std::fs::create_dir_all(key.parent().expect("parent")).expect("mkdir");
    std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\n").expect("key");
    let r = repo(&env, "max_attempts = 1\n");
    // An index entry below `src`, then `src` replaced by a link to ~/.ssh:
    // an unconfined read of `src/id_ed25519` would follow the link.
    let attack = format!(
        "blob=$(git hash-object -w src/app.txt); git update-index --add --cacheinfo 100644,$blob,src/id_ed25519; \
         rm -rf src; ln -s {} src",
        key.parent().expect("parent").display()
    );
    let agent = env.agent(FakeAgent::new().sh(&attack).append("notes.txt", "more\n"));
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Keys"]));
    let run = run_within(as_who(&env, cmd, mode, Who::Root), Duration::from_secs(120));
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let all = env.git(&r, &["log", "-p", "--all", "--format=%H"]);
    assert!(!all.contains("PRIVATE KEY"), "the key reached a commit:\n{all}");
    let objects = env.git(&r, &["cat-file", "--batch-all-objects", "--batch"]);
    assert!(!objects.contains("PRIVATE KEY"), "the key reached the object store");
    // The link itself is what the attempt changed.
    let tree = env.git(&r, &["ls-tree", "-r", "refs/retry-run/keys/1"]);
    assert!(tree.contains("120000") && tree.contains("\tsrc"), "{tree}");
    assert!(!tree.contains("src/id_ed25519"), "{tree}");
}

#[test]
fn a_key_behind_a_directory_replaced_by_a_link_never_reaches_the_snapshot_under_namespaces() {
    snapshot_through_a_link(Mode::Namespaces);
}

#[test]
fn a_key_behind_a_directory_replaced_by_a_link_never_reaches_the_snapshot_under_the_fallback() {
    snapshot_through_a_link(Mode::Fallback);
}

// ---------------------------------------------------------------------------
// The terminal, the supervisor, sockets outside, the proxy's log
// ---------------------------------------------------------------------------

/// A python3 program written beside the test's repository and run by the
/// agent: `name: refused` goes to `results.txt` when it fails with an
/// `OSError` (the refusal, printed to `errors.txt`), `name: ok` when it
/// succeeds, `name: broken` when it fails otherwise (a bug of the test).
fn attempt(env: &TestEnv, name: &str, py: &str) -> String {
    let body: String = py.lines().map(|l| format!("    {l}\n")).collect();
    let program = format!(
        "import sys\ntry:\n{body}except OSError as e:\n    print({name:?}, e, file=sys.stderr)\n    sys.exit(3)\n"
    );
    let file = env.write(&format!("try-{name}.py"), program);
    format!(
        "python3 {} 2>>errors.txt; case $? in 0) echo '{name}: ok';; 3) echo '{name}: refused';; *) echo '{name}: broken';; esac >> results.txt",
        file.display()
    )
}

/// The pid of the nearest ancestor named `retry-run` or
/// `retry-run-supervisor` (the supervisor; `/proc/PID/comm` keeps 15
/// bytes of it: the namespace's PID 1 under namespaces), and of its
/// parent, in python.
const SUPERVISOR_PY: &str = "import os\n\
def ppid(p):\n    return int([l for l in open('/proc/%d/status' % p) if l.startswith('PPid:')][0].split()[1])\n\
def comm(p):\n    return open('/proc/%d/comm' % p).read().strip()\n\
p = os.getpid()\nwhile p > 1 and comm(p) not in ('retry-run', 'retry-run-super'):\n    p = ppid(p)\n\
sup = p\nif comm(sup) not in ('retry-run', 'retry-run-super'):\n    raise SystemExit('no supervisor found')\n";

fn terminal_and_supervisor(mode: Mode, who: Who) {
    if !can(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    let ptrace = format!(
        "{SUPERVISOR_PY}import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n\
         if libc.ptrace(16, sup, None, None) != 0:\n    raise OSError(ctypes.get_errno(), 'ptrace attach')\n"
    );
    let environ = format!("{SUPERVISOR_PY}open('/proc/%d/environ' % sup, 'rb').read()\n");
    let mem = format!("{SUPERVISOR_PY}open('/proc/%d/mem' % sup, 'rb')\n");
    let run_environ = format!("{SUPERVISOR_PY}open('/proc/%d/environ' % ppid(sup), 'rb').read()\n");
    let agent = env.agent(
        FakeAgent::new()
            .sh(&attempt(&env, "tty", "open('/dev/tty', 'w')"))
            .sh(&attempt(
                &env,
                "tiocsti",
                "import fcntl, termios\nlast = None\nfor fd in (0, 1, 2):\n    try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n        raise SystemExit(0)\n    except OSError as e:\n        last = e\nraise last",
            ))
            .sh(&attempt(&env, "ptrace", &ptrace))
            .sh(&attempt(&env, "supervisor-environ", &environ))
            .sh(&attempt(&env, "supervisor-mem", &mem))
            .sh(&attempt(&env, "run-environ", &run_environ))
            .sh(&attempt(
                &env,
                "dgram-pair",
                "import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\na.sendto(b'x', '/dev/log')",
            ))
            .sh(&attempt(&env, "stream-pair", "import socket\na, b = socket.socketpair()\na.sendall(b'x')\nassert b.recv(1) == b'x'"))
            .append("src/app.txt", "value = 2\n"),
    );
    // Under a pseudo-terminal that retry-run runs in: what the agent pushes
    // into it would be read by the `read` after it.
    let inner = {
        let mut c = env.retry_run(&r);
        c.env("SECRET_TOKEN", "the-users-token").args(agent.after(&["run", "--quiet", "--task", "Tty"]));
        as_who(&env, c, mode, who)
    };
    let mut line = vec![inner.get_program().to_os_string()];
    line.extend(inner.get_args().map(OsString::from));
    let quoted: Vec<String> =
        line.iter().map(|a| format!("'{}'", a.to_string_lossy().replace('\'', "'\\''"))).collect();
    let script = format!("{}; echo \"status=$?\"; read -t 1 pushed; echo \"pushed=[$pushed]\"", quoted.join(" "));
    let mut under_pty = Command::new("script");
    under_pty.args(["-qec", &script, "/dev/null"]).stdin(std::process::Stdio::null());
    under_pty.env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            under_pty.env(k, v);
        }
    }
    if let Some(d) = inner.get_current_dir() {
        under_pty.current_dir(d);
    }
    let run = run_within(under_pty, Duration::from_secs(120));
    give_back(&env, who);
    assert!(run.stdout.contains("status=0"), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("pushed=[]"), "the agent pushed input into the terminal:\n{}", run.stdout);
    let res = env.git(&r, &["show", "refs/retry-run/tty/1:results.txt"]);
    let errors = env.git(&r, &["show", "refs/retry-run/tty/1:errors.txt"]);
    for refused in ["tty", "tiocsti", "ptrace", "supervisor-environ", "supervisor-mem", "run-environ", "dgram-pair"] {
        assert!(
            res.contains(&format!("{refused}: refused")),
            "{refused} was not refused ({mode:?}, {who:?}):\n{res}\n{errors}"
        );
    }
    assert!(res.contains("stream-pair: ok"), "{res}\n{errors}");
}

#[test]
fn no_terminal_no_supervisor_no_socket_outside_under_namespaces() {
    terminal_and_supervisor(Mode::Namespaces, Who::Root);
}

#[test]
fn no_terminal_no_supervisor_no_socket_outside_under_the_fallback() {
    terminal_and_supervisor(Mode::Fallback, Who::Root);
}

#[test]
fn no_terminal_no_supervisor_no_socket_outside_as_an_unprivileged_user() {
    terminal_and_supervisor(Mode::Namespaces, Who::Nobody);
    terminal_and_supervisor(Mode::Fallback, Who::Nobody);
}

#[test]
fn a_flood_of_refused_connections_is_logged_up_to_the_cap_and_the_cut_is_recorded() {
    if !can(Mode::Namespaces, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    crate::support::keep_worktrees(&env, &r);
    let flood = "import os, socket\nhost, port = os.environ['HTTP_PROXY'].rsplit('/', 1)[-1].split(':')\n\
                 for i in range(1100):\n    s = socket.create_connection((host, int(port)))\n    \
                 s.sendall(b'CONNECT refused%d.example:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' % i)\n    s.recv(100)\n    s.close()\n";
    let agent = env.agent(FakeAgent::new().sh(&attempt(&env, "flood", flood)).append("src/app.txt", "value = 2\n"));
    let run = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Flood"])));
    run.assert_code(0);
    let log = std::fs::read_to_string(r.join(".git/retry-run/tasks/flood/attempts/1/network-agent.jsonl"))
        .expect("the network log");
    let lines = log.lines().filter(|l| l.contains("\"host\"")).count();
    assert!((990..=1000).contains(&lines), "{lines} connections logged");
    let res = env.git(&r, &["show", "refs/retry-run/flood/1:results.txt"]);
    let res = format!(
        "{res} {}",
        env.git_raw(&r, ["show", "refs/retry-run/flood/1:errors.txt"].into_iter().map(std::ffi::OsStr::new))
            .stdout
            .escape_ascii()
    );
    assert!(log.contains("\"limit\":\"connections_logged\""), "the cut is not recorded ({lines} lines; {res})");
    let done = crate::support::record::first(&r, "flood", "AgentFinished").to_string();
    assert!(done.contains("more were not recorded") || done.contains("connections_logged"), "{done}");
    let refused = crate::support::record::first(&r, "flood", "AgentFinished")["refused_hosts"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert!((1..=50).contains(&refused), "{refused} refused hosts recorded");
}

// ---------------------------------------------------------------------------
// kill -9 of the run
// ---------------------------------------------------------------------------

fn killed_run(mode: Mode) {
    if !can(mode, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    crate::support::keep_worktrees(&env, &r);
    let wt = r.join(".git/retry-run/worktrees/killed");
    let started = wt.join("started");
    let agent = env.agent(
        FakeAgent::new()
            .sh("(setsid sleep 120 &) ; (sleep 120 &)")
            .sh("touch started")
            .sleep("120")
            .next_call()
            .append("src/app.txt", "value = 2\n"),
    );
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Killed"]));
    if mode == Mode::Fallback {
        cmd.env("RETRY_RUN_BWRAP", "");
    }
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().expect("run");
    let t = Instant::now();
    while !started.exists() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(started.exists(), "the agent did not start");
    let wt = std::fs::canonicalize(&wt).unwrap_or(wt);
    assert!(!processes_in(&wt).is_empty(), "the test sees no process of the attempt");
    child.kill().expect("kill -9");
    let _ = child.wait();
    let t = Instant::now();
    while !processes_in(&wt).is_empty() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_in(&wt);
    if mode == Mode::Namespaces {
        assert_eq!(left, Vec::<String>::new(), "processes of the attempt outlived the run");
    }
    // The next run of the task ends whatever is left, before anything else.
    let resumed = run_within(
        {
            let mut c = env.retry_run(&r);
            c.args(agent.after(&["run", "--quiet", "--task", "Killed"]));
            if mode == Mode::Fallback {
                c.env("RETRY_RUN_BWRAP", "");
            }
            c
        },
        Duration::from_secs(60),
    );
    let _ = resumed;
    // The resumed run's own agent is a new one; by now it has ended too.
    let t = Instant::now();
    while !processes_in(&wt).is_empty() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stray: Vec<String> = left.into_iter().filter(|p| processes_in(&wt).contains(p)).collect();
    assert_eq!(stray, Vec::<String>::new(), "the resumed run left the killed run's processes running");
}

#[test]
fn kill_9_of_the_run_leaves_no_process_of_the_attempt_under_namespaces() {
    killed_run(Mode::Namespaces);
}

#[test]
fn kill_9_of_the_run_leaves_nothing_after_the_next_run_under_the_fallback() {
    killed_run(Mode::Fallback);
}

// ---------------------------------------------------------------------------
// What the sandbox refused is said where the user looks
// ---------------------------------------------------------------------------

/// A tiny HTTP server on this machine's loopback answering `body`.
fn http_server(body: &'static str) -> u16 {
    let server = std::net::TcpListener::bind("127.0.0.1:0").expect("http server");
    let port = server.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in server.incoming().flatten() {
            let mut s = s;
            let mut buf = [0u8; 4096];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = std::io::Write::write_all(&mut s, head.as_bytes());
        }
    });
    port
}

#[test]
fn a_local_model_server_named_by_the_agents_variables_is_reached_and_a_direct_refusal_is_said() {
    if !can(Mode::Namespaces, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let model = http_server("model says hi");
    let database = http_server("the user's database");
    let r = repo(&env, "max_attempts = 1\n");
    // The client as an agent's would be: straight to the URL, no proxy for
    // loopback (NO_PROXY as most users set it).
    let get = |name: &str, url: &str| {
        attempt(
            &env,
            name,
            &format!(
                "import urllib.request\nopener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))\n\
                 open({name:?} + '.txt', 'w').write(opener.open({url:?}, timeout=5).read().decode())"
            ),
        )
    };
    let agent = env.agent(
        FakeAgent::new()
            .sh(&get("model", &format!("http://127.0.0.1:{model}/v1/models")))
            .sh(&get("database", &format!("http://127.0.0.1:{database}/")))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = Run::of(
        env.retry_run(&r)
            .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{model}/v1"))
            .args(agent.after(&["run", "--task", "Local"])),
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains(&format!("model server 127.0.0.1:{model} (from OPENAI_BASE_URL)")),
        "not said at start:\n{}",
        run.stderr
    );
    let res = env.git(&r, &["show", "refs/retry-run/local/1:results.txt"]);
    assert!(res.contains("model: ok") && res.contains("database: refused"), "{res}");
    assert_eq!(env.git(&r, &["show", "refs/retry-run/local/1:model.txt"]), "model says hi");
    let started = crate::support::record::first(&r, "local", "TaskStarted")["sandbox"]["model_endpoints"].to_string();
    assert!(started.contains(&format!("127.0.0.1:{model}")), "{started}");
    let refused = crate::support::record::first(&r, "local", "AgentFinished")["refused_hosts"].to_string();
    assert!(refused.contains(&format!("127.0.0.1:{database}")), "{refused}");
    let report = env.run(&r, &["report", "local"]);
    assert!(
        report.stdout.contains(&format!("127.0.0.1:{database}")) && report.stdout.contains("[sandbox] network"),
        "{}",
        report.stdout
    );
}

// ---------------------------------------------------------------------------
// Deep trees
// ---------------------------------------------------------------------------

#[test]
fn a_tree_deeper_than_the_snapshot_reads_is_the_agents_violation_and_costs_little() {
    if !can(Mode::Namespaces, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    // Eight chains of 700 directories, each with a file at its bottom.
    let chains = attempt(
        &env,
        "deep",
        "import os\nfor c in range(8):\n    fd = os.open('.', os.O_RDONLY)\n    for name in ['deep%d' % c] + ['d'] * 700:\n        os.mkdir(name, dir_fd=fd)\n        nfd = os.open(name, os.O_RDONLY, dir_fd=fd)\n        os.close(fd)\n        fd = nfd\n    os.close(os.open('f', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n    os.close(fd)",
    );
    let agent = env.agent(FakeAgent::new().sh(&chains).append("src/app.txt", "value = 2\n"));
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Deep"]));
    let run = run_within(cmd, Duration::from_secs(120));
    // The agent's failure (1), never the environment's (3).
    run.assert_code(1);
    assert_eq!(outcomes(&r, "deep"), ["SCOPE_VIOLATION"]);
    let scope = crate::support::record::first(&r, "deep", "ScopeChecked").to_string();
    assert_eq!(scope.matches("too-deep").count(), 8, "{scope}");
    let tree = env.git(&r, &["ls-tree", "-r", "--name-only", "refs/retry-run/deep/1"]);
    assert!(tree.lines().all(|p| p.split('/').count() <= 101), "a path deeper than the bound is in the snapshot");
    assert!(tree.contains("src/app.txt"), "{tree}");
    let report = env.run(&r, &["report", "deep"]);
    assert!(report.stdout.contains("100 levels"), "{}", report.stdout);
}

#[test]
fn a_head_naming_no_commit_and_a_garbage_index_are_the_agents_violation_not_the_environments() {
    if !can(Mode::Namespaces, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, FIXED_CHECK);
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "wrong\n")
            .sh("gd=$(git rev-parse --git-dir); echo 1111111111111111111111111111111111111111 > \"$gd/HEAD\"; head -c 5000 /dev/urandom > \"$gd/index\"")
            .next_call()
            .append("src/app.txt", "fixed\n"),
    );
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Bogus"]));
    let run = run_within(cmd, Duration::from_secs(120));
    run.assert_code(0);
    assert_eq!(outcomes(&r, "bogus"), ["SCOPE_VIOLATION", "SUCCESS"], "{}", run.stderr);
    let report = env.run(&r, &["report", "bogus"]);
    assert!(report.stdout.contains("worktree-admin/HEAD (names no commit"), "{}", report.stdout);
    assert!(report.stdout.contains("worktree-admin/index (not an index git can read)"), "{}", report.stdout);
}

/// A fork burst of 400 processes under `max_processes = 50`, and writes to
/// the machine's `/dev/shm` (a new file, and another program's file open
/// to everyone): at most 50 start, as root too (a pids cgroup, the kernel
/// exempting root from `RLIMIT_NPROC`), and nothing of the machine's
/// `/dev/shm` changes (private under namespaces, closed in the fallback).
fn fork_burst_and_shm(mode: Mode, who: Who) {
    if !can(mode, who) {
        return;
    }
    if !can_burst(mode) {
        return;
    }
    let _turn = turn(who, true);
    let env = TestEnv::new();
    let tag = format!("{}-{mode:?}-{who:?}", std::process::id());
    let marker = PathBuf::from(format!("/dev/shm/retry-run-test-other-{tag}"));
    std::fs::write(&marker, "another program's\n").expect("a file in /dev/shm");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&marker, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    }
    let created = PathBuf::from(format!("/dev/shm/retry-run-test-agent-{tag}"));
    let r = repo(&env, "max_attempts = 1\n[sandbox]\nmax_processes = 50\n");
    let agent = env.agent(
        FakeAgent::new()
            .sh("n=0; i=0; while [ $i -lt 400 ]; do (sleep 3 &) 2>/dev/null && n=$((n+1)); i=$((i+1)); done; echo \"started: $n\" >> results.txt")
            .sh(&format!("echo mine > {} 2>/dev/null; echo overwritten > {} 2>/dev/null; true", created.display(), marker.display()))
            .append("src/app.txt", "value = 2\n"),
    );
    let cmd = {
        let mut c = env.retry_run(&r);
        c.args(agent.after(&["run", "--quiet", "--task", "Burst"]));
        as_who(&env, c, mode, who)
    };
    let run = run_within(cmd, Duration::from_secs(120));
    give_back(&env, who);
    let left = std::fs::read_to_string(&marker);
    let _ = std::fs::remove_file(&marker);
    let made = created.exists();
    let _ = std::fs::remove_file(&created);
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/burst/1:results.txt"]);
    let started: u32 = res.trim().strip_prefix("started: ").and_then(|n| n.parse().ok()).expect("a count");
    assert!(started <= 50, "{started} of 400 processes started under max_processes = 50 ({mode:?}, {who:?})");
    // As the unprivileged user in the fallback, RLIMIT_NPROC counts every
    // process of that user (other tests' too), so none may start at all.
    assert_eq!(
        left.expect("the marker"),
        "another program's\n",
        "the machine's /dev/shm was written ({mode:?}, {who:?})"
    );
    assert!(!made, "the agent created a file in the machine's /dev/shm ({mode:?}, {who:?})");
}

#[test]
fn a_fork_burst_and_shm_writes_are_held_under_namespaces() {
    fork_burst_and_shm(Mode::Namespaces, Who::Root);
}

#[test]
fn a_fork_burst_and_shm_writes_are_held_under_the_fallback() {
    fork_burst_and_shm(Mode::Fallback, Who::Root);
}

#[test]
fn a_fork_burst_and_shm_writes_are_held_as_an_unprivileged_user() {
    fork_burst_and_shm(Mode::Namespaces, Who::Nobody);
    fork_burst_and_shm(Mode::Fallback, Who::Nobody);
}

/// As root where no pids cgroup can be made (a tmpfs over
/// `/sys/fs/cgroup` in a mount namespace of the run's own), nothing would
/// hold `max_processes`: the run stops before any attempt, exit 3, saying
/// why and what to do once; with `max_processes = 0` it runs.
#[test]
fn as_root_without_a_pids_cgroup_a_process_limit_is_refused_up_front() {
    if !can(Mode::Fallback, Who::Root) {
        return;
    }
    let env = TestEnv::new();
    let no_cgroup = |toml: &str, task: &str| {
        let r = env.repo(task).file("src/app.txt", "value = 1\n").file("retry-run.toml", toml).commit();
        let agent = env.agent(FakeAgent::new().append("src/app.txt", "value = 2\n"));
        let inner = env.retry_run(&r);
        let mut cmd = Command::new("unshare");
        cmd.args([
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount -t tmpfs none /sys/fs/cgroup && exec \"$@\"",
            "sh",
        ]);
        cmd.arg(inner.get_program()).args(agent.after(&["run", "--quiet", "--task", task]));
        cmd.env_clear().current_dir(&r).env("RETRY_RUN_BWRAP", "");
        for (k, v) in inner.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        (r, Run::of(&mut cmd))
    };
    let (r, run) = no_cgroup("max_attempts = 1\n[sandbox]\nmax_processes = 100\n", "limited");
    run.assert_code(3);
    assert_eq!(run.stderr.matches("cannot make a pids cgroup").count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("sandbox.max_processes = 0"), "{}", run.stderr);
    assert!(outcomes(&r, "limited").is_empty(), "no attempt ran");
    let (r, run) = no_cgroup("max_attempts = 1\n[sandbox]\nmax_processes = 0\n", "unlimited");
    run.assert_code(0);
    assert_eq!(outcomes(&r, "unlimited"), ["SUCCESS"]);
}
