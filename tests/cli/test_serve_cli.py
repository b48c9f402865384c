"""`arena serve`: a standalone referee that bots reach over TCP and a Unix socket; Ctrl-C ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from arena.sdk import Bot, run


class FirstLegal(Bot):
    def play(self, view):
        return view.legal[0]


def test_serve_hosts_a_match_writes_its_replay_and_stops_on_sigint(repo_root, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", "serve",
         "--unix", str(tmp_path / "r.sock"), "--tcp", "127.0.0.1:0", "--create", "--seed", "5",
         "--time", "move=1s,bank=5s,startup=30s", "--replays", str(tmp_path / "replays")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(repo_root)},
    )  # fmt: skip
    listening = proc.stdout.readline()
    tokens = [proc.stdout.readline().split()[-1] for _ in range(2)]
    unix, tcp = listening.split(" on ")[1].split(" (")[0].split(", ")
    threads = [
        threading.Thread(target=run, args=(FirstLegal(), addr, tok))
        for addr, tok in zip((unix, tcp), tokens, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    over = proc.stdout.readline()
    assert "over: winner" in over and "['OK', 'OK']" in over
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "shutting down" in rest
    assert len(list((tmp_path / "replays").glob("*.replay"))) == 1
    assert not (tmp_path / "r.sock").exists()


def test_serve_with_web_answers_http_and_stops_on_sigint(repo_root, tmp_path):
    import socket
    import urllib.request

    with socket.socket() as probe:  # a free port for the web
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", "serve",
         "--unix", str(tmp_path / "r.sock"), "--web", f"127.0.0.1:{port}", "--db", f"sqlite:///{tmp_path}/a.db"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(repo_root)},
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{port}/")
        assert "referee listening" in proc.stdout.readline()
        body = None
        for _ in range(100):  # uvicorn binds a moment after the referee
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/seasons", timeout=5) as resp:
                    body = resp.read().decode()
                break
            except OSError:
                threading.Event().wait(0.1)
        assert body is not None and body.lstrip().startswith(("[", "{"))
    finally:
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "shutting down" in rest
