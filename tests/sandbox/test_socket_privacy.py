"""Each seat's referee socket is private to its bot's uid: directory 0700, socket 0600.

The match directory stays world-traversable (0755, as the match runner makes it), so only the
seat directory's and the socket's own modes keep another local user (here: another uid of the
sandbox pool) out."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from sandbox_support import make_bundle

from arena.sandbox import sockets, uids
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec

PROBE = r"""
import errno, os, socket, sys
path = sys.argv[1]
try:
    os.listdir(os.path.dirname(path)); print("list:ok")
except OSError as e:
    print("list:" + errno.errorcode[e.errno])
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(path); print("connect:ok")
except OSError as e:
    print("connect:" + errno.errorcode[e.errno])
"""


def _serve(path: Path) -> socket.socket:
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen()

    def loop() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"ack:" + conn.recv(64))

    threading.Thread(target=loop, daemon=True).start()
    return srv


@pytest.fixture
def match_dir():
    """A match directory like the match runner's: 0755 under /tmp, one folder per seat."""
    root = Path(tempfile.mkdtemp(prefix="arena-sockpriv-", dir="/tmp"))
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_seat_socket_belongs_to_its_bot_and_another_uid_is_refused(bwrap, tmp_path, match_dir):
    seat = match_dir / "seat0"
    seat.mkdir()
    sock = seat / "referee.sock"
    srv = _serve(sock)
    code = (
        "import os, socket\ns = socket.socket(socket.AF_UNIX); s.connect(os.environ['ARENA_ADDRESS'][7:])\n"
        "s.sendall(b'hi'); print(s.recv(9).decode(), os.getuid())\n"
    )
    try:
        proc = bwrap.launch(LaunchSpec(load_bundle(make_bundle(tmp_path / "b", code)), sock, label="seat0"))
        deadline = time.monotonic() + 30
        while proc.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        out = proc.output()
        other = uids.acquire(bwrap.state_dir / "uids")  # while the bot still holds its own uid
        proc.kill()
        assert proc.exit_status() == 0 and "ack:hi" in out, out  # the bot's own uid connects
        bot_uid = int(out.split()[-1])
        for path, mode in ((seat, 0o700), (sock, 0o600)):
            st = os.lstat(path)
            assert (stat.S_IMODE(st.st_mode), st.st_uid) == (mode, bot_uid), path
        # another uid of the pool (leased, so no running bot has it) can neither list nor connect
        try:
            assert other.uid != bot_uid
            res = subprocess.run(
                ["setpriv", f"--reuid={other.uid}", f"--regid={other.uid}", "--clear-groups",
                 "/usr/bin/python3", "-I", "-c", PROBE, str(sock)],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
        finally:
            other.release()
        assert res.stdout.split() == ["list:EACCES", "connect:EACCES"], res.stdout + res.stderr
    finally:
        srv.close()


def test_a_shared_socket_directory_is_left_alone(tmp_path):
    """The older layout (one socket for both seats beside the match's files) keeps working."""
    shared = tmp_path / "match"
    shared.mkdir(mode=0o755)
    (shared / "owner").write_text("1 x\n")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(shared / "referee.sock"))
    try:
        assert not sockets.is_dedicated(shared / "referee.sock")
        assert sockets.make_private(shared / "referee.sock", None) is False
        assert stat.S_IMODE(os.stat(shared).st_mode) == 0o755 and os.stat(shared).st_uid == os.geteuid()
        own = tmp_path / "seat1"
        own.mkdir(mode=0o755)
        srv2 = socket.socket(socket.AF_UNIX)
        srv2.bind(str(own / "referee.sock"))
        assert sockets.make_private(own / "referee.sock", None) is True
        assert stat.S_IMODE(os.stat(own).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(own / "referee.sock").st_mode) == 0o600
        srv2.close()
    finally:
        srv.close()
