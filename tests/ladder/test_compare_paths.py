"""`arena compare` given bundle paths (journey 2: `arena compare mybot mybot-v1` on two folders).

Real CLI, real store under a temp ARENA_HOME, real referee matches between two sample bots; one-flag
matches and a pair or two keep it to seconds (the SPRT itself is tested in test_sprt/test_cli)."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
QUICK = ("--format", "flags=1", "--seed", "5", "--sandbox", "local", "--concurrency", "2")


@pytest.fixture
def arena(arena, tmp_path, monkeypatch):
    """The ladder suite's `arena` runner, in tmp_path (where the bundle folders live) as user `me`."""
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(var, "me")
    monkeypatch.chdir(tmp_path)
    return arena


def test_compare_two_bundle_folders(arena, tmp_path) -> None:
    shutil.copytree(SAMPLES / "random", tmp_path / "mybot-v1")
    shutil.copytree(SAMPLES / "greedy", tmp_path / "mybot")

    first = arena("compare", "mybot", "mybot-v1", "--max-pairs", "2", "--json", *QUICK)
    data = json.loads(first.stdout)
    assert (data["a"], data["b"]) == ("mybot@1", "mybot-v1@1")
    assert data["a_content"] != data["b_content"] and 1 <= data["pairs"] == sum(data["pentanomial"])
    assert "mybot: submitted as new version mybot@1" in first.stderr
    assert "mybot-v1: submitted as new version mybot-v1@1" in first.stderr

    again = arena("compare", "./mybot", str(tmp_path / "mybot-v1"), "--max-pairs", "1", *QUICK)
    assert "unchanged content, reusing mybot@1" in again.stderr
    assert "unchanged content, reusing mybot-v1@1" in again.stderr
    assert "compared mybot@1 (A) vs mybot-v1@1 (B)" in again.stdout
    assert any(w in again.stdout for w in ("accepted", "inconclusive"))

    # v2 of the same folder against its v1 by name: the path is submitted as mybot@2
    with (tmp_path / "mybot" / "bot.py").open("a") as f:
        f.write("\n# v2: same play, new content\n")
    v2 = json.loads(arena("compare", "mybot", "mybot@1", "--max-pairs", "1", "--json", *QUICK).stdout)
    assert (v2["a"], v2["b"]) == ("mybot@2", "mybot@1") and v2["a_content"] != data["a_content"]
    rows = {r["name"]: r for r in json.loads(arena("bots", "list", "--json").output)}
    assert {n: (r["owner"], r["version"]) for n, r in rows.items()} == {
        "mybot": ("me", 2),
        "mybot-v1": ("me", 1),
    }


def test_archive_path_and_the_name_rule(arena, tmp_path) -> None:
    arena("bots", "submit", str(SAMPLES / "random"), "--name", "rnd", "--sandbox", "local")
    (tmp_path / "rnd").mkdir()  # a folder without bot.toml: the registered name wins
    archive = tmp_path / "Greedy Bot!.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SAMPLES / "greedy", arcname="greedy")
    result = arena("compare", archive.name, "rnd", "--max-pairs", "1", "--json", *QUICK)
    data = json.loads(result.stdout)
    assert (data["a"], data["b"]) == ("Greedy-Bot-@1", "rnd@1")
    assert "submitted as new version Greedy-Bot-@1" in result.stderr


def test_path_mistakes_are_one_clear_line(arena, tmp_path) -> None:
    shutil.copytree(SAMPLES / "random", tmp_path / "mybot")
    shutil.copytree(SAMPLES / "greedy", tmp_path / "taken")
    arena(
        "bots", "submit", str(SAMPLES / "random"), "--name", "taken", "--owner", "ann", "--sandbox", "local"
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("not a bot")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text(
        'name = "b"\nrun = ["./bot"]\nbuild = ["sh", "-c", "echo cc: oops; exit 1"]\n'
    )
    cases = [
        (("./nope", "mybot"), "./nope: no such bundle path"),
        (("mybot", "nope.zip"), "nope.zip: no such bundle path"),
        (("empty", "mybot"), "empty: directory has no bot.toml"),
        (("notes.txt", "mybot"), "notes.txt: not a bot bundle"),
        (("taken", "mybot"), "bot name 'taken', which belongs to 'ann'"),
        (("broken", "mybot"), "build FAILED"),
        (("mybot", "./mybot"), "same version (mybot@1)"),
    ]
    for args, message in cases:
        result = arena("compare", *args, "--max-pairs", "1", *QUICK, ok=False)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output, (args, result.output)
    owners = {
        r["name"]: (r["owner"], r["version"]) for r in json.loads(arena("bots", "list", "--json").output)
    }
    assert owners["taken"] == ("ann", 1) and owners["mybot"] == ("me", 1)  # nothing slipped into ann's bot
