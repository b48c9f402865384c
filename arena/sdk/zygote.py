"""A warm start that forgets: inside a bot's sandbox, import the runtime once, fork a fresh child per match.

Run by the bwrap launcher (`arena/sandbox/warm.py`, docs/sandbox.md "Warm start") as
`python3 -P -m arena.sdk.zygote SCRIPT` in a sandbox of the bot's bundle, with the control socket
on fd `ARENA_ZYGOTE_FD`. It imports gRPC and the SDK (import only: no channel, no thread, so the
fork is safe without GRPC_ENABLE_FORK_SUPPORT) and compiles the bot's script, but never runs any
of the bot's code itself, holds no seat token and never connects to a referee. Each `fork` request
gives a child that:

1. starts its own session, takes the match's output pipe as stdout/stderr (a stdio bot, with
   `--stdio`: its protocol pipes as stdin and stdout, the output pipe as stderr) and drops to the match's
   own uid (the zygote keeps CAP_SETUID/SETGID for this only);
2. sends its credentials on the match's channel, so that the launcher learns its host pid (the
   kernel translates it) and moves it into the match's own cgroup leaf;
3. waits for the go (ARENA_TOKEN, ARENA_ADDRESS), then runs the script as `__main__`, as
   `python3 SCRIPT` would.

After a child ended, the next request first checks that nothing of it is left in the sandbox (a
process, a file in /tmp, a System V IPC object); if anything is, the zygote answers `dirty` and
exits, and the launcher starts a fresh one. Stdlib only, besides the imports it warms.
"""

from __future__ import annotations

import array
import builtins
import ctypes
import json
import os
import socket
import struct
import sys
import traceback
import types
from typing import Any

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
CAPS_V3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3
MAX_FDS = 4


def _recv(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds = array.array("i")
    msg, anc, _flags, _addr = sock.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if not msg:
        raise EOFError
    return json.loads(msg), list(fds)


def _send(sock: socket.socket, doc: dict[str, Any]) -> None:
    sock.send(json.dumps(doc).encode())


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def tmp_state() -> dict[str, tuple[int, int, int, int]]:
    """Each /tmp entry's inode, mtime, mode and owner. Not empty in a fresh sandbox when the checkout
    (and so the venv or a bundle) lives under /tmp: bwrap then makes its bind mounts' parents there."""
    state = {}
    for name in os.listdir("/tmp"):
        st = os.lstat(f"/tmp/{name}")
        state[name] = (st.st_ino, st.st_mtime_ns, st.st_mode, st.st_uid)
    return state


def leftovers(fresh: dict[str, tuple[int, int, int, int]]) -> list[str]:
    """What a finished child left in the sandbox (empty when clean): `fresh` is /tmp before any child."""
    found = [f"process {p}" for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
    now = tmp_state()
    found += [f"/tmp/{name}" for name in sorted(now) if fresh.get(name) != now[name]]
    found += [f"/tmp/{name} (removed)" for name in sorted(set(fresh) - set(now))]
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                found += [f"sysv {kind}"] * (len(fh.read().splitlines()) - 1)
        except OSError:
            pass
    return found


def _become(uid: int) -> None:
    """Drop to `uid` with no capability in any set, as setpriv leaves a cold bot (`--clear-groups
    --inh-caps=-all --bounding-set=-all`); bwrap already set no_new_privs."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):  # needs CAP_SETPCAP, so before the uid changes
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")
    os.setresuid(uid, uid, uid)  # all three non-zero: permitted, effective and ambient are cleared
    header = ctypes.create_string_buffer(struct.pack("Ii", CAPS_V3, 0))
    data = ctypes.create_string_buffer(24)  # two {effective, permitted, inheritable}, all zero
    if libc.capset(header, data) != 0:  # the inheritable set is not cleared by the uid change
        raise OSError(ctypes.get_errno(), "capset")


def _child(
    chan: socket.socket,
    out: int,
    protocol: list[int],
    request: dict[str, Any],
    code: types.CodeType,
    script: str,
) -> None:
    """In the forked child: become the match's process, then run the bot. Never returns. `protocol`:
    a stdio bot's stdin and stdout pipes (else empty)."""
    status = 1
    try:
        os.setsid()
        if protocol:  # a stdio bot: its stdin and stdout are the match's protocol pipes
            os.dup2(protocol[0], 0)
            os.dup2(protocol[1], 1)
        else:
            os.dup2(out, 1)
        os.dup2(out, 2)
        for fd in (out, *protocol):
            os.close(fd)
        uid = request.get("uid")
        if uid is not None:
            _become(uid)
        creds = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
        chan.sendmsg([b'{"ready": true}'], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
        go, _ = _recv(chan)  # only once the launcher has moved us into the match's cgroup
        chan.close()  # the bot never holds the channel on which the zygote reports its exit
        os.environ.update(go["env"])
        sys.argv = [script, *request.get("args", [])]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as `python3 SCRIPT` has it
        main = types.ModuleType("__main__")
        main.__dict__.update(__file__=os.path.abspath(script), __builtins__=builtins, __cached__=None)
        sys.modules["__main__"] = main
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        status = 0
        if protocol:  # the launch chain's STARTED_LINE (arena/sandbox/stdio_pipes.py): the seat joins now
            os.write(1, b"\n")
        exec(code, main.__dict__)
    except SystemExit as exc:
        code_ = exc.code
        status = code_ if isinstance(code_, int) else (0 if code_ is None else 1)
        if not isinstance(code_, int | None):
            print(code_, file=sys.stderr)
    except BaseException:  # the bot's own error, reported as `python3 SCRIPT` would
        traceback.print_exc()
        status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # dying anyway
            pass
        os._exit(status)


def serve(ctl: socket.socket, script: str) -> None:
    """Answer fork requests one at a time until the launcher closes the control socket."""
    with open(script, "rb") as fh:
        code = compile(fh.read(), script, "exec")
    fresh = tmp_state()
    _send(ctl, {"ready": True, "pid": os.getpid(), "threads": _threads()})
    served = 0
    while True:
        try:
            request, fds = _recv(ctl)
        except EOFError:
            return
        chan = socket.socket(fileno=fds[0])
        out, protocol = fds[1], fds[2:4]
        left = leftovers(fresh) if served else []
        threads = _threads()
        if left or threads != 1:  # never fork a dirty sandbox, nor with a thread running (gRPC's)
            _send(ctl, {"dirty": left or [f"{threads} threads"]})
            return
        pid = os.fork()
        if pid == 0:
            ctl.close()
            _child(chan, out, protocol, request, code, script)
        for fd in (out, *protocol):
            os.close(fd)
        served += 1
        _send(ctl, {"forked": pid, "served": served, "threads": threads})
        _, wait_status = os.waitpid(pid, 0)
        try:
            _send(chan, {"exit": wait_status})
        except OSError:
            pass
        chan.close()


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0)  # a child cannot open our /proc/PID/mem, even as root
    ctl = socket.socket(fileno=int(os.environ.pop("ARENA_ZYGOTE_FD")))
    script = sys.argv[1]
    if sys.argv[2:] != ["--stdio"]:  # a stdio bot's SDK never loads gRPC
        import grpc  # noqa: F401 - warmed: import only, no channel, so no thread before fork

        from arena.proto import referee_pb2_grpc  # noqa: F401
    import arena.sdk  # noqa: F401
    from arena.proto import referee_pb2  # noqa: F401

    serve(ctl, script)


if __name__ == "__main__":
    main()
