"""A bot that keeps failing in real, sandboxed matches is suspended, and its owner can read why.

The reason is public (the bot's page and API), so it names verdicts and matches only: what the bot
wrote to stderr reaches its owner through `arena bots logs`, never through the reason."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli

REPO = Path(__file__).resolve().parents[2]


def test_failing_bot_is_suspended_with_its_reason(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    (crasher / "bot.toml").write_text(
        'name = "crasher"\nrun = ["/bin/sh", "-c", "echo no luck >&2; exit 3"]\n'
    )

    def arena(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    arena("bots", "submit", str(crasher), "--name", "crasher", "--owner", "eve", "--sandbox", "local")
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena(
            "bots",
            "submit",
            str(REPO / "sample_bots" / "python" / name),
            "--name",
            name,
            "--owner",
            owner,
            "--sandbox",
            "local",
        )
    arena("season", "create", "s", "--seed", "8")
    arena("season", "start", "s")
    out = arena(
        "season", "run", "s", "--matches", "12", "--concurrency", "2", "--sandbox", "local", "--quiet"
    )
    assert "suspended crasher" in out
    shown = arena("bots", "show", "crasher")
    assert (
        "SUSPENDED" in shown
        and "own fault" in shown
        and "STARTUP_FAILED ×" in shown
        and "last: STARTUP_FAILED in match" in shown
    )
    assert "suspended:" in shown.split("notices for the owner:")[1]
    assert "no luck" not in shown  # the bot's own words stay out of the (public) reason and notices
    logs = arena("bots", "logs", "crasher", "--last", "1")
    assert "[verdict]" in logs and "no luck" in logs
    listed = arena("bots", "list")
    assert "suspended" in listed
    # a fixed version lifts the suspension and enters the season fresh
    (crasher / "bot.toml").write_text('name = "crasher"\nrun = ["python3", "bot.py"]\n')
    (crasher / "bot.py").write_text((REPO / "sample_bots" / "python" / "random" / "bot.py").read_text())
    arena("bots", "submit", str(crasher), "--name", "crasher", "--owner", "eve", "--sandbox", "local")
    assert "active" in arena("bots", "show", "crasher").splitlines()[0]
