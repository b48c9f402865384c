"""Where `arena play` puts a bot author's files: replays under $ARENA_HOME (found by `last` from any
directory), each bot's stdout/stderr kept capped in the record's private logs and printed by
`arena replay show --seat N --logs`, and exit statuses a CI can test."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli
from arena.proto.codec import decode_record, encode_record, strip_timing
from arena.replay.privacy import private_record, public_record
from arena.workers.match import OUTPUT_KEEP_BYTES, OUTPUT_KEEP_LINES

FAST = "move=1s,bank=5s,startup=30s"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_replays_and_bot_output_go_to_arena_home(tmp_path, monkeypatch, repo_root):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    chatty = str(repo_root / "tests" / "referee" / "bots" / "chatty")
    rand = str(repo_root / "sample_bots" / "python" / "random")
    res = invoke(
        "play", chatty, rand, "--seed", "5", "--deals", "1", "--json", "--sandbox", "local", "--time", FAST
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    replay = home.resolve() / "replays"
    assert out["replay"].startswith(str(replay)) and not (tmp_path / "var").exists()

    path = replay / out["replay"].rsplit("/", 1)[1]
    assert path.stat().st_mode & 0o777 == 0o600 and replay.stat().st_mode & 0o777 == 0o700
    record = decode_record(path.read_bytes())
    output = [x.text for x in record.logs if x.source == "output" and x.seat == 0]
    # the last 64 KiB and 2000 lines: the flood's start is cut, and a first line says so
    assert output[0].startswith("[") and output[0].endswith("earlier bytes of output not kept]")
    assert "chatty stdout turn 1" in output and "chatty stderr turn 16" in output
    assert len(output) <= OUTPUT_KEEP_LINES + 1 and sum(len(x) + 1 for x in output[1:]) <= OUTPUT_KEEP_BYTES
    assert "flood 0000 " + "x" * 89 not in output and "flood 0999 " + "x" * 89 in output
    assert not [x for x in strip_timing(record).logs if x.source]  # not part of the deterministic record
    # bot output is private: gone from the public form, and from the other seat's owner's form
    assert not public_record(record).logs
    assert not [x for x in private_record(record, [1]).logs if x.seat == 0]

    monkeypatch.chdir(elsewhere)  # `last` is the newest replay in $ARENA_HOME, from anywhere
    shown = invoke("replay", "show", "last", "--seat", "0", "--logs")
    assert shown.exit_code == 0, shown.output
    assert (
        "  chatty stderr turn 3" in shown.output.splitlines() and "line(s) of stdout/stderr" in shown.output
    )
    other = invoke("replay", "show", "last", "--seat", "1", "--logs")
    assert other.exit_code == 0 and "chatty" not in other.output
    assert "chatty stdout" not in invoke("replay", "show", "last").output  # not in the trick-by-trick view

    public = elsewhere / "public.replay"
    public.write_bytes(encode_record(public_record(record)))
    refused = invoke("replay", "show", str(public), "--logs")
    assert (
        refused.exit_code == 2 and "carries no logs" in refused.output and "Traceback" not in refused.output
    )
