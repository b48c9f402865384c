#!/usr/bin/env bash
# `make test`: every test. Two long lanes run beside the rest of the suite, each its own pytest:
#   cgroup2_vm  the sandbox on a pure cgroup v2 kernel in a VM (tests/sandbox/test_cgroup2_vm.py);
#               mostly waiting on an emulated CPU, so it runs at normal priority;
#   fuzz        at least 10,000 messages to each Arena call over gRPC, and the HTTP forms of the same
#               calls; it runs at the lowest CPU priority (nice 19), so it takes only the CPU the
#               suite leaves idle (bots waiting on clocks, servers starting) and barely slows it.
# The run fails when any part fails; each lane's log is kept and its summary printed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
work=$(mktemp -d -t elfern-lanes.XXXXXX)
declare -A pids=()

lane() {  # lane MARKER NICENESS: start `pytest -m MARKER` in the background
  local marker=$1 niceness=$2
  setsid nice -n "$niceness" "$PY" -m pytest -m "$marker" -q -s -p no:cacheprovider \
    --basetemp="$work/$marker" >"$work/$marker.log" 2>&1 &
  pids[$marker]=$!
}
stop_lanes() {
  for pid in "${pids[@]}"; do kill -- -"$pid" 2>/dev/null; done
}
trap 'stop_lanes; exit 130' INT TERM

lane cgroup2_vm 0
lane fuzz 19
"$PY" -m pytest -m "not fuzz and not cgroup2_vm"
status=$?
for marker in cgroup2_vm fuzz; do
  if kill -0 "${pids[$marker]}" 2>/dev/null; then
    echo "test: waiting for the $marker lane (log: $work/$marker.log)"
  fi
  wait "${pids[$marker]}"
  code=$?
  # exit 5: pytest collected nothing (a lane whose tests are deselected by PYTEST_ADDOPTS)
  [ "$code" -eq 5 ] && code=0
  echo "test: $marker lane (exit $code):"
  grep -E "fuzz: |passed|failed|skipped|error" "$work/$marker.log" | tail -n 20
  if [ "$code" -ne 0 ]; then
    tail -n 80 "$work/$marker.log"
    status=1
  fi
done
exit "$status"
