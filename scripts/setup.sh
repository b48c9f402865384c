#!/usr/bin/env bash
# One-shot setup used by `make demo` and `make test`: Debian packages, then the project's virtualenv.
# Idempotent: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the arena needs at run time and in tests.
#   bubblewrap, python3-seccomp : the bot sandbox (namespaces, seccomp filter)
#   python3-venv                : the virtualenv below is built from Debian's /usr/bin/python3, so that
#                                 sandboxed bots can see the interpreter (it lives under /usr)
#   chromium                    : the browser tests of the web pages
#   util-linux                  : prlimit, setpriv
#   g++ make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
#                               : the C++ sample bot's build step (it runs in the sandbox, reading /usr)
#   gcc                         : the C stdio sample bot; nodejs : the Node.js sample bot
#   node-typescript             : tsc, for the TypeScript sample bot (its build runs in the sandbox)
#   ruby openjdk-17-jdk-headless golang-go rustc cargo mono-runtime mono-mcs
#                               : the Ruby, Java, Go, Rust and C# stdio sample bots (javac, go build,
#                                 cargo build and mcs run in the sandbox, offline:
#                                 arena/sandbox/languages.py). Measured on the 2-core machine: 50 s for
#                                 ruby and golang-go, 30 s for rustc and cargo, 110 s for Mono, 20 s for
#                                 node-typescript, and about a minute for the JDK
#   docker.io                   : the Docker launcher and compose tests run a private dockerd
#                                 (scripts/docker_engine.py; installing does not start the system one
#                                 where policy-rc.d forbids it, as in containers)
#   debootstrap                 : the tests' local base image (no registry image can be pulled)
#   docker-compose              : Debian's Compose 1.29, which brings docker-compose.yml up in the tests
#   valgrind                    : `arena bench referee --instructions` counts the referee's instructions
#   haproxy                     : the proxy in front of several `arena serve` replicas (deploy/haproxy/arena.cfg),
#                                 run by tests/deploy/test_replicas.py as a process of its own (on systemd
#                                 hosts Debian also starts haproxy.service, whose default file opens no port)
#   prometheus                  : promtool checks and unit-tests deploy/prometheus/alerts.yml, and a real
#                                 Prometheus scrapes `arena serve --metrics` on loopback
#                                 (tests/service/test_metrics_prometheus.py; on systemd hosts Debian also
#                                 starts prometheus.service, on :9090 of every interface: stop it there)
DEB_PACKAGES=(bubblewrap python3-seccomp python3-venv chromium util-linux valgrind
              g++ gcc make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc nodejs
              node-typescript ruby openjdk-17-jdk-headless golang-go rustc cargo
              mono-runtime mono-mcs
              docker.io debootstrap docker-compose haproxy prometheus)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Wait for another apt or dpkg (unattended-upgrades, a second checkout's setup) rather than fail.
    apt_wait=(-o DPkg::Lock::Timeout=900)
    apt-get "${apt_wait[@]}" update -qq
    apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: these Debian packages are missing: ${missing[*]}" >&2
    echo "setup: run this once as root, then try again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

PY=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv from $PY"
  "$PY" -m venv .venv
fi
echo "setup: installing Python packages into .venv"
log=.venv/pip-install.log
# requirements.lock pins every package, those of every extra (web, postgres, celery: the demo's web
# page and the tests use them all) and of dev included, with its hashes (CONTRIBUTING.md says how to
# renew it); the project itself then goes in editable, without resolving anything again.
if ! { .venv/bin/python -m pip install -q --upgrade pip \
       && .venv/bin/python -m pip install -q --require-hashes -r requirements.lock \
       && .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e .; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "setup: pip install failed; the full log is in $log" >&2
  exit 1
fi
# The solver's compiled core (arena/analysis/_core.c -> _elfern_core.so, in place; gcc only). Without it
# arena.analysis falls back to its pure-Python search, which is correct but about 20x slower.
if ! .venv/bin/python scripts/build_core.py; then
  echo "setup: the solver core did not build; arena.analysis will use pure Python" >&2
fi
# The bwrap launch chain's helper (arena/sandbox/_launch.c -> _arena_launch, in place; gcc only). Without
# it each bot starts through setpriv, sh and prlimit instead, about 4 ms more CPU per launch.
if ! .venv/bin/python -c "from arena.sandbox import launch_helper; launch_helper.build()"; then
  echo "setup: the launch helper did not build; bwrap launches will use setpriv, sh and prlimit" >&2
fi
# The season fit's compiled passes (arena/ladder/_fit.c -> _arena_fit.so, in place; gcc only), built here
# rather than by the first fit of a server or test. Without it the fit runs its NumPy passes (same figures).
if ! .venv/bin/python -c "from arena.ladder import kernel; kernel.build()"; then
  echo "setup: the fit kernel did not build; the ratings fit will use NumPy" >&2
fi
# The Node.js sample bot's dependencies (pinned by its package-lock.json). Its build step runs
# `npm ci --offline` in the sandbox, which has no network, so fill its npm cache here.
if ! command -v npm >/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends npm >/dev/null || true
fi
if command -v npm >/dev/null; then
  echo "setup: filling the Node.js sample bot's npm cache"
  (cd sample_bots/node && npm ci --cache .npm-cache --no-audit --no-fund --loglevel error >/dev/null) \
    || echo "setup: npm ci failed in sample_bots/node; the Node.js bot's test will be skipped" >&2
  (cd sample_bots/typescript && npm ci --cache .npm-cache --no-audit --no-fund --loglevel error >/dev/null) \
    || echo "setup: npm ci failed in sample_bots/typescript; the TypeScript bot's test will be skipped" >&2
else
  echo "setup: npm not found; the Node.js sample bot's test will be skipped" >&2
fi
echo "setup: done"
