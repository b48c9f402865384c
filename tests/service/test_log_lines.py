"""The logs of a full run: `arena --log-format json serve --web --workers 1` as a real subprocess, two
owners submit over gRPC, one challenges the other with an `x-request-id`, the server's players play
the match, a web request carries an `X-Request-Id`. Then its stderr is read whole: every line is one
JSON object; the worker's lines about the match carry the challenge call's request id; the web echoes
its request id; and no line holds a token (either owner's, the admin's) or the private output a bot
wrote to its stderr."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from service_support import bundle_archive

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc

pytestmark = pytest.mark.slow

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
ADMIN = "log-lines-admin-token-0123456789abcdef"
REPO = Path(__file__).resolve().parents[2]
MARKER = "PRIVATE-BOT-OUTPUT-7f3a9c"
RID = "challenge-req-42"
WAIT = 300.0  # seconds any one step may take on a loaded machine (a bound, not a measurement)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _marker_bot(folder: Path) -> Path:
    """The random sample bot, writing a private line to its stderr before every card."""
    shutil.copytree(REPO / "sample_bots" / "python" / "random", folder)
    bot = folder / "bot.py"
    bot.write_text(
        bot.read_text().replace(
            "        return self.rng.choice(view.legal)",
            f"        import sys\n        print('{MARKER}', file=sys.stderr, flush=True)\n"
            "        return self.rng.choice(view.legal)",
        )
    )
    return folder


def _submit(stub, token: str, name: str, data: bytes) -> None:
    chunks = [
        pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data))),
        pb.SubmitBotChunk(data=data),
    ]
    done = stub.SubmitBot(iter(chunks), metadata=[("authorization", f"Bearer {token}")], timeout=WAIT)
    assert done.version.build_ok, done


def _until(what: str, check, proc: subprocess.Popen):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        assert proc.poll() is None, f"the server exited while waiting for {what}"
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what}")


def test_json_logs_of_a_full_run_carry_request_ids_and_no_secret(tmp_path: Path) -> None:
    home, tcp, web = tmp_path / "home", _free_port(), _free_port()
    home.mkdir()
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"PYTHONPATH": str(REPO), "ARENA_HOME": str(home)}
    tokens = {}
    for name in ("alice", "bob"):
        out = subprocess.run(
            [*ARENA, "owners", "add", name], env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        tokens[name] = out.stdout.splitlines()[1].strip()
    proc = subprocess.Popen(
        [*ARENA, "--log-format", "json", "serve", "--unix", "", "--tcp", f"127.0.0.1:{tcp}",
         "--web", f"127.0.0.1:{web}", "--workers", "1", "--sandbox", "local",
         "--admin-token-file", str(token_file)],
        env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{web}/")
        listening = proc.stdout.readline()
        assert listening.startswith(f"referee listening on 127.0.0.1:{tcp}"), listening
        stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(f"127.0.0.1:{tcp}"))
        _submit(stub, tokens["alice"], "marker", bundle_archive(_marker_bot(tmp_path / "marker")))
        _submit(stub, tokens["bob"], "plain", bundle_archive(REPO / "sample_bots" / "python" / "random"))
        alice = [("authorization", f"Bearer {tokens['alice']}"), ("x-request-id", RID)]
        made = stub.Challenge(pb.ChallengeRequest(my_bot="marker", opponent="plain", deals=2), metadata=alice)
        match_id = made.match.id

        def finished() -> bool:
            got = stub.ListMatches(pb.ListMatchesRequest(kind="challenge", limit=5)).matches
            return any(x.id == match_id and x.status in ("done", "failed") for x in got)

        _until("the challenge to be played", finished, proc)
        request = urllib.request.Request(
            f"http://127.0.0.1:{web}/api/seasons", headers={"X-Request-Id": "web-req-7"}
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.headers["X-Request-Id"] == "web-req-7"
        with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/seasons", timeout=30) as resp:
            assert len(resp.headers["X-Request-Id"]) == 16  # a new one when the caller sends none
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    lines = [line for line in err.splitlines() if line.strip()]
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"a log line that is not JSON: {line[:300]}")
    assert all({"ts", "level", "logger", "msg"} <= set(r) for r in records)
    about = [r for r in records if r.get("match") == str(match_id)]
    assert about, [r["msg"] for r in records][-20:]
    assert all(r.get("request") == RID for r in about), about  # the worker's lines carry the call's id
    for secret in (*tokens.values(), ADMIN, MARKER):
        assert secret not in err, f"{secret[:12]}... in the logs"
