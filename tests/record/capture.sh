#!/bin/sh
# Captures the event logs of one build of retry-run for the record's
# compatibility test (src/record/compat.rs): the demo's task, then a second
# task on the demo's kept repository, the same task under another id, whose
# base's checks come from the shared cache in versions that have one. The
# logs are copied as written; never edit them.
#
# usage: tests/record/capture.sh COMMIT NAME [DIR]
#   COMMIT  the commit to build (`HEAD` builds this checkout as it is)
#   NAME    the captures' name: NAME-demo.events.jsonl, NAME-again.events.jsonl
#   DIR     where to put the commit's worktree (default: a temporary one);
#           CARGO_TARGET_DIR is honoured, CARGO overrides the cargo command
#           (CARGO="flock /tmp/cargo.lock cargo" to share a machine).
#
# The captures here were made with:
#   tests/record/capture.sh d0717f1 d0717f1 /work/wt/rec-old-1  (namespaces, sandbox layers)
#   tests/record/capture.sh 780d270 780d270 /work/wt/rec-old-2  (check reruns, the baseline cache)
#   tests/record/capture.sh HEAD i40                             (this version)
# each with CARGO_TARGET_DIR=/work/targets/<its own>; the v0.1-* logs were
# captured from the demo of version 0.1 before this script.
set -eu

commit=$1
name=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cargo=${CARGO:-cargo}

if [ "$commit" = HEAD ]; then
	src=$root
else
	src=${3:-$(mktemp -d)/retry-run}
	[ -d "$src" ] || git -C "$root" worktree add --detach "$src" "$commit"
fi
(cd "$src" && $cargo build --bin retry-run)
bin=${CARGO_TARGET_DIR:-$src/target}/debug/retry-run

out=$(mktemp)
# A demo that escalates (a version whose sandbox fails here) is captured too.
"$bin" demo --keep >"$out" 2>&1 || echo "capture: the demo ended with $?" >&2
demo=$(sed -n 's/.*kept in \(.*\)$/\1/p' "$out" | head -n 1)
rm -f "$out"
[ -d "$demo" ] || { echo "capture: no kept demo directory" >&2; exit 1; }
tasks=$demo/calc/.git/retry-run/tasks
cp "$tasks/make-the-calc-checks-pass/events.jsonl" "$here/$name-demo.events.jsonl"

# The same task again, on the same base: a second record.
(cd "$demo/calc" && "$bin" run --task-file "$demo/task.md" --id again -- sh "$demo/agent.sh" '{prompt_file}') ||
	echo "capture: the second task ended with $?" >&2
cp "$tasks/again/events.jsonl" "$here/$name-again.events.jsonl"
rm -rf "$demo"
echo "captured $here/$name-demo.events.jsonl and $here/$name-again.events.jsonl"
