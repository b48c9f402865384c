"""`arena replay verify` as a user runs it: one line per file, exit 0 only if all are ok, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli
from arena.engine import Match, Rules
from arena.replay.json_record import match_to_json, save


def _good(path: Path, seed: int = 1) -> Path:
    m = Match(Rules(), seed)
    rng = __import__("random").Random(seed)
    while not m.over:
        m.start_deal()
        m.playout(rng)
    save(match_to_json(m, ["a", "b"]), path)
    return path


def test_all_ok_exits_zero(tmp_path: Path) -> None:
    a, b = _good(tmp_path / "a.json", 1), _good(tmp_path / "b.json", 2)
    result = CliRunner().invoke(cli, ["replay", "verify", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{a}: ok", f"{b}: ok"]


def test_one_bad_file_makes_it_fail_and_says_where(tmp_path: Path) -> None:
    good = _good(tmp_path / "good.json")
    record = json.loads(good.read_text())
    record["deals"][0]["plays"][3] = record["deals"][0]["plays"][0]  # a card already played
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = CliRunner().invoke(
        cli, ["replay", "verify", str(good), str(bad), str(broken), str(tmp_path / "nope.json")]
    )
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"{good}: ok"
    assert lines[1].startswith(f"{bad}: FAIL deal 1, play 4: seat ") and "is not in your hand" in lines[1]
    assert lines[2].startswith(f"{broken}: FAIL: not valid JSON: line 1, column 2")
    assert lines[3] == f"{tmp_path / 'nope.json'}: FAIL: cannot read: No such file or directory"


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_bytes(b"\x00\xff garbage")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "arena"), "replay", "verify", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout and "FAIL" in proc.stdout


def test_verify_needs_a_file() -> None:
    result = CliRunner().invoke(cli, ["replay", "verify"])
    assert result.exit_code == 2 and "Missing argument" in result.output
