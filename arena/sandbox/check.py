"""`arena sandbox check`: run probe bots in the real sandbox and report what is enforced here.

Every probe is a real bundle run through the launcher, so the table shows what a hostile bot would
meet on this machine, not what the configuration promises.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sysconfig
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from arena.sandbox import cgroups
from arena.sandbox.bundle import Bundle, bundle_cache_dir
from arena.sandbox.bwrap import BwrapLauncher, BwrapProcess
from arena.sandbox.check_languages import LanguageRow
from arena.sandbox.launcher import CPU_LIMIT, MEMORY_LIMIT, PIDS_LIMIT, Limits
from arena.sandbox.runtime import ARENA_PKG

PROBE = Path(__file__).with_name("probe_bot.py")

# (probe finding, area, essential)
ISOLATION = (
    ("network_tcp", "network", True),
    ("network_ipv6", "network", True),
    ("network_netlink", "network", True),
    ("dns", "network", True),
    ("filesystem_readonly", "filesystem", True),
    ("filesystem_hidden", "filesystem", True),
    ("tmp_writable", "filesystem", False),
    ("processes", "processes", True),
    ("signal_others", "processes", True),
    ("uid", "uid", True),
    ("capabilities", "uid", True),
    ("seccomp", "seccomp", False),
    ("ptrace", "seccomp", False),
    ("user_namespace", "seccomp", False),
)


@dataclass
class CheckRow:
    area: str
    check: str
    ok: bool
    essential: bool
    detail: str


def probe_bundle(root: Path) -> Bundle:
    """Write the probe as a bundle under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROBE, root / "probe.py")
    (root / "bot.toml").write_text('name = "probe"\nlanguage = "python"\nrun = ["python3", "probe.py"]\n')
    os.chmod(root, 0o755)
    os.chmod(root / "probe.py", 0o644)
    return Bundle(path=root, name="probe", language="python", run=("python3", "probe.py"))


