#!/usr/bin/env python3
"""The sandbox's own cost, same run, medians, sides alternating.

0. The floor (`--only floor`): bubblewrap alone running `true` with the
   mounts, namespaces and options retry-run gives it, its argv printed by
   `retry-run sandbox --print bwrap` (the same code path, not retyped),
   against `retry-run sandbox --layers namespaces -- true` and against the
   line `run` starts each agent and check process with (a row of its own:
   `retry-run-supervisor --request JSON`, the request `retry-run sandbox
   --print request` prints with what `run` adds: its TMPDIR, reaping, the
   secrets looked for once; `retry-run supervisor` where the supervisor's
   executable is missing; its floor is the first row's bubblewrap line,
   which lacks only the bind of that TMPDIR), medians of
   `--procs` (41), `--repeat` (2) runs; as root and, when run by root, as
   an unprivileged user (`setpriv --reuid=65534 --regid=65534
   --clear-groups env HOME=<an empty directory>`, on both sides). Target:
   retry-run at most 1.5x the floor. retry-run's supervisor is the
   namespace's PID 1 (`--as-pid-1`) in place of bubblewrap's own init, so
   the floor runs without that one option: bubblewrap as it runs a command
   by default, its init as PID 1. bubblewrap with `--as-pid-1` (`true` as
   PID 1, no init at all) is timed beside it and printed too.
1. Per confined process: `retry-run sandbox --layers namespaces -- true`
   (full confinement: namespaces, Landlock, seccomp, the proxy) and
   `--layers landlock -- true` (the fallback) against `true` (target:
   under 15 ms per confined process).
2. Per attempt, on the 20,000-file repository of bench/scope_diff.py, agent
   `true`, no checks: one attempt with `[sandbox] mode = "namespaces"`
   (full confinement) and one with `"landlock"` against one with
   `mode = "off"` (target: at most 1.10x), and the time the attempt waited for
   watching the user's checkout and the git machinery (`watch_ms` of
   AttemptCompleted, in every mode) as a share of the attempt's overhead
   (target: under 10%); and the inotify watch's setup (`watch_setup_ms`),
   done once per run on another thread while the worktree is reset.
3. Per request through the network proxy: a client inside the sandbox
   (`--wrap`, by default `retry-run sandbox --network 127.0.0.1:PORT --`)
   against the same client run bare, both timing each request to a local
   HTTP server on 127.0.0.1:PORT themselves (the sandbox's start is not
   counted), over a new connection each time: to 127.0.0.1:PORT itself
   (`mirror`: inside, the forwarder's CONNECT tunnel to the same port),
   as an absolute-form GET to the proxy (`absolute`) and through a CONNECT
   asked of the proxy (`connect`), the proxy being the one of `http_proxy`;
   and over one kept connection (`kept`: the tunnel's bytes alone). Bare,
   every mode is a plain request to the server (target: under 1 ms more
   per request). Skipped, with the reason, when `WRAP true` fails.

    cargo build --release --bins && python3 bench/sandbox.py [--files 20000] [--runs 7] [--procs 41]
        [--requests 200] [--rounds 7] [--wrap 'retry-run sandbox --network 127.0.0.1:{port} --'] [--only proxy]
        [--repeat 2] [--bin target/release/retry-run] [--as-built]

--bin and the supervisor beside it are copied into the run's temporary
directory and the copies are timed, as `cargo install` installs them;
`--as-built` times --bin itself (every pass before the tenth did).
"""
import argparse
import http.server
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build  # noqa: E402
import worktree  # noqa: E402

BIN = worktree.BIN


def timed(cmd, cwd, ok=(0,)):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode in ok, (cmd, r.returncode, r.stderr[-2000:])
    return time.perf_counter() - t


def last_attempt(repo, task):
    path = os.path.join(repo, ".git/retry-run/tasks", task, "events.jsonl")
    with open(path) as f:
        events = [json.loads(line) for line in f]
    return [e for e in events if e["type"] == "AttemptCompleted"][-1]


