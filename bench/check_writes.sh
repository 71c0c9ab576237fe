#!/usr/bin/env bash
# The cost of looking for a check's writes (issue 39): one task of one
# attempt on the shared 20,000-file workload, agent appending a line to one
# file, three checks `true` (baseline off), run by this build (A) against
# another build (B, e.g. the commit before the issue), alternating, medians.
#
#   bash bench/check_writes.sh NEW_BINARY OLD_BINARY
#
# The workload is bench/shared_workload.py's (built once under ROOT,
# default /var/tmp/rr-shared-20k); the timing is farm-bench's.
set -euo pipefail
new=$(realpath "$1"); old=$(realpath "$2")
root=${ROOT:-/var/tmp/rr-shared-20k}
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); from shared_workload import generate; generate(sys.argv[2])" \
  "$(dirname "$0")" "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in a b; do
  git clone -q "$root/repo" "$work/repo-$v"
  printf 'max_attempts = 1\n[retry]\nbaseline = "off"\n' > "$work/repo-$v/retry-run.toml"
  for c in a b c; do printf '[[check]]\nname = "%s"\nrun = "true"\nkind = "lint"\n' "$c" >> "$work/repo-$v/retry-run.toml"; done
  git -C "$work/repo-$v" add retry-run.toml
  git -C "$work/repo-$v" -c user.name=b -c user.email=b@b commit -qm config
done
f=$(git -C "$work/repo-a" ls-files src | awk 'NR == 1')
cat > "$work/run.sh" <<SH
#!/bin/sh
exec "\$1" -C "\$2" run --id "t\$(date +%s%N)" --task bench -- sh -c 'echo "# x" >> $f'
SH
chmod +x "$work/run.sh"
farm-bench -n 8 --timeout 600 --vs "$work/run.sh $old $work/repo-b" -- "$work/run.sh" "$new" "$work/repo-a"
