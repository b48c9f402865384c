"""A probe run *inside* a sandbox by `arena sandbox check` and the sandbox tests (stdlib only).

ARENA_PROBE selects what to do:
  isolation  try everything a bot must not be able to do; print one JSON object of findings
  fork       fork until refused, then exit 3 (expect PIDS_LIMIT)
  memory     allocate and touch memory until stopped (expect MEMORY_LIMIT)
  cpu        spin forever (expect CPU_LIMIT)
  tmpfill    fill /tmp with small files, then print how much fitted
Each finding is {"ok": true when the sandbox held, "detail": what happened}.
"""

import ctypes
import errno
import json
import os
import socket
import sys
import time


def _finding(ok, detail):
    return {"ok": bool(ok), "detail": str(detail)}


def _status_field(name):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].strip()
    return ""


def _socket(family, kind=socket.SOCK_STREAM, proto=0):
    try:
        s = socket.socket(family, kind, proto)
    except OSError as exc:
        return None, exc
    return s, None


def isolation():
    out = {}
    uid = os.getuid()
    out["uid"] = _finding(
        uid != 0 and os.geteuid() != 0, f"uid {uid}, gid {os.getgid()}, groups {os.getgroups()}"
    )
    cap_eff = _status_field("CapEff")
    out["capabilities"] = _finding(
        int(cap_eff or "1", 16) == 0 and _status_field("NoNewPrivs") == "1",
        f"CapEff {cap_eff}, NoNewPrivs {_status_field('NoNewPrivs')}",
    )
    out["seccomp"] = _finding(
        _status_field("Seccomp") == "2", f"Seccomp mode {_status_field('Seccomp') or '?'}"
    )

    port = int(os.environ.get("ARENA_PROBE_PORT", "0") or 0)
    s, err = _socket(socket.AF_INET)
    if s is None:
        out["network_tcp"] = _finding(True, f"socket(AF_INET) refused: {err}")
    else:
        s.settimeout(1.0)
        try:
            s.connect(("127.0.0.1", port or 9))
            out["network_tcp"] = _finding(False, f"connected to 127.0.0.1:{port}")
        except OSError as exc:
            out["network_tcp"] = _finding(True, f"socket allowed but connect failed: {exc}")
        s.close()
    for name, family in (("network_ipv6", socket.AF_INET6), ("network_netlink", socket.AF_NETLINK)):
        s, err = _socket(family, socket.SOCK_RAW if family == socket.AF_NETLINK else socket.SOCK_STREAM)
        out[name] = _finding(s is None, f"refused: {err}" if s is None else "socket created")
        if s is not None:
            s.close()
    try:
        addrs = socket.getaddrinfo("example.com", 80)
        out["dns"] = _finding(False, f"resolved: {addrs[:1]}")
    except OSError as exc:
        out["dns"] = _finding(True, f"lookup failed: {exc}")

    written = []
    for path in ("/bot/.probe", "/usr/.probe", "/.probe", "/etc/.probe", "/run/.probe"):
        try:
            with open(path, "w") as fh:
                fh.write("x")
            written.append(path)
        except OSError:
            pass
    out["filesystem_readonly"] = _finding(
        not written, f"wrote {written}" if written else "every write outside /tmp failed"
    )
    try:
        with open("/tmp/.probe", "w") as fh:
            fh.write("x")
        out["tmp_writable"] = _finding(True, "/tmp is writable")
    except OSError as exc:
        out["tmp_writable"] = _finding(False, f"/tmp not writable: {exc}")
    hidden = [p for p in os.environ.get("ARENA_PROBE_HIDDEN", "").split(":") if p]
    seen = [p for p in hidden + ["/etc/shadow", "/etc/passwd", "/root", "/home"] if os.path.exists(p)]
    out["filesystem_hidden"] = _finding(
        not seen, f"visible: {seen}" if seen else f"none of {len(hidden) + 4} host paths visible"
    )

    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    out["processes"] = _finding(
        len(pids) <= 4 and os.getpid() < 10, f"{len(pids)} processes visible, own pid {os.getpid()}"
    )
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.ptrace(0, 0, None, None)  # PTRACE_TRACEME
    out["ptrace"] = _finding(
        rc == -1, f"PTRACE_TRACEME -> {rc} ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    )
    rc = libc.unshare(0x10000000)  # CLONE_NEWUSER
    out["user_namespace"] = _finding(
        rc == -1, f"unshare(CLONE_NEWUSER) -> {rc} ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    )
    try:
        os.kill(-1, 0)  # every process this one may signal, except its own init and itself
        out["signal_others"] = _finding(False, "kill(-1) reached another process")
    except OSError as exc:
        out["signal_others"] = _finding(True, f"kill(-1) reaches nothing: {exc.strerror}")
    print(json.dumps(out), flush=True)


def fork_bomb():
    n = 0
    while True:
        try:
            pid = os.fork()
        except OSError as exc:
            print(f"fork refused after {n}: {exc}", flush=True)
            sys.exit(3)
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        n += 1


def memory_bomb():
    hog = []
    while True:
        chunk = bytearray(1 << 20)
        for i in range(0, len(chunk), 4096):
            chunk[i] = 1
        hog.append(chunk)


def cpu_spin():
    x = 0
    while True:
        x += 1


def tmp_fill():
    total = 0
    for i in range(1_000_000):
        try:
            with open(f"/tmp/f{i}", "wb") as fh:
                fh.write(b"x" * 65536)
            total += 65536
        except OSError as exc:
            print(json.dumps({"bytes": total, "error": exc.strerror}), flush=True)
            return


MODES = {
    "isolation": isolation,
    "fork": fork_bomb,
    "memory": memory_bomb,
    "cpu": cpu_spin,
    "tmpfill": tmp_fill,
}

if __name__ == "__main__":
    MODES[os.environ.get("ARENA_PROBE", "isolation")]()
