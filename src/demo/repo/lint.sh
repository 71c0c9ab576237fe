# A tiny linter: trailing whitespace in shell sources, reported as
# path:line:col: error: message [code].
status=0
for f in src/*.sh tests/*.sh; do
	grep -n '[[:space:]]$' "$f" | while IFS=: read -r line _; do
		echo "$f:$line:1: error: trailing whitespace [W291]"
	done
	grep -q '[[:space:]]$' "$f" && status=1
done
exit $status
