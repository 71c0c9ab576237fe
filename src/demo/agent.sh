#!/bin/sh
# The demo's scripted agent. It knows nothing of earlier attempts: all it
# has is the prompt. Without feedback it makes a plausible, wrong guess;
# with feedback it fixes exactly what the prompt says failed.
prompt=$1
if ! grep -q '^\*\*Required change' "$prompt"; then
	echo "agent: no feedback yet; guessing that mul is broken"
	sed -i 's/\$1 \* \$2/$2 * $1/' src/calc.sh
	exit 0
fi
if grep -q 'tests/run.sh::test_add' "$prompt"; then
	echo "agent: the prompt says test_add failed; fixing add"
	sed -i 's/\$1 - \$2/$1 + $2/' src/calc.sh
fi
grep -o '`src/[a-z_]*\.sh:[0-9]*` generic W291' "$prompt" | while read -r loc _; do
	file=${loc#\`}; file=${file%%:*}
	line=${loc##*:}; line=${line%\`}
	echo "agent: the prompt says $file:$line has trailing whitespace; removing it"
	sed -i "${line}s/[[:space:]]*\$//" "$file"
done
