#!/usr/bin/env bash
# Runs one fuzz target for a time budget:  deploy/fuzz.sh Target 10s ./pkg/
#
# Go 1.26's fuzzing coordinator can fail a target that found nothing with a
# bare "context deadline exceeded" when -fuzztime ends while a worker is
# still busy (go.dev/issue/75804, fixed in Go 1.27): on two loaded cores it
# happens. A real finding always writes its input under the package's
# testdata/fuzz/<Target>/ and names it; so a failure whose only complaint is
# that deadline, with no new input written, is reported and passed, and any
# other failure fails.
set -uo pipefail
target=$1 budget=$2 pkg=$3
corpus="$pkg/testdata/fuzz/$target"
before=$(ls "$corpus" 2>/dev/null | sort)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -fuzzminimizetime 2s -fuzz "^$target\$" -fuzztime "$budget" "$pkg" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && exit 0
after=$(ls "$corpus" 2>/dev/null | sort)
if [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$out" &&
  ! grep -q -e '^panic:' -e 'Failing input written' -E -e '_test\.go:[0-9]+:' "$out"; then
  echo "fuzz.sh: $target ended on Go's coordinator deadline race (go.dev/issue/75804), no failing input: passed"
  exit 0
fi
exit "$rc"
