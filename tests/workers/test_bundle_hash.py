"""One hash of a bot's files (arena.bundlehash.tree_hash): the store names a version by it and the sandbox
keys the staged build copy by it, so the two agree; and its bytes are the ones stored versions were
named by, so an existing store (its rows and its copies' folders) stays readable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.bundlehash import tree_hash
from arena.sandbox.bundle import BundleError, load_bundle
from arena.store import Store
from arena.store.bundles import content_hash
from arena.workers.submit import submit_bundle

# content_hash of the tree below as the store computed it before the hash moved to arena.bundlehash
PINNED = "3f4bf55c02db73d59ee69a47c8208d471b6890caade96e4c723f14dde9172a9b"


def _tree(root: Path, build: bool = False) -> Path:
    (root / "src").mkdir(parents=True)
    toml = 'name = "pinned"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
    (root / "bot.toml").write_text(toml + ('build = ["sh", "-c", "echo built"]\n' if build else ""))
    (root / "bot.py").write_text('print("hi")\n')
    os.chmod(root / "bot.py", 0o755)
    (root / "src" / "u.py").write_text("1")
    (root / "lib").symlink_to("src")
    for skipped in (".git", "__pycache__"):  # left out of a submission, and of its hash
        (root / skipped).mkdir()
        (root / skipped / "x").write_text("x")
    return root


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(folder))
    return folder


def test_a_versions_hash_is_the_one_stored_versions_were_named_by(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "b")
    assert content_hash(tree) == tree_hash(tree) == PINNED
    (tree / "bot.py").chmod(0o644)  # the executable bit is content
    assert tree_hash(tree) != PINNED


def test_the_staged_copy_of_a_stored_version_is_keyed_by_its_content_hash(
    tmp_path: Path, cache: Path
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path / "home")
    try:
        done = submit_bundle(
            store, _tree(tmp_path / "b", build=True), name="pinned", owner="al", launcher="local"
        )
        digest = done.version.content_hash
        stored = Path(done.version.path)
        assert stored.name == digest == content_hash(tmp_path / "b")
        staged = load_bundle(stored)  # the sandbox's key for the copy the build ran in
        assert staged.path.parent == cache / f"d-{digest}"
    finally:
        store.close()


def test_the_sandbox_caps_a_folder_while_hashing_it(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "b", build=True)
    (tree / "data.bin").write_bytes(b"\0" * (2 * 1024 * 1024))
    with pytest.raises(BundleError, match=r"larger than 1 MiB; remove build outputs or data"):
        load_bundle(tree, max_bytes=1024 * 1024)
