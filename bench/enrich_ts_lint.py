#!/usr/bin/env python3
"""`retry-run enrich` on real tsc and ESLint output (issue 60), against
Aider's grep-ast (one TreeContext per file with all its lines of interest,
add_context(), format(), as its repo map does) and a bare one-thread
tree-sitter parse of the same files, in the same run. Order rotates run by
run; medians.

The workload, all from the npm registry at pinned versions:
- `tsc --noEmit --pretty false` (typescript 5.9.3) over the TypeScript
  sources that effect 4.1.5 ships (`src/`, 625 files), with flags stricter
  than effect's own (`--strict --exactOptionalPropertyTypes
  --noUncheckedIndexedAccess --noPropertyAccessFromIndexSignature
  --noUnusedLocals --noUnusedParameters --noImplicitReturns ...`);
- ESLint 10.16.0, stylish (its default format), with a flat config of 38
  core rules over webpack 5.113.0's `lib/` (829 CommonJS files).
ESLint is also run with `-f json`: its JSON, and tsc's header lines, are
what retry-run's reading is checked against (every diagnostic found, at
its line, column and code).

retry-run's side is one `retry-run enrich --format json` process per
tool output, input format auto-detected. Both sides read every file that
has a diagnostic. Sanity: how many diagnostics each side puts inside a
function, method, class, interface, enum or namespace (for grep-ast, a node
of one of those types in its tree around the line); the misses, by the
node around them.

    python3 -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install grep-ast 'tree-sitter-language-pack==0.13.*'
    cargo build --release && /tmp/bench-venv/bin/python bench/enrich_ts_lint.py [--runs 5] [--workdir DIR]

Tried with grep-ast 0.9.0, tree-sitter 0.26.1 and tree-sitter-language-pack
0.13.0 (its typescript and javascript grammars; grep-ast reads `.ts`
and `.js`, not `.cjs`, and reads `.tsx` with the typescript grammar).
Needs node and npm; the tools and packages are installed into
~/.cache/retry-run-bench/enrich-ts-lint (RETRY_RUN_BENCH_CACHE moves it).
Making the workload takes about 80 s (tsc about 55 s); `--workdir DIR` keeps
it in DIR and reuses it.
Target: enrich >= 3x faster than grep-ast.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = {"typescript": "5.9.3", "eslint": "10.16.0"}
SOURCES = {"effect": "4.1.5", "webpack": "5.113.0"}
CACHE = pathlib.Path(os.environ.get("RETRY_RUN_BENCH_CACHE", pathlib.Path.home() / ".cache/retry-run-bench")) / "enrich-ts-lint"

TSCONFIG = {
    "compilerOptions": {
        "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
        "lib": ["es2022", "dom", "dom.iterable"], "types": [],
        "noEmit": True, "allowImportingTsExtensions": True, "skipLibCheck": True,
        "strict": True, "exactOptionalPropertyTypes": True, "noUnusedLocals": True, "noUnusedParameters": True,
        "noImplicitReturns": True, "noFallthroughCasesInSwitch": True, "noUncheckedIndexedAccess": True,
        "noPropertyAccessFromIndexSignature": True, "noImplicitOverride": True,
        "allowUnreachableCode": False, "allowUnusedLabels": False,
    },
    "include": ["effect/src/**/*.ts"],
}
NODE_GLOBALS = ["require", "module", "exports", "process", "Buffer", "__dirname", "__filename", "console",
                "setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "setInterval", "clearInterval",
                "URL", "TextDecoder", "TextEncoder", "WebAssembly", "globalThis", "queueMicrotask",
                "AbortController", "structuredClone"]
ESLINT_RULES = {
    "no-unused-vars": "error", "no-undef": "error", "no-shadow": "error", "no-param-reassign": "error",
    "prefer-const": "error", "no-var": "error", "eqeqeq": "error", "consistent-return": "error", "default-case": "warn",
    "complexity": ["warn", 15], "max-params": ["warn", 4], "max-depth": ["warn", 4], "class-methods-use-this": "warn",
    "no-nested-ternary": "warn", "no-negated-condition": "warn", "no-else-return": "warn", "no-lonely-if": "warn",
    "object-shorthand": "warn", "prefer-template": "warn", "prefer-arrow-callback": "warn", "func-names": "warn",
    "logical-assignment-operators": "warn", "prefer-object-has-own": "warn", "guard-for-in": "error",
    "no-await-in-loop": "warn", "no-loop-func": "warn", "array-callback-return": "error", "no-bitwise": "warn",
    "no-cond-assign": "error", "no-empty": "error", "no-fallthrough": "error", "no-prototype-builtins": "error",
    "prefer-rest-params": "error", "prefer-spread": "warn", "require-await": "warn", "no-useless-return": "warn",
    "no-implicit-coercion": "warn", "no-unneeded-ternary": "warn",
}
TSC_HEADER = re.compile(r"^(.+?)\((\d+),(\d+)\): (?:error|warning|message) (TS\d+): ")
# Nodes of grep-ast's tree (tree-sitter-language-pack's typescript and
# javascript grammars) that are scopes in the sense.
SCOPE_NODES = {"function_declaration", "generator_function_declaration", "function_expression", "generator_function",
               "arrow_function", "method_definition", "class_declaration", "abstract_class_declaration", "class",
               "interface_declaration", "enum_declaration", "internal_module", "module"}


def tools():
    """The pinned tools in the cache (installed once) and the packages' tarballs."""
    CACHE.mkdir(parents=True, exist_ok=True)
    stamp = CACHE / "installed.json"
    want = json.dumps([TOOLS, SOURCES], sort_keys=True)
    if not stamp.exists() or stamp.read_text() != want:
        subprocess.run(["npm", "install", "--no-fund", "--no-audit", "--save-exact", "--prefix", CACHE,
                        *(f"{n}@{v}" for n, v in TOOLS.items())], check=True, stdout=subprocess.DEVNULL)
        for n, v in SOURCES.items():
            subprocess.run(["npm", "pack", "--silent", f"{n}@{v}", "--pack-destination", CACHE], check=True,
                           stdout=subprocess.DEVNULL)
        stamp.write_text(want)
    return CACHE / "node_modules/.bin"


