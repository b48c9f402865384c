"""The core install without its extras: `arena` run by a Python that cannot import the web, PostgreSQL
or Celery packages (a meta_path finder refuses them, as if they were not installed).

The core commands (play, a SQLite season) work; a command that needs a missing extra prints one line
naming the extra and the pip command, exit 2, no traceback (arena/extras.py).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.extras import MODULES

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"
ALL = sorted({m for modules in MODULES.values() for m in modules})

# sitecustomize runs at startup in every Python started with this PYTHONPATH (the bots' too).
ABSENT = '''
import sys

BLOCKED = set({blocked!r})


class _Absent:
    """Refuse the extras' packages, as when they are not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Absent())
'''


def _arena(tmp_path: Path, blocked: list[str], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    prelude = tmp_path / "absent"
    prelude.mkdir(exist_ok=True)
    (prelude / "sitecustomize.py").write_text(ABSENT.format(blocked=blocked))
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env={
            "PATH": os.environ["PATH"],
            "ARENA_HOME": str(tmp_path / "home"),
            "PYTHONPATH": f"{prelude}:{REPO}",
            **env,
        },
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_prelude_really_hides_the_packages(tmp_path: Path) -> None:
    """Without this the tests below could pass with every extra importable."""
    probe = _arena(tmp_path, ALL, "--version")
    assert probe.returncode == 0, probe.stderr
    hidden = subprocess.run(
        [sys.executable, "-c", "import fastapi"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path / "absent")},
    )
    assert hidden.returncode == 1 and "No module named 'fastapi'" in hidden.stderr


def test_play_and_a_sqlite_season_need_no_extra(tmp_path: Path) -> None:
    played = _arena(
        tmp_path, ALL, "play", str(SAMPLES / "random"), str(SAMPLES / "greedy"), "--seed", "3", "--deals", "2"
    )
    assert played.returncode == 0, played.stderr
    for bot in ("random", "greedy"):
        sub = _arena(tmp_path, ALL, "bots", "submit", str(SAMPLES / bot), "--name", bot, "--owner", bot)
        assert sub.returncode == 0, sub.stderr
    for step in (("create", "s", "--format", "deals=2"), ("start", "s"), ("run", "s", "--matches", "2")):
        done = _arena(tmp_path, ALL, "season", *step)
        assert done.returncode == 0, (step, done.stdout, done.stderr)
    standings = _arena(tmp_path, ALL, "standings", "s")
    assert standings.returncode == 0 and "random" in standings.stdout and "greedy" in standings.stdout


@pytest.mark.parametrize(
    ("blocked", "args", "env", "expected"),
    [
        (["fastapi"], ("web", "--port", "{port}"), {}, "the web server needs the [web] extra"),
        (["uvicorn"], ("web", "--port", "{port}"), {}, "the web server needs the [web] extra"),
        (
            ["fastapi"],
            ("serve", "--unix", "", "--tcp", "127.0.0.1:{port}", "--web", "127.0.0.1:{port2}"),
            {},
            "--web (the web server) needs the [web] extra",
        ),
        (
            ["psycopg"],
            ("season", "list"),
            {"ARENA_DATABASE_URL": "postgresql://arena:s3cret@127.0.0.1:{port}/arena"},
            "needs the [postgres] extra",
        ),
        (["celery"], ("worker",), {}, "the Celery worker needs the [celery] extra"),
        (["redis"], ("worker",), {}, "the Celery worker needs the [celery] extra"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    tmp_path: Path, blocked: list[str], args: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    ports = {"port": str(_free_port()), "port2": str(_free_port())}
    run = _arena(
        tmp_path,
        blocked,
        *(a.format(**ports) for a in args),
        **{k: v.format(**ports) for k, v in env.items()},
    )
    extra = expected.split("[")[1].split("]")[0]
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert expected in run.stderr and f"pip install 'elfern-arena[{extra}]'" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "s3cret" not in run.stderr


def test_executor_celery_without_the_extra(tmp_path: Path) -> None:
    for step in (("create", "s", "--format", "deals=2"), ("start", "s")):
        assert _arena(tmp_path, ["celery"], "season", *step).returncode == 0
    run = _arena(tmp_path, ["celery"], "season", "run", "s", "--matches", "1", "--executor", "celery")
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "--executor celery needs the [celery] extra" in run.stderr and "Traceback" not in run.stderr


def test_an_import_that_slips_past_require_is_named_too() -> None:
    """The group's fallback: any ImportError of an extra's module becomes the same line."""
    from arena.cli.errors import missing_extra

    found = missing_extra(ModuleNotFoundError("No module named 'kombu.transport'", name="kombu.transport"))
    assert found is not None and found.exit_code == 2 and "[celery] extra" in found.message
    assert missing_extra(ModuleNotFoundError("No module named 'nosuch'", name="nosuch")) is None
