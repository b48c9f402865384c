"""Submitting: a refused submit leaves nothing behind, the `run` program is checked at submit time,
and the build's output reaches the watcher while the build still runs (real sandboxes)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from arena.sandbox.building import watching_builds
from arena.sandbox.bundle import BundleError
from arena.store import Store, StoreError
from arena.workers.submit import submit_bundle


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(folder))
    return folder


@pytest.fixture
def local_store(tmp_path: Path) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path / "home")
    yield store
    store.close()


def _bundle(root: Path, toml: str) -> Path:
    root.mkdir()
    (root / "bot.toml").write_text(toml)
    (root / "bot.py").write_text("print('hi')\n")
    return root


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_missing_run_program_is_refused_and_leaves_nothing(
    tmp_path: Path, cache: Path, local_store: Store
) -> None:
    bot = _bundle(tmp_path / "b", 'name = "b"\nrun = ["./bot"]\nbuild = ["sh", "-c", "echo built"]\n')
    with pytest.raises(
        BundleError, match=r"`run` starts './bot', which is not a file in the bundle after its build"
    ):
        submit_bundle(local_store, bot, name="b", owner="alice", launcher="local")
    assert _left(local_store.bundles_dir) == []  # the stored copy is gone
    assert [n for n in _left(cache) if not n.startswith(".")] == []  # and the build's staged copy
    assert local_store.bots() == []


def test_program_made_by_the_build_is_accepted(tmp_path: Path, cache: Path, local_store: Store) -> None:
    toml = (
        'name = "b"\nrun = ["./bot"]\nbuild = ["sh", "-c", "printf \'#!/bin/sh\\n\' > bot; chmod +x bot"]\n'
    )
    done = submit_bundle(
        local_store, _bundle(tmp_path / "b", toml), name="b", owner="alice", launcher="local"
    )
    assert done.new and done.version.build_ok


def test_bad_manifest_in_an_archive_leaves_no_unpacked_copy(
    tmp_path: Path, cache: Path, local_store: Store
) -> None:
    src = _bundle(tmp_path / "src", 'name = 7\nrun = ["python3", "bot.py"]\n')
    archive = tmp_path / "bot.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname=".")
    with pytest.raises(BundleError, match="`name` must be a string, not an integer"):
        submit_bundle(local_store, archive, name="b", owner="alice", launcher="local")
    assert [n for n in _left(cache) if not n.startswith(".")] == []
    assert _left(local_store.bundles_dir) == []


def test_bad_name_is_refused_before_any_copy(tmp_path: Path, cache: Path, local_store: Store) -> None:
    bot = _bundle(tmp_path / "b", 'name = "b"\nrun = ["python3", "bot.py"]\n')
    with pytest.raises(StoreError, match="is too long"):
        submit_bundle(local_store, bot, name="x" * 65, owner="alice", launcher="local")
    assert _left(local_store.bundles_dir) == []


@pytest.mark.parametrize("launcher", ["local", "bwrap"])
def test_build_output_arrives_while_the_build_runs(
    tmp_path: Path, cache: Path, local_store: Store, launcher: str
) -> None:
    """The first line reaches the watcher in an earlier call than the last: it was shown live."""
    from arena.workers.execute import bwrap_available

    if launcher == "bwrap" and not bwrap_available():
        pytest.skip("bwrap cannot run here")
    build = '["sh", "-c", "echo step-one; sleep 1; echo step-two"]'
    bot = _bundle(tmp_path / "b", f'name = "b"\nrun = ["python3", "bot.py"]\nbuild = {build}\n')
    calls: list[str] = []
    with watching_builds(calls.append):
        done = submit_bundle(local_store, bot, name="b", owner="alice", launcher=launcher)
    assert done.version.build_ok, done.version.build_log
    first = next(i for i, text in enumerate(calls) if "step-one" in text)
    last = next(i for i, text in enumerate(calls) if "step-two" in text)
    assert first < last, calls
    assert "step-two" not in calls[first]


def test_an_interrupted_build_leaves_no_process_cgroup_or_copy(
    tmp_path: Path, cache: Path, local_store: Store
) -> None:
    """Ctrl-C while the sandboxed build runs: the build is killed, its cgroup removed, and the submit
    takes its stored and staged copies with it."""
    from arena.sandbox.cgroups import PARENT, ROOT
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap cannot run here")

    def groups() -> set[str]:
        return (
            {p.name for p in (ROOT / "memory" / PARENT).glob("*build*")}
            if (ROOT / "memory" / PARENT).is_dir()
            else set()
        )

    before = groups()
    bot = _bundle(
        tmp_path / "b",
        'name = "b"\nrun = ["python3", "bot.py"]\nbuild = ["sh", "-c", "echo started; sleep 60"]\n',
    )

    def interrupt(text: str) -> None:
        if "started" in text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), watching_builds(interrupt):
        submit_bundle(local_store, bot, name="b", owner="alice", launcher="bwrap")
    assert groups() == before  # the build's cgroup is gone with it
    assert _left(local_store.bundles_dir) == []
    assert [n for n in _left(cache) if not n.startswith(".")] == []