def workload(work):
    """The sources in `work`, and tsc's and ESLint's outputs beside them."""
    done = work / "done"
    if done.exists():
        return
    bin_dir = tools()
    for n, v in SOURCES.items():
        with tarfile.open(CACHE / f"{n}-{v}.tgz") as t:
            t.extractall(work / "pkg", filter="data")
        (work / "pkg/package").rename(work / n)
    (work / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2))
    config = {"files": ["webpack/lib/**/*.js"],
              "languageOptions": {"ecmaVersion": "latest", "sourceType": "commonjs",
                                  "globals": {g: "readonly" for g in NODE_GLOBALS}},
              "rules": ESLINT_RULES}
    (work / "eslint.config.mjs").write_text(f"export default [{json.dumps(config)}];\n")
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    tsc = subprocess.run([bin_dir / "tsc", "-p", ".", "--pretty", "false"], cwd=work, env=env,
                         capture_output=True, text=True)
    if tsc.returncode not in (0, 1, 2) or not tsc.stdout:
        sys.exit(f"tsc failed ({tsc.returncode}): {tsc.stderr[-2000:]}")
    (work / "tsc.txt").write_text(tsc.stdout)
    for fmt, name in [("stylish", "eslint.txt"), ("json", "eslint.json")]:
        r = subprocess.run([bin_dir / "eslint", "-f", fmt, "webpack/lib"], cwd=work, env=env,
                           capture_output=True, text=True)
        if r.returncode != 1 or not r.stdout:
            sys.exit(f"eslint -f {fmt} failed ({r.returncode}): {r.stderr[-2000:]}")
        (work / name).write_text(r.stdout)
    done.write_text("")


