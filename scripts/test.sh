#!/usr/bin/env bash
# `make test`: every test. The long fuzz lane (marker `fuzz`: at least 10,000 messages to each Arena
# call over gRPC and over HTTP) runs beside the rest of the suite at the lowest CPU priority, so it
# uses the CPU the suite leaves idle (bots waiting on clocks, servers starting) and barely slows it.
# The run fails when either part fails; the lane's log is kept and its summary printed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
lane_tmp=$(mktemp -d -t elfern-fuzz-lane.XXXXXX)
log="$lane_tmp/fuzz.log"
setsid nice -n 19 "$PY" -m pytest -m fuzz -q -s -p no:cacheprovider --basetemp="$lane_tmp/tmp" >"$log" 2>&1 &
lane=$!
trap 'kill -- -"$lane" 2>/dev/null' INT TERM
"$PY" -m pytest -m "not fuzz"
main=$?
if kill -0 "$lane" 2>/dev/null; then
  echo "test: the suite is done; waiting for the fuzz lane (log: $log)"
fi
wait "$lane"
fuzz=$?
echo "test: fuzz lane (exit $fuzz):"
grep -E "fuzz: |passed|failed|error" "$log" | tail -n 20
if [ "$fuzz" -ne 0 ]; then
  tail -n 60 "$log"
fi
[ "$main" -eq 0 ] && [ "$fuzz" -eq 0 ]