# The client of part 3: times each of N requests to 127.0.0.1:PORT and prints
# the times as JSON. MODE says how a request goes; without http_proxy in its
# environment every mode is a plain request to the server.
CLIENT = r"""
import json, os, socket, sys, time
port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = os.environ.get("http_proxy", "").removeprefix("http://").rstrip("/")
via = (proxy.rsplit(":", 1)[0], int(proxy.rsplit(":", 1)[1])) if proxy and mode != "mirror" else None
target = f"127.0.0.1:{port}"

def head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        assert chunk, buf
        buf += chunk
    h, rest = buf.split(b"\r\n\r\n", 1)
    return h, rest

def fresh():
    if via is None:
        s = socket.create_connection(("127.0.0.1", port))
        path = "/"
    elif mode == "absolute":
        s = socket.create_connection(via)
        path = f"http://{target}/"
    else:
        s = socket.create_connection(via)
        s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        h, _ = head(s)
        assert h.startswith(b"HTTP/1.1 200"), h
        path = "/"
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s, path

def get(s, path, close):
    close = "Connection: close\r\n" if close else ""
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {target}\r\n{close}\r\n".encode())
    h, body = head(s)
    assert h.startswith(b"HTTP/1.1 200"), h
    length = int([l for l in h.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
    while len(body) < length:
        body += s.recv(65536)

times = []
if mode == "kept":
    s, path = fresh()
    get(s, path, False)
for _ in range(n):
    t = time.perf_counter()
    if mode == "kept":
        get(s, path, False)
    else:
        c, path = fresh()
        get(c, path, True)
        c.close()
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""

PROXY_VARS = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "node_use_env_proxy"}


class Ok(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else the body waits for the head's ACK

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_):
        pass


def proxy_latency(tmp, wrap, rounds, requests):
    """Part 3: the proxy's added latency per request, `wrap` (a command
    prefix, `{port}` the server's port) against the client run bare."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    prefix = [BIN if w == "retry-run" else w for w in shlex.split(wrap.format(port=port))]
    env = {k: v for k, v in ENV.items() if k.lower() not in PROXY_VARS}
    probe = subprocess.run(prefix + ["true"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if probe.returncode != 0:
        print(f"proxy: skipped, `{shlex.join(prefix)} true` failed ({probe.returncode}): {probe.stderr.strip()[-300:]}")
        server.shutdown()
        return
    client = os.path.join(tmp, "client.py")
    with open(client, "w") as f:
        f.write(CLIENT)
    print(f"proxy: {requests} requests per run, {rounds} runs a side, medians per request:")
    for mode in ("mirror", "absolute", "connect", "kept"):
        cmd = ["python3", client, str(port), str(requests), mode]
        through, bare = [], []
        for i in range(rounds):
            pair = [(through, prefix + cmd), (bare, cmd)]
            for out, c in pair if i % 2 == 0 else reversed(pair):
                r = subprocess.run(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                assert r.returncode == 0, (c, r.returncode, r.stderr[-2000:])
                out.extend(json.loads(r.stdout.strip().splitlines()[-1]))
        mt, mb = statistics.median(through), statistics.median(bare)
        print(f"  {mode:8} through {mt * 1000:6.3f} ms   bare {mb * 1000:6.3f} ms   ratio {mt / mb:5.2f}"
              f"   added {1000 * (mt - mb):6.3f} ms (target < 1)")
    server.shutdown()


def main():
    global BIN
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--procs", type=int, default=41)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--wrap", default="retry-run sandbox --network 127.0.0.1:{port} --",
                    help="the command prefix that runs the client confined; `retry-run` is this build's binary")
    ap.add_argument("--only", choices=("floor", "process", "attempt", "proxy"))
    ap.add_argument("--repeat", type=int, default=2, help="runs of the floor's comparison")
    ap.add_argument("--bin", default=BIN, help="the retry-run binary (default: this checkout's release build)")
    ap.add_argument("--as-built", action="store_true",
                    help="time --bin where it is, not a copy installed as `cargo install` installs it")
    args = ap.parse_args()
    BIN = os.path.abspath(args.bin)
    supervisor = os.path.join(os.path.dirname(BIN), "retry-run-supervisor")
    print("supervisor inside: " + (supervisor if os.path.isfile(supervisor)
                                   else f"{BIN} supervisor ({supervisor} is missing: build with --bins)"))
    with tempfile.TemporaryDirectory() as tmp:
        if not args.as_built:
            # Timed as installed: `cargo install` copies the executables out
            # of target/. A start of the file the linker has just written
            # cost about 0.1 ms more here than a start of a copy of it
            # (`--version`: 1.44 against 1.33 ms, 2001 rounds; bench/README.md,
            # tenth pass), which is not what users run.
            installed = os.path.join(tmp, "installed")
            os.mkdir(installed)
            for exe in [BIN, supervisor]:
                if os.path.isfile(exe):
                    shutil.copy2(exe, installed)
            BIN = os.path.join(installed, os.path.basename(BIN))
            print(f"timed as installed: {BIN} (--as-built: {args.bin} itself)")
        if args.only in (None, "floor"):
            floor(tmp, args)
        if args.only in (None, "process"):
            one_process(tmp, args)
        if args.only in (None, "attempt"):
            one_attempt(tmp, args)
        if args.only in (None, "proxy"):
            proxy_latency(tmp, args.wrap, args.rounds, args.requests)


NOBODY = 65534


def floor(tmp, args):
    """Part 0: retry-run's confined `true` against bubblewrap's own, for two
    lines: `retry-run sandbox` as a user types it, and the line `run` gives
    each agent and check process (the supervisor with one request: git
    read-only, the run's TMPDIR, reaping, the secrets looked for once, the
    list the first line computed), each against bubblewrap alone with the
    argv the first line prints."""
    os.chmod(tmp, 0o755)  # the unprivileged user reaches its directories
    supervisor = os.path.join(os.path.dirname(BIN), "retry-run-supervisor")
    users = [("root" if os.geteuid() == 0 else "this user", [])]
    if os.geteuid() == 0:
        home = os.path.join(tmp, "nobody-home")
        os.mkdir(home)
        os.chown(home, NOBODY, NOBODY)
        setpriv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "env", f"HOME={home}"]
        users.append(("unprivileged", setpriv))
    for who, prefix in users:
        work = os.path.join(tmp, f"floor-{len(prefix)}")
        run_tmp = os.path.join(tmp, f"floor-tmp-{len(prefix)}")
        os.mkdir(work)
        os.mkdir(run_tmp, 0o700)
        if prefix:
            os.chown(work, NOBODY, NOBODY)
            os.chown(run_tmp, NOBODY, NOBODY)
        made = []
        try:
            for row in ["sandbox", "in a run"]:
                options = ["--layers", "namespaces"]
                if row == "sandbox":
                    ask = prefix + [BIN, "sandbox"] + options + ["--print", "bwrap", "--", "true"]
                    r = subprocess.run(ask, cwd=work, env=ENV, capture_output=True, text=True)
                    assert r.returncode == 0, (ask, r.returncode, r.stderr[-2000:])
                    printed = json.loads(r.stdout)
                    made += printed["made"]
                    ours = [BIN, "sandbox"] + options + ["--", "true"]
                else:
                    # What `run` starts: the supervisor with one request, the
                    # one `--print request` prints with what `run` adds.
                    ask = prefix + [BIN, "sandbox"] + options + ["--git", "read-only", "--print", "request", "--", "true"]
                    r = subprocess.run(ask, cwd=work, env=ENV, capture_output=True, text=True)
                    assert r.returncode == 0, (ask, r.returncode, r.stderr[-2000:])
                    request = json.loads(r.stdout)
                    request.update(tmpdir=run_tmp, reap=True)
                    request["paths"].update(deny_read=printed["hidden"], deny_read_complete=True)
                    starter = [supervisor] if os.path.isfile(supervisor) else [BIN, "supervisor"]
                    ours = starter + ["--request", json.dumps(request)]
                # retry-run's supervisor is the namespace's PID 1
                # (`--as-pid-1`), in place of bubblewrap's own init; the
                # floor is bubblewrap as it runs a command by default, with
                # its init as PID 1. Timed beside it, for the record:
                # bubblewrap with no PID 1 of its own (`true` is PID 1).
                bare = [a for a in printed["args"] if a != "--as-pid-1"]
                sides = {
                    "retry-run": prefix + ours,
                    "bubblewrap": prefix + [printed["bwrap"]] + bare + ["--", "true"],
                    "no init": prefix + [printed["bwrap"]] + printed["args"] + ["--", "true"],
                }
                print(f"floor, {who}, {row}: {shlex.join(sides['retry-run'])}")
                print(f"  against: {shlex.join(sides['bubblewrap'])}")
                for run in range(1, args.repeat + 1):
                    times = {k: [] for k in sides}
                    for i in range(args.procs):
                        for k in list(sides) if i % 2 == 0 else list(reversed(sides)):
                            times[k].append(timed(sides[k], work))
                    rr, bw, ni = (statistics.median(times[k]) for k in ("retry-run", "bubblewrap", "no init"))
                    print(f"  run {run}, {who}, {row}, medians of {args.procs}: retry-run"
                          f" {rr * 1000:6.2f} ms   bubblewrap alone {bw * 1000:6.2f} ms   ratio {rr / bw:4.2f}"
                          f" (target <= 1.5)   [bubblewrap with no init {ni * 1000:5.2f} ms, ratio {rr / ni:4.2f}]"
                          f"   load {os.getloadavg()[0]:.2f}")
        finally:
            for d in made:
                shutil.rmtree(d, ignore_errors=True)


def one_process(tmp, args):
    """Part 1."""
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    sides = {
        "namespaces": [BIN, "sandbox", "--layers", "namespaces", "--", "true"],
        "landlock": [BIN, "sandbox", "--layers", "landlock", "--", "true"],
        "bare": ["true"],
    }
    times = {k: [] for k in sides}
    for i in range(args.procs):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for k in order:
            times[k].append(timed(sides[k], work))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"one process, medians of {args.procs}:")
    for k in ("namespaces", "landlock"):
        print(f"  retry-run sandbox --layers {k} -- true {med[k] * 1000:6.2f} ms   true {med['bare'] * 1000:6.2f} ms"
              f"   ratio {med[k] / med['bare']:5.1f}x (target < 15 ms per confined process)")


