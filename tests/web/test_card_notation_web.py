"""The web shows cards as people read them: an illegal move's verdict detail (written in wire codes for
the bot, and kept so in the API's JSON) reads `♣7` on the match page (docs/rules.md "Card notation").
A real match: the sample random bot against tests/referee/bots/illegal, played by `arena season run`."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli import cli

REPO = Path(__file__).resolve().parents[2]


def test_an_illegal_moves_detail_reads_in_labels_on_the_match_page(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ARENA_HOME", str(home))
    for name in ("ARENA_DATABASE_URL", "ARENA_SERVER", "ARENA_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)

    def arena(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    arena("bots", "submit", str(REPO / "sample_bots/python/random"), "--name", "rnd", "--owner", "ann",
          "--sandbox", "local")  # fmt: skip
    bad = tmp_path / "bad"  # the test bot, as a bundle of its own (its folder shares misbehave.py)
    bad.mkdir()
    shutil.copy(REPO / "tests/referee/bots/misbehave.py", bad / "misbehave.py")
    (bad / "bot.toml").write_text(
        'name = "bad"\nlanguage = "python"\nprotocol = "grpc"\nrun = ["python3", "misbehave.py", "illegal"]\n'
    )
    arena("bots", "submit", str(bad), "--name", "bad", "--owner", "ben", "--sandbox", "local")
    arena("season", "create", "s", "--format", "flags=1", "--time", "move=2s,bank=10s,startup=30s")
    arena("season", "start", "s")
    arena("season", "run", "s", "--matches", "1", "--sandbox", "local", "--quiet")
    row = json.loads(arena("matches", "--season", "s", "--json"))["matches"][0]
    seat = row["verdicts"].index("ILLEGAL_MOVE")
    assert re.match(r"played [789TJQKA][CDHS]", row["verdict_details"][seat])  # machines: wire codes

    from arena.web.app import create_app

    with TestClient(create_app(f"sqlite:///{home / 'arena.db'}", home)) as web:
        api = web.get(f"/api/matches/{row['id']}").json()
        assert api["verdict_details"][seat].startswith(row["verdict_details"][seat][:9])  # still codes
        page = web.get(f"/matches/{row['id']}").text
    shown = re.search(r"ILLEGAL_MOVE</span> — (played [^<]*)", page)
    assert shown, page[:2000]
    assert re.match(r"played [♣♦♥♠](10|[789JQKA])[,:]", shown.group(1)), shown.group(1)
    assert not re.search(r"\b[789TJQKA][CDHS]\b", shown.group(1)), shown.group(1)
