#!/usr/bin/env bash
# Runs INSIDE the `make test-cgroup2` VM (scripts/test-cgroup2.sh boots it): proves the VM is a pure
# cgroup v2 host without a network, then runs the lane. Writes lane.log and rc into OUT (shared
# read-write with the host); the root file system is the host's, read-only, with tmpfs overlays.
#   usage: cgroup2-guest.sh OUT full|lean PYTHON
set -uo pipefail
OUT=$1
LANE=$2
PY=$3
cd "${ARENA_REPO:?}"
exec >"$OUT/lane.log" 2>&1
fail() { echo "cgroup2-guest: FAILED: $*"; echo 1 >"$OUT/rc"; exit 1; }
t0=$(date +%s)

# A pure cgroup v2 host: cgroup2 at /sys/fs/cgroup, no v1 hierarchy at all.
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || fail "no cgroup2 at /sys/fs/cgroup"
if awk '$3 == "cgroup"' /proc/mounts | grep -q .; then fail "a cgroup v1 hierarchy is mounted"; fi
echo "kernel $(uname -r), cmdline: $(cat /proc/cmdline | tr ' ' '\n' | grep -E '^cgroup' | tr '\n' ' ')"
echo "cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
# No network: the VM has no device but loopback.
nets=$(ls /sys/class/net | tr '\n' ' ')
[ "$nets" = "lo " ] || fail "the VM has network devices: $nets"
echo "network devices: $nets"

export PYTHONPATH=$PWD PYTHONDONTWRITEBYTECODE=1 ARENA_HOME=/tmp/arena-home HOME=/tmp/arena-user
mkdir -p "$ARENA_HOME" "$HOME"
# Emulated (TCG) CPUs are many times slower: the hostile suite's clocks are scaled by this factor.
export ARENA_TEST_TIME_SCALE=${ARENA_TEST_TIME_SCALE:-1}
# Not the Docker tests: the VM has no Docker engine (they run on the host's private engine, the
# `docker` lane of make test).
PYTEST=("$PY" -m pytest -q -p no:cacheprovider -p no:hypothesispytest -o addopts="" -m "not cgroup2_vm and not docker" --durations=0)
rc=0

if [ "$LANE" != full ]; then  # (the full lane ran all of tests/sandbox, these included)
  # The warm start on v2 (docs/sandbox.md "Warm start"): each match's child a fresh process moved
  # into its own v2 leaf before its first line, under its own uid; in the lean lane also the same
  # record as cold and a dirty sandbox replaced. A skip (no warm pool) fails the lane.
  echo "== the warm start on cgroup v2"
  WARM=("tests/sandbox/test_warm.py::test_each_match_is_a_fresh_child_in_its_own_cgroup_and_uid")
  [ "$LANE" = smoke ] || WARM+=(
    "tests/sandbox/test_warm.py::test_same_seed_gives_the_same_record_warm_and_cold"
    "tests/sandbox/test_warm.py::test_a_dirty_sandbox_is_replaced_not_reused"
  )
  "${PYTEST[@]}" -rs "${WARM[@]}" >"$OUT/warm.log" 2>&1 || rc=1
  cat "$OUT/warm.log"
  if grep -Eq '[0-9]+ skipped' "$OUT/warm.log"; then echo "the warm start's tests were skipped"; rc=1; fi
fi
echo "== sandbox tests on cgroup v2"
if [ "$LANE" = full ]; then
  "${PYTEST[@]}" tests/sandbox tests/hostile || rc=1
elif [ "$LANE" = smoke ]; then
  # What `make test` runs under TCG: every v2 path of test_cgroups_v2.py (leaf caps, verdicts from
  # memory.events/pids.events, cpu.stat, cgroup.freeze, cgroup.kill) and the clean-up after a
  # SIGKILLed referee (the next run sweeps its leaf). The hostile bots, the check and the season
  # are in `make test-cgroup2` (lean) and in the KVM lane (full).
  "${PYTEST[@]}" tests/sandbox/test_cgroups_v2.py \
    "tests/sandbox/test_bwrap_cleanup.py::test_bots_die_with_a_sigkilled_referee_and_stale_cgroups_are_swept" \
    || rc=1
else
  # Lean (TCG, `make test-cgroup2`): the smoke set, plus the fair-clock pause falling back to
  # cgroup.freeze and the hostile bots whose verdicts come from the cgroup (fork and memory bombs).
  # The rest of test_bwrap_cleanup.py (a referee killed mid-launch, a frozen leaf) adds about 60 s
  # under TCG, which took the lane past its 900 s at load 7: it runs in the full (KVM) lane.
  "${PYTEST[@]}" tests/sandbox/test_cgroups_v2.py \
    "tests/sandbox/test_bwrap.py::test_a_process_escaping_the_pause_is_caught_and_frozen" \
    "tests/sandbox/test_bwrap_cleanup.py::test_bots_die_with_a_sigkilled_referee_and_stale_cgroups_are_swept" \
    "tests/hostile/test_hostile.py::test_hostile_bot_loses_and_harms_nothing[fork_bomb]" \
    "tests/hostile/test_hostile.py::test_hostile_bot_loses_and_harms_nothing[memory_bomb]" \
    || rc=1
fi
if [ "$LANE" != smoke ]; then
  echo "== sandbox check"
  "$PY" -m arena.cli sandbox check --json >"$OUT/check.json" || rc=1
  "$PY" - "$OUT/check.json" <<'EOF' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
print("check:", d["cgroup"], "weak:", d["weak_limits"])
print("enforcement:", {r["limit"]: r["by"] for r in d["enforcement"]})
bad = [r["check"] for r in d["checks"] if r["essential"] and not r["ok"]]
assert d["cgroup"]["version"] == "v2" and d["weak_limits"] == [] and not bad, bad
EOF
  echo "== one short season (two sample bots of two owners, bwrap, one leaf per bot)"
  # Separate `arena` processes, as an organiser runs them (each is slow to start under TCG; a
  # season played in the same interpreter that had just built the bots failed its matches).
  A=("$PY" -m arena.cli)
  { "${A[@]}" bots submit sample_bots/python/random --name rand --owner lane-a &&
    "${A[@]}" bots submit sample_bots/python/greedy --name greedy --owner lane-b &&
    "${A[@]}" season create lane --format deals=1 --time "startup=${SEASON_STARTUP:-120s},move=10s,bank=60s" --seed 1 &&
    "${A[@]}" season start lane &&
    "${A[@]}" season run lane --matches 2 --concurrency 1 --quiet &&
    "${A[@]}" standings lane --json >"$OUT/standings.json"; } || rc=1
  "$PY" - "$OUT/standings.json" <<'EOF' || rc=1
import json, sys
rows = {r["label"]: r for r in json.load(open(sys.argv[1]))["rows"]}
print("standings:", {b: (r["games"], r["wins"], r["draws"], r["losses"]) for b, r in rows.items()})
assert set(rows) == {"rand@1", "greedy@1"} and all(r["games"] == 2 for r in rows.values()), rows
EOF
fi
leaks=$(find /sys/fs/cgroup/elfern-arena -mindepth 1 -type d 2>/dev/null | tr '\n' ' ')
[ -z "$leaks" ] || { echo "cgroups left after the lane: $leaks"; rc=1; }
echo "lane: status $rc in $(( $(date +%s) - t0 ))s inside the VM"
echo $rc >"$OUT/rc"
