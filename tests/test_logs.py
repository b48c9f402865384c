"""`arena.logs`: one line per event with the match id inside a match, the level from --log-level or
ARENA_LOG_LEVEL, and a bad level refused in one line."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.engine import Rules
from arena.logs import ENV, FORMAT, MatchField, configure, match_context
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter(FORMAT))
        self.addFilter(MatchField())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def lines():
    handler = Lines()
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler.lines
    root.removeHandler(handler)
    root.setLevel(old)


def test_a_line_says_its_match_only_inside_it(lines) -> None:
    log = logging.getLogger("arena.test")
    log.info("before")
    with match_context(42):
        log.info("during")
    log.info("after")
    assert [line.split(" ", 2)[2] for line in lines] == [
        "INFO arena.test: before",
        "INFO arena.test [match 42]: during",
        "INFO arena.test: after",
    ]


def test_the_referee_logs_its_match_end_with_the_match_id(lines, repo_root) -> None:
    bundle = load_bundle(repo_root / "sample_bots" / "python" / "random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    play_match((bundle, bundle), rules=Rules(), seed=5, time_control=TimeControl(startup=20.0),
               launcher=launcher, match_id="logged-1")  # fmt: skip
    over = [line for line in lines if "over: winner" in line]
    assert len(over) == 1 and "arena.referee.match [match logged-1]: over: winner" in over[0], lines


def test_the_level_comes_from_the_option_then_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    root = logging.getLogger()
    old, handlers = root.level, list(root.handlers)
    try:
        assert configure(None, default="warning") == logging.WARNING
        monkeypatch.setenv(ENV, "error")
        assert configure(None, default="info") == logging.ERROR  # the environment beats a default
        assert configure("debug") == logging.DEBUG  # the option beats the environment...
        assert configure(None, default="info") == logging.DEBUG  # ...and holds for later calls
        assert sum(getattr(h, "arena", False) for h in root.handlers) <= 1  # one handler, however often
    finally:
        root.setLevel(old)
        root.handlers[:] = handlers


def test_a_bad_level_is_one_line() -> None:
    result = CliRunner().invoke(cli, ["--log-level", "loud", "bots", "--help"])
    assert result.exit_code == 2 and "'loud' is not one of" in result.output
    bad_env = subprocess.run(
        [sys.executable, "-m", "arena.cli", "bots", "--help"],
        env={"ARENA_LOG_LEVEL": "loud", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert bad_env.returncode == 2 and "Traceback" not in bad_env.stderr
    assert "ARENA_LOG_LEVEL 'loud': expected one of debug, info, warning, error" in bad_env.stderr


def test_json_lines_carry_the_match_and_the_request_and_a_callers_id_only_when_plain() -> None:
    import json

    from arena.logs import JsonFormatter, request_context, request_id

    handler = Lines()
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("arena.test.json")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with match_context(7), request_context(request_id("call-1")):
            logger.info("inside %s", "the match")
        logger.info("outside")
    finally:
        logger.removeHandler(handler)
    inside, outside = (json.loads(line) for line in handler.lines)
    assert inside["msg"] == "inside the match" and (inside["match"], inside["request"]) == ("7", "call-1")
    assert (
        inside["level"] == "info"
        and inside["logger"] == "arena.test.json"
        and inside["ts"].endswith("+00:00")
    )
    assert "match" not in outside and "request" not in outside
    for hostile in ("a b", "x" * 65, "id\nforged line", ""):
        made = request_id(hostile)
        assert made != hostile and len(made) == 16  # a new id, never the caller's text


def test_a_bad_log_format_is_one_line() -> None:
    out = CliRunner().invoke(cli, ["--log-format", "xml", "season", "list"])
    assert out.exit_code == 2 and "xml" in out.output
