"""Private PostgreSQL and Redis instances for fault tests: started in a temporary folder on a spare
port, stopped (and started again) by their own pid. The machine's shared instances are never
touched."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def spare_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


class PrivatePostgres:
    """initdb into `folder` (as the postgres user: initdb refuses root), trust auth, one port."""

    def __init__(self, folder: Path) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            pytest.skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin) to start a private one")
        self.bin = Path(bins[-1]).parent
        # pytest's folders are 0700 root: the postgres user could not reach one, so a folder of its own
        self.folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
        self.data = self.folder / "pgdata"
        self.port = spare_port()
        self._as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            os.chown(self.folder, *_postgres_ids())
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres", "-E", "UTF8"
        )
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> None:
        subprocess.run([*self._as_user, *argv], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [*self._as_user, str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-k", str(self.data), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        _wait_port(self.port)
        import psycopg

        deadline = time.monotonic() + 60
        while True:  # listening is not ready: after an immediate stop it first replays its WAL
            try:
                psycopg.connect(
                    f"postgresql://postgres@127.0.0.1:{self.port}/postgres", connect_timeout=2
                ).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def stop(self) -> None:
        """Immediate shutdown (SIGQUIT to the postmaster, by its pid): every backend is cut off."""
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGQUIT)
        if self.proc is not None:
            self.proc.wait(timeout=60)
            self.proc = None


def _postgres_ids() -> tuple[int, int]:
    import pwd

    entry = pwd.getpwnam("postgres")
    return entry.pw_uid, entry.pw_gid


class PrivateRedis:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = spare_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        _wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            self.proc = None
