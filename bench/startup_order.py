#!/usr/bin/env python3
"""Writes build/startup-order.ld: the functions a confined start runs, to be
laid out together at the head of the code (docs/sandbox.md, "Cost").

A process maps its executable's code sixteen pages (64 KiB) at a time, as
it first runs something in each stretch, and each such fault, and taking
the pages down again when the process ends, cost about 8 us on the machine
this was measured on. The functions a `retry-run sandbox` runs (about 370,
320 KB) lay across 54 such stretches of retry-run's 10 MB of code; laid
out together they take five.

This script runs `retry-run --version` (what every start runs first) and
the three processes of a confined `true` under valgrind's callgrind
(`retry-run sandbox` as typed, the supervisor's `--outer` line that `run`
starts, and the supervisor's `--inner` line),
collects the functions of retry-run's own executables each ran, and writes
them as a linker script that puts their sections (rustc compiles each
function into a section of its own) in an output section before `.text`.
The hash rustc appends to each name is replaced by a wildcard, so the
script holds across compiler versions and profiles; a function renamed
since it was written is simply left where the linker puts it.

    python3 bench/startup_order.py [--bin target/release/retry-run]

needs valgrind and bubblewrap, and a release build beside --bin.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "build", "startup-order.ld")


# What valgrind cannot run (it has no Landlock and no seccomp: the inner
# line stops there under it), laid out whole: the modules that confine the
# command and start it, and the crates they use.
WHOLE = [
    "_ZN9retry_run7sandbox8landlock*", "_ZN9retry_run7sandbox7seccomp*", "_ZN9retry_run7sandbox4exec*",
    "_ZN9retry_run7sandbox10supervisor*", "_ZN8landlock*", "_ZN11seccompiler*",
]


def callgrind(argv, cwd, out, check=True):
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
                    "--demangle=no", "--trace-children=no"] + argv, cwd=cwd, check=check,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return functions(out)


def functions(path):
    """The functions of retry-run's executables that ran, in the order
    callgrind names them."""
    names, objects, current, ran = {}, {}, None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m[3]:
                objects[m[2]] = m[3]
            if m[1] == "ob":
                current = objects.get(m[2])
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m[3]:
                names[m[2]] = m[3]
            if m[1] == "fn" and current and os.path.basename(current).startswith("retry-run"):
                ran.append(names[m[2]].split("'")[0])
    return ran


def pattern(name):
    """A section pattern for a function, its hash a wildcard; `None` for
    what callgrind could not name."""
    if name.startswith("0x") or name.startswith("("):
        return None
    if name.startswith("_ZN"):
        name = re.sub(r"17h[0-9a-f]{16}E$", "17h*", name)
    elif name.startswith("_R"):
        name = re.sub(r"Cs[0-9A-Za-z]*_", "Cs*_", name)
    return f".text.{name}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "retry-run"))
    args = ap.parse_args()
    rr = os.path.abspath(args.bin)
    supervisor = os.path.join(os.path.dirname(rr), "retry-run-supervisor")
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        # What every start runs first (`--version` is answered before the
        # parser is built), then a typed `retry-run sandbox`.
        ran = callgrind([rr, "--version"], work, os.path.join(tmp, "version"))
        ran += callgrind([rr, "sandbox", "--layers", "namespaces", "--", "true"], work, os.path.join(tmp, "typed"))
        outer = json.loads(subprocess.run([rr, "sandbox", "--layers", "namespaces", "--print-outer", "--", "true"],
                                          cwd=work, check=True, capture_output=True, text=True).stdout)
        ran += callgrind(outer, work, os.path.join(tmp, "outer"))
        # The inner line as the outer one writes it, run here without the
        # namespaces around it (with nothing to say it is done on).
        subprocess.run(["strace", "-f", "-s", "100000", "-e", "trace=execve", "-o", os.path.join(tmp, "st"),
                               rr, "sandbox", "--layers", "namespaces", "--", "true"], cwd=work, check=True)
        inner = None
        for l in open(os.path.join(tmp, "st")):
            m = re.search(r'"--inner", "(.*?)", "--"', l)
            if m:
                inner = json.loads(m[1].encode().decode("unicode_escape"))
        if inner is None:
            sys.exit("no --inner line seen")
        inner["done_fd"] = None
        ran += callgrind([supervisor, "--inner", json.dumps(inner), "--", "true"], work, os.path.join(tmp, "inner"),
                         check=False)
    patterns = [p for p in dict.fromkeys([pattern(n) for n in ran] + [f".text.{w}" for w in WHOLE]) if p]
    with open(OUT, "w") as f:
        f.write("/* The functions a confined start runs, laid out together before the rest\n"
                "   of the code: written by bench/startup_order.py (docs/sandbox.md, \"Cost\").\n"
                "   Given to the linker by build.rs; a pattern no function matches is ignored. */\n")
        f.write("SECTIONS\n{\n  .text.startup_order : {\n")
        for p in patterns:
            f.write(f"    *({p})\n")
        f.write("  }\n}\nINSERT BEFORE .text;\n")
    print(f"{len(patterns)} functions written to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