def one_attempt(tmp, args):
    """Part 2."""
    repo, _ = build(tmp, args.files, 1000)
    configs = {}
    for mode in ("namespaces", "landlock", "off"):
        configs[mode] = os.path.join(tmp, f"{mode}.toml")
        with open(configs[mode], "w") as f:
            f.write(f'[sandbox]\nmode = "{mode}"\n')
    run = [BIN, "run", "--quiet", "--max-attempts", "1"]
    for mode in configs:  # the first run of a task creates its worktree
        timed(run + ["--config", configs[mode], "--task", mode, "--", "true"], repo, ok=(1,))
    times = {m: [] for m in configs}
    watch = {m: [] for m in configs}
    setup = []
    for i in range(args.runs):
        order = list(configs) if i % 2 == 0 else list(reversed(configs))
        for mode in order:
            cmd = run + ["--config", configs[mode], "--task", mode, "--again", "--", "true"]
            times[mode].append(timed(cmd, repo, ok=(1,)))
            done = last_attempt(repo, mode)
            watch[mode].append(done["watch_ms"] / 1000)
            setup.append(done["watch_setup_ms"] / 1000)
    med = {m: statistics.median(times[m]) for m in configs}
    mo = med["off"]
    print(f"{args.files} files, agent `true`, no checks; medians of {args.runs} attempts:")
    for m in ("namespaces", "landlock"):
        print(f"  {m} {med[m]:6.3f} s   off {mo:6.3f} s   ratio {med[m] / mo:.3f} (target <= 1.10)"
              f"   difference {1000 * (med[m] - mo):6.1f} ms")
    ml = med["namespaces"]
    wl = statistics.median(watch["namespaces"])
    print(f"  watching the checkout and the git machinery: {1000 * wl:6.1f} ms,"
          f" {100 * wl / ml:4.1f}% of the attempt (target < 10%)")
    ms = statistics.median(setup)
    print(f"  setting up the inotify watch, once per run on another thread while the worktree is reset:"
          f" {1000 * ms:6.1f} ms ({100 * ms / ml:4.1f}% of the attempt if it were not overlapped)")


if __name__ == "__main__":
    main()
