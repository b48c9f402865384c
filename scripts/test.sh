#!/usr/bin/env bash
# `make test`: the lint first (scripts/lint.sh: ruff and mypy, about half a minute; a failure stops
# the run before any test starts), then every test. Two long lanes run beside the rest of the suite,
# each its own pytest:
#   machines    the sandbox on a pure cgroup v2 kernel in a VM (tests/sandbox/test_cgroup2_vm.py),
#               then the private Docker engine's tests (marker docker: the launcher, hostile bots in
#               containers, the compose stack, every language's sample bot in its image), and the
#               callgrind counts (marker callgrind: up to minutes of CPU on a loaded host, off the
#               suite's own path), and the arena on separate hosts made of namespaces (marker hosts:
#               tests/deploy/test_hosts.py); normal priority, since the VM, the containers and the
#               hosts run real clocks;
#   fuzz        at least 10,000 messages to each Arena call over gRPC, and the HTTP forms of the same
#               calls; it runs at the lowest CPU priority (nice 19), so it takes only the CPU the
#               suite leaves idle (bots waiting on clocks, servers starting) and barely slows it.
# The run fails when any part fails; each lane's log is kept and its summary printed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if ! bash scripts/lint.sh; then
  echo "test: lint failed (see above; \`make lint\` runs it alone); no tests were run" >&2
  exit 1
fi

work=$(mktemp -d -t elfern-lanes.XXXXXX)
declare -A pids=()

lane() {  # lane NAME NICENESS MARKERS: start `pytest -m MARKERS` in the background
  local name=$1 niceness=$2 markers=$3
  setsid nice -n "$niceness" "$PY" -m pytest -m "$markers" -q -s -p no:cacheprovider \
    --basetemp="$work/$name" >"$work/$name.log" 2>&1 &
  pids[$name]=$!
}
stop_lanes() {
  for pid in "${pids[@]}"; do kill -- -"$pid" 2>/dev/null; done
}
trap 'stop_lanes; exit 130' INT TERM

lane machines 0 "cgroup2_vm or docker or callgrind or hosts"
lane fuzz 19 "fuzz"
"$PY" -m pytest -m "not fuzz and not cgroup2_vm and not docker and not callgrind and not hosts" --durations=15
status=$?
for marker in machines fuzz; do
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
