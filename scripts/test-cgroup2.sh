#!/usr/bin/env bash
# `make test-cgroup2`: boot Debian's kernel with cgroup_no_v1=all (a pure cgroup v2 host) over this
# checkout with virtme-ng, and run the cgroup v2 lane inside it (scripts/cgroup2-guest.sh): the v2
# sandbox tests, the hostile suite and one short season. The VM gets no network device (virtme-ng's
# default `-net none`), 2 vCPUs and ARENA_VM_MEMORY (default 2G; 6G for the full lane, whose
# unprivileged check lets a memory bomb reach RLIMIT_AS's 4 GiB). docs/sandbox.md, "cgroup v2 lane".
#
# Exit 0 when the lane passed, 1 when it failed, 0 with "skipped:" when /dev/kvm is absent.
# ARENA_VM_ACCEL=kvm|tcg forces the accelerator; ARENA_CGROUP2_LANE=full|lean the test selection.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

if [ ! -e /dev/kvm ]; then
  echo "skipped: /dev/kvm is absent, so no VM can boot here (the cgroup v2 lane needs KVM)"
  exit 0
fi

# What the lane needs, installed as the rest of the setup is (idempotent).
#   qemu-system-x86   : the VM
#   linux-image-amd64 : Debian's kernel, booted with cgroup_no_v1=all
#   busybox-static    : virtme-ng builds the guest's initramfs from it
#   virtme-ng (PyPI, in pyproject's dev extra): boots the kernel over a read-only share of this root
DEB=(qemu-system-x86 linux-image-amd64 busybox-static)
missing=()
for p in "${DEB[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-cgroup2: missing Debian packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "test-cgroup2: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  }
fi
PY=${ARENA_PYTHON:-$REPO/.venv/bin/python}
VENV_BIN=$(dirname "$PY")
if [ ! -x "$VENV_BIN/vng" ]; then
  echo "test-cgroup2: installing virtme-ng into $VENV_BIN/.."
  "$PY" -m pip install -q virtme-ng >/dev/null
fi
KERNEL=$(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || { echo "test-cgroup2: no Debian kernel in /boot (linux-image-amd64)" >&2; exit 1; }

# KVM runs a stock kernel only with hardware virtualisation (vmx/svm). Some cloud VMs offer /dev/kvm
# through a paravirtual hypervisor (kvm_pvm) that runs only PVM-enabled guest kernels; Debian's
# kernel hangs there in its decompressor, so the lane boots it under TCG (emulated) instead.
ACCEL=${ARENA_VM_ACCEL:-}
if [ -z "$ACCEL" ]; then
  if grep -qwE 'vmx|svm' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi
fi
LANE=${ARENA_CGROUP2_LANE:-$([ "$ACCEL" = kvm ] && echo full || echo lean)}
# The share must lie outside the folders virtme-ng overlays with tmpfs in the guest (/tmp, /var...).
LOGS=${ARENA_CGROUP2_LOGS:-${HOME:-/root}/.cache/elfern-arena/cgroup2-lane}
mkdir -p "$LOGS"
find "$LOGS" -maxdepth 1 -name 'run-*' -mtime +2 -exec rm -rf {} + 2>/dev/null || true
OUT=$(mktemp -d "$LOGS/run-XXXXXX")
chmod 755 "$OUT"
# Without a delegated cgroup (the full lane's check as an ordinary user) memory is capped by RLIMIT_AS
# alone, 4 GiB: a smaller guest meets its own OOM killer first, and the bomb gets no verdict.
MEMORY=${ARENA_VM_MEMORY:-$([ "$LANE" = full ] && echo 6G || echo 2G)}
echo "test-cgroup2: $(basename "$KERNEL") with cgroup_no_v1=all, accel $ACCEL, lane $LANE, 2 vCPUs, $MEMORY"
[ "$ACCEL" = tcg ] && echo "test-cgroup2: no vmx/svm on this CPU (/dev/kvm is $(ls /sys/module | grep -m1 -E '^kvm_(pvm|intel|amd)$' || echo kvm)): booting under TCG"
# The guest runs a copy: bash reads a script as it goes, so an edit during a run would change it.
cp scripts/cgroup2-guest.sh "$OUT/guest.sh"
flags=()
append="cgroup_no_v1=all"
if [ "$ACCEL" = tcg ]; then
  # Emulation: no Spectre/Meltdown work in the guest kernel, and a plain CPU model whose
  # instructions TCG emulates fast (no AVX for glibc to pick); the tests' deadlines scale by 10.
  flags+=(--disable-kvm --qemu-opts="-cpu qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt")
  append="$append mitigations=off"
  export ARENA_TEST_TIME_SCALE=${ARENA_TEST_TIME_SCALE:-10}
fi
start=$(date +%s)
set +e
PATH="$VENV_BIN:$PATH" timeout "${ARENA_VM_TIMEOUT:-1800}" vng --run "$KERNEL" "${flags[@]}" \
  --append "$append" --memory "$MEMORY" --cpus 2 \
  --rwdir "$OUT" --cwd "$REPO" \
  --exec "ARENA_REPO=$REPO ARENA_TEST_TIME_SCALE=${ARENA_TEST_TIME_SCALE:-1} bash $OUT/guest.sh $OUT $LANE $PY" </dev/null >"$OUT/console.log" 2>&1
vm_rc=$?
set -e
took=$(( $(date +%s) - start ))
cat "$OUT/lane.log" 2>/dev/null || tail -n 40 "$OUT/console.log"
rc=$(cat "$OUT/rc" 2>/dev/null || echo "")
if [ -z "$rc" ]; then
  echo "test-cgroup2: FAILED: the VM ended (status $vm_rc) before the lane finished; console: $OUT/console.log" >&2
  exit 1
fi
echo "test-cgroup2: lane $LANE under $ACCEL: status $rc in ${took}s (VM boot included); logs in $OUT"
[ "$rc" = 0 ] || exit 1