def truth(work):
    """Every diagnostic as the tools gave it: tsc's header lines, ESLint's JSON;
    (tool, path relative to `work`, line, column, code)."""
    out = []
    for line in (work / "tsc.txt").read_text().splitlines():
        m = TSC_HEADER.match(line)
        if m:
            out.append(("tsc", m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    for f in json.loads((work / "eslint.json").read_text()):
        rel = os.path.relpath(f["filePath"], work)
        for m in f["messages"]:
            out.append(("eslint", rel, m.get("line"), m.get("column"), m.get("ruleId")))
    return out


def cpu_time():
    """User and system CPU time of this process and of its waited-for children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", type=pathlib.Path, default=ROOT / "target/release/retry-run")
    ap.add_argument("--workdir", type=pathlib.Path, help="keep the workload here and reuse it")
    args = ap.parse_args()
    try:
        from grep_ast import TreeContext
        from tree_sitter_language_pack import get_parser
    except ImportError:
        sys.exit("run with a python that has grep-ast and tree-sitter-language-pack==0.13.* (see the docstring)")
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.workdir or pathlib.Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        workload(work)
        want = truth(work)
        lois = collections.defaultdict(set)
        for _, rel, line, _, _ in want:
            if line:
                lois[rel].add(line)
        files = sorted(lois)
        size = sum((work / f).stat().st_size for f in files)
        parsers = {"ts": get_parser("typescript"), "js": get_parser("javascript")}
        inputs = [work / "tsc.txt", work / "eslint.txt"]
        out = {}  # the last outputs of enrich, by input

        def grep_ast():
            for rel in files:
                code = (work / rel).read_text(errors="replace")
                tc = TreeContext(rel, code, color=False, line_number=True, child_context=False, last_line=False,
                                 margin=0, mark_lois=True, loi_pad=3, show_top_of_file_parent_scope=False)
                tc.add_lines_of_interest([l - 1 for l in sorted(lois[rel])])
                tc.add_context()
                tc.format()

        def bare_parse():
            for rel in files:
                parsers[rel.rsplit(".", 1)[1]].parse((work / rel).read_bytes())

        def enrich(keep=False):
            for i in inputs:
                r = subprocess.run([args.bin, "enrich", "--input", i, "--root", work, "--format", "json"],
                                   check=True, stdout=subprocess.PIPE if keep else subprocess.DEVNULL)
                out[i.name] = r.stdout

        sides = [("grep-ast", grep_ast), ("bare parse", bare_parse), ("retry-run enrich", enrich)]
        times = {name: [] for name, _ in sides}
        cpu = {name: [] for name, _ in sides}
        for r in range(args.runs):
            k = r % len(sides)
            for name, fn in sides[k:] + sides[:k]:
                c, t = cpu_time(), time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(cpu_time() - c)
        med = {k: statistics.median(v) for k, v in times.items()}
        med_cpu = {k: statistics.median(v) for k, v in cpu.items()}

        enrich(keep=True)
        got = [d for name in out for d in json.loads(out[name])["diagnostics"]]
        n_tool = collections.Counter(t for t, *_ in want)
        print(f"{len(want)} diagnostics (tsc {TOOLS['typescript']} on effect {SOURCES['effect']}: {n_tool['tsc']}; "
              f"ESLint {TOOLS['eslint']} on webpack {SOURCES['webpack']}: {n_tool['eslint']}) in {len(files)} files "
              f"({size / 1e6:.1f} MB); medians of {args.runs} runs")
        print(f"  {'':18} {'wall':>9} {'CPU':>9}   (wall of each run)")
        for k, v in med.items():
            print(f"  {k:18} {v:7.3f} s {med_cpu[k]:7.3f} s   ({', '.join(f'{x:.3f}' for x in times[k])})")
        e, ec = med["retry-run enrich"], med_cpu["retry-run enrich"]
        print(f"grep-ast / enrich:   {med['grep-ast'] / e:.1f}x faster (target >= 3x); "
              f"CPU time {med_cpu['grep-ast'] / ec:.1f}x less")
        print(f"enrich / bare parse: {e / med['bare parse']:.2f}; CPU time {ec / med_cpu['bare parse']:.2f}")
        print(f"load average after the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        check(want, got, work, files, lois, parsers)


def check(want, got, work, files, lois, parsers):
    """retry-run's reading against the tools' own, and the scopes each side found."""
    w = collections.Counter(want)
    g = collections.Counter((d["tool"], d["path"], d["line"], d["column"], d["code"]) for d in got)
    missing, extra = w - g, g - w
    print(f"read by enrich: {sum(g.values())} of {sum(w.values())} (tool, path, line, column, code) agree: "
          f"{sum((w & g).values())}; missing {sum(missing.values())}, extra {sum(extra.values())}")
    for d in list(missing)[:5]:
        print("  missing", d)
    for d in list(extra)[:5]:
        print("  extra  ", d)

    # grep-ast's tree: the scope nodes around each line of interest, and
    # the class expressions (`X.Template = class XTemplate extends ... {`).
    around, class_expressions = {}, {}
    for rel in files:
        tree = parsers[rel.rsplit(".", 1)[1]].parse((work / rel).read_bytes())
        spans = []
        stack = [tree.root_node]
        while stack:
            n = stack.pop()
            if n.type in SCOPE_NODES:
                spans.append((n.start_point[0] + 1, n.end_point[0] + 1, n.type, n.parent.type if n.parent else ""))
            stack.extend(n.children)
        for line in lois[rel]:
            inner = [s for s in spans if s[0] <= line <= s[1]]
            around[rel, line] = min(inner, key=lambda s: s[1] - s[0]) if inner else None
        class_expressions[rel] = [s for s in spans if s[2] == "class"]
    in_tree = sum(1 for d in got if around.get((d["path"], d["line"])))
    scoped = sum(1 for d in got if d["scope"])
    print(f"inside a scope: retry-run enrich {scoped} of {len(got)}; grep-ast's tree (a function, method, class, "
          f"interface, enum or namespace node around the line) {in_tree}")
    misses = collections.Counter()
    examples = {}
    for d in got:
        a = around.get((d["path"], d["line"]))
        if a and not d["scope"]:
            k = f"no scope from enrich; the innermost node is {a[2]} in {a[3]}"
        elif d["scope"] and not a:
            k = "a scope from enrich, no scope node in the tree"
        else:
            continue
        misses[k] += 1
        examples.setdefault(k, f"{d['path']}:{d['line']}")
    for k, n in misses.most_common(8):
        print(f"  {k}: {n} (e.g. {examples[k]})")
    bare = [d for d in got if d["scope"] and d["scope"]["kind"] != "class" and "." not in d["scope"]["qualified_name"]
            and any(c[0] < d["scope"]["start_line"] <= c[1] for c in class_expressions[d["path"]])]
    if bare:
        print(f"  scoped inside a class expression, named without a class: {len(bare)} "
              f"(e.g. {bare[0]['path']}:{bare[0]['line']} `{bare[0]['scope']['qualified_name']}`)")


if __name__ == "__main__":
    main()
