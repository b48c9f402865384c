"""Every bad input in the catalogue gets one line, a non-zero exit and no traceback.

The real `arena` command runs in-process (click's runner) on a real SQLite store in a temporary
ARENA_HOME; the corpus is built by tests/cli/bad_input_catalogue.py. The names' rows also run on
PostgreSQL, so the length and character limits are shown to be the same on both.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from tests.cli.bad_input_catalogue import Case, catalogue

CASES = catalogue()
MAX_LINES = 3  # "one line": the answer, wrapped at most this far by long paths


def _run(case: Case, tmp_path: Path, env: dict[str, str]) -> tuple[int, str, BaseException | None]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    target = case.make(corpus)
    argv = [a.replace("{f}", target) for a in case.argv]
    runner = CliRunner()
    result = runner.invoke(cli, argv, env={**env, **case.env}, catch_exceptions=True)
    exc = result.exception if not isinstance(result.exception, SystemExit) else None
    return result.exit_code, result.output.replace(target, "{f}"), exc


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store migrated once, copied into each row's home: the rows test the CLI, not Alembic."""
    from arena.store import Store

    folder = tmp_path_factory.mktemp("template")
    Store.open(f"sqlite:///{folder / 'arena.db'}", home=folder).close()
    return folder / "arena.db"


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, migrated_db: Path) -> dict[str, str]:
    import shutil

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(migrated_db, home / "arena.db")
    monkeypatch.chdir(tmp_path)  # `last` and var/replays: nothing of the checkout
    return {
        "ARENA_HOME": str(home),
        "ARENA_BUNDLE_CACHE": str(tmp_path / "cache"),
        "ARENA_DATABASE_URL": "",
        "ARENA_SERVER": "",
        "ARENA_API_TOKEN": "",
    }


def _check(case: Case, code: int, output: str, exc: BaseException | None) -> None:
    if exc is not None:
        tb = "".join(traceback.format_exception(exc))
        pytest.fail(f"{case.name}: a traceback instead of one line:\n{tb}")
    assert "Traceback" not in output, f"{case.name}: {output}"
    assert code in case.exit_codes, f"{case.name}: exit {code}, expected {case.exit_codes}: {output}"
    if code == 0 or not case.first_words:  # a row that only proves no traceback and one short answer
        lines = [line for line in output.splitlines() if line.startswith("Error")]
        assert len(lines) <= 1, f"{case.name}: {output}"
        return
    lines = [line for line in output.splitlines() if not line.startswith(("warning:", "build"))]
    assert lines, f"{case.name}: no message"
    assert len(lines) <= MAX_LINES, f"{case.name}: {len(lines)} lines:\n{output}"
    prefix = "" if case.argv[:2] == ("replay", "verify") else "Error: "
    assert lines[0].startswith(prefix + case.first_words), (
        f"{case.name}: expected {prefix + case.first_words!r}..., got {lines[0][:300]!r}"
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_one_line_for_every_bad_input(case: Case, tmp_path: Path, cli_env: dict[str, str]) -> None:
    _check(case, *_run(case, tmp_path, cli_env))


NAME_CASES = [  # the limit, one past it, and Unicode, for each kind of name
    c
    for c in CASES
    if c.name.startswith(("bot name:", "owner:", "owner name:", "season name:"))
    and c.name.endswith(("at the limit", "one past the limit", "Unicode"))
]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """One PostgreSQL schema for the names' rows (each refusal happens before the database; the rows
    at the limit use different names, so they can share it)."""
    from tests.conftest import _pg_drop, _pg_schema_url

    url, schema = _pg_schema_url()
    try:
        yield url
    finally:
        _pg_drop(schema)


@pytest.mark.postgres
@pytest.mark.parametrize("case", NAME_CASES, ids=[c.name for c in NAME_CASES])
def test_names_refused_alike_on_postgresql(
    case: Case, tmp_path: Path, cli_env: dict[str, str], pg_url: str
) -> None:
    _check(case, *_run(case, tmp_path, {**cli_env, "ARENA_DATABASE_URL": pg_url}))


def test_catalogue_covers_every_kind() -> None:
    """The corpus holds each kind the issue names, so a trimmed catalogue fails here."""
    names = " ".join(c.name for c in CASES)
    for kind in (
        "empty file", "truncated", "corrupt", "bomb", "bot.toml name is an integer", "a table",
        "member name too long", "not UTF-8", "corrupt zip", "truncated .tar.gz", "mysql://", "notaurl",
        "unwritable SQLite", "one past the limit", "at the limit", "Unicode", "5,000-digit seed",
        "/dev/full", "missing folder",
    ):  # fmt: skip
        assert kind in names, kind