class Listener:
    """A TCP listener on the host's 127.0.0.1 that records every connection (what it received, or
    b"<connected>"), so a probe or a hostile bot that reaches it is caught."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(0.5)
            try:
                self.seen.append(conn.recv(1024) or b"<connected>")
            except OSError:
                self.seen.append(b"<connected>")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1)
        self.sock.close()


def _wait(proc: BwrapProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def run_checks(launcher: BwrapLauncher | None = None, timeout: float = 20.0) -> list[CheckRow]:
    launcher = launcher or BwrapLauncher()
    rows: list[CheckRow] = []
    listener = Listener()
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        bundle = probe_bundle(Path(tmp) / "probe")
        repo = ARENA_PKG.parent
        hidden = [
            str(repo / ".git"),
            str(repo / "sample_bots"),
            str(repo / "pyproject.toml"),
            str(ARENA_PKG / "store"),
            str(ARENA_PKG / "referee"),
            str(bundle_cache_dir()),
            str(Path.home()),
            tmp,
        ]
        if Path.cwd() not in (ARENA_PKG, *ARENA_PKG.parents):
            hidden.append(str(Path.cwd()))
        # the lean runtime binds none of the venv's .pth files (the editable install's hook)
        hidden += sorted(str(p) for p in Path(sysconfig.get_paths()["purelib"]).glob("*.pth"))
        env = {
            "ARENA_PROBE": "isolation",
            "ARENA_PROBE_PORT": str(listener.port),
            "ARENA_PROBE_HIDDEN": ":".join(hidden),
        }
        base = Limits()
        started = [
            launcher.start(bundle, ["python3", "probe.py"], env, base, socket_path=None, label="probe-a"),
            launcher.start(bundle, ["python3", "probe.py"], env, base, socket_path=None, label="probe-b"),
            launcher.start(
                bundle,
                ["python3", "probe.py"],
                {"ARENA_PROBE": "fork"},
                Limits(pids=32),
                socket_path=None,
                label="probe-pids",
            ),
            launcher.start(
                bundle,
                ["python3", "probe.py"],
                {"ARENA_PROBE": "memory"},
                Limits(memory=96 * 1024 * 1024),
                socket_path=None,
                label="probe-mem",
            ),
            launcher.start(
                bundle,
                ["python3", "probe.py"],
                {"ARENA_PROBE": "cpu"},
                Limits(cpu_seconds=1),
                socket_path=None,
                label="probe-cpu",
            ),
            launcher.start(
                bundle,
                ["python3", "probe.py"],
                {"ARENA_PROBE": "tmpfill"},
                Limits(tmp_size=4 * 1024 * 1024),
                socket_path=None,
                label="probe-tmp",
            ),
        ]
        try:
            for proc in started:
                _wait(proc, timeout)
            findings = []
            for proc in started[:2]:
                try:
                    findings.append(json.loads(proc.output().strip().splitlines()[-1]))
                except (ValueError, IndexError):
                    findings.append({})
            for key, area, essential in ISOLATION:
                got = findings[0].get(key)
                if got is None:
                    rows.append(
                        CheckRow(
                            area, key, False, essential, "probe gave no answer: " + started[0].output_tail(3)
                        )
                    )
                else:
                    rows.append(CheckRow(area, key, got["ok"], essential, got["detail"]))
            rows.append(
                CheckRow(
                    "network",
                    "listener_untouched",
                    not listener.seen,
                    True,
                    f"{len(listener.seen)} connections to the host's 127.0.0.1:{listener.port}",
                )
            )
            uids = [p.uid for p in started[:2]]
            distinct = uids[0] != uids[1]
            rows.append(
                CheckRow(
                    "uid",
                    "uid_per_bot",
                    distinct,
                    launcher.privileged,
                    f"two bots ran as uids {uids}" + ("" if distinct else " (run as root for a uid per bot)"),
                )
            )
            for proc, area, check, verdict in (
                (started[2], "pids", "fork_bomb", PIDS_LIMIT),
                (started[3], "memory", "memory_bomb", MEMORY_LIMIT),
                (started[4], "CPU", "cpu_spin", CPU_LIMIT),
            ):
                status = proc.exit_status()
                got = proc.failure_verdict()
                cg = proc.cgroup
                how = (
                    "cgroup"
                    if cg is not None and cg.has({"pids": "pids", "memory": "memory", "CPU": "cpu"}[area])
                    else "rlimit"
                )
                rows.append(
                    CheckRow(
                        area,
                        check,
                        got == verdict,
                        True,
                        f"stopped: exit {status}, verdict {got} (via {how})"
                        if status is not None
                        else f"still running after {timeout:g} s",
                    )
                )
            rows += cgroup_rows(started[3], started[2])
            tmp_out = started[5].output().strip().splitlines()
            try:
                filled = json.loads(tmp_out[-1])["bytes"]
                ok = filled <= 4 * 1024 * 1024
                rows.append(
                    CheckRow(
                        "filesystem",
                        "tmp_size_cap",
                        ok,
                        True,
                        f"/tmp took {filled // 1024} KiB of a 4096 KiB cap",
                    )
                )
            except (ValueError, IndexError, KeyError):
                rows.append(
                    CheckRow(
                        "filesystem", "tmp_size_cap", False, True, "no answer: " + started[5].output_tail(3)
                    )
                )
        finally:
            for proc in started:
                proc.kill()
            listener.close()
    return rows


#: How each limit is enforced: by the bot's cgroup when it has `kind`, else by the fallback.
ENFORCEMENT = (
    (
        "memory",
        "memory",
        "cgroup memory cap (v2 memory.max + swap.max 0, v1 memory.limit_in_bytes)",
        "RLIMIT_AS only",
    ),
    ("pids", "pids", "cgroup pids.max (counts threads)", "RLIMIT_NPROC only (per uid)"),
    (
        "CPU",
        "cpu",
        "cgroup CPU time (cpu.stat / cpuacct.usage) for the whole tree + RLIMIT_CPU",
        "RLIMIT_CPU per process only",
    ),
    ("pause", "freezer", "cgroup freezer (v2 cgroup.freeze) when a process escapes SIGSTOP", "SIGSTOP only"),
    (
        "kill",
        "kill",
        "atomic cgroup kill (v2 cgroup.kill, v1 freeze + SIGKILL)",
        "the sandbox's pid namespace",
    ),
)
ALWAYS_RLIMIT = (
    "address space (RLIMIT_AS)",
    "file size (RLIMIT_FSIZE)",
    "open files (RLIMIT_NOFILE)",
    "core (0)",
)


def cgroup_rows(memory_probe: BwrapProcess, pids_probe: BwrapProcess) -> list[CheckRow]:
    """The cgroup version, and whether memory and pids were really capped per bot by a cgroup."""
    host = cgroups.detect()
    rows = [
        CheckRow(
            "cgroups",
            "version",
            host.version != "none",
            False,
            f"cgroup {host.version}; bot groups under {host.base or '-'}; kinds: {', '.join(host.kinds) or 'none'}"
            + (f"; {host.reason}" if host.reason else ""),
        )
    ]
    for area, probe in (("memory", memory_probe), ("pids", pids_probe)):
        cg = probe.cgroup
        ok = cg is not None and cg.has(area)
        rows.append(
            CheckRow(
                area,
                f"{area}_cap_per_bot",
                ok,
                False,
                f"the bot's own cgroup {cg.name}"
                if ok and cg
                else f"rlimit only: {host.reason or 'no cgroup'}",
            )
        )
    return rows


def weak_limits(rows: list[CheckRow]) -> list[str]:
    """The limits that could not be capped per bot by a cgroup (memory, pids)."""
    return [r.area for r in rows if r.check.endswith("_cap_per_bot") and not r.ok]


def enforcement(proc_cgroup_kinds: set[str] | None = None) -> list[dict[str, str]]:
    """Each limit, and whether a cgroup or only an rlimit/signal enforces it on this host."""
    kinds = set(cgroups.detect().kinds) if proc_cgroup_kinds is None else proc_cgroup_kinds
    out = [
        {
            "limit": name,
            "by": "cgroup" if kind in kinds else "rlimit",
            "how": how if kind in kinds else fallback,
        }
        for name, kind, how, fallback in ENFORCEMENT
    ]
    out += [{"limit": name, "by": "rlimit", "how": "always"} for name in ALWAYS_RLIMIT]
    return out


def rows_json(rows: list[CheckRow], languages: list[LanguageRow] | None = None) -> str:
    host = cgroups.detect()
    return json.dumps(
        {
            "ok": all(r.ok for r in rows if r.essential),
            "cgroup": {
                "version": host.version,
                "base": host.base,
                "kinds": list(host.kinds),
                "reason": host.reason,
            },
            "weak_limits": weak_limits(rows),
            "enforcement": enforcement(),
            "checks": [asdict(r) for r in rows],
            "languages": [asdict(r) for r in languages or ()],
        },
        indent=2,
    )
