"""Directory bundles: manifests, size caps, and staging of bundles that have a build step."""

from __future__ import annotations

import pytest
from sandbox_support import make_bundle

from arena.sandbox.bundle import BundleError, is_staged, load_bundle


def test_plain_directory_is_used_in_place(tmp_path):
    root = make_bundle(tmp_path / "plain", "print(1)\n")
    bundle = load_bundle(root)
    assert bundle.path == root.resolve() and not is_staged(bundle)


def test_bundle_with_build_is_staged_privately_once_per_content(tmp_path, private_bundle_cache):
    root = make_bundle(tmp_path / "b", "print(1)\n", 'build = ["make"]\n')
    first = load_bundle(root)
    assert is_staged(first) and first.path.parent.parent == private_bundle_cache
    assert first.source == root.resolve()
    assert load_bundle(root).path == first.path
    (root / "bot.py").write_text("print(2)\n")
    assert load_bundle(root).path != first.path


def test_size_cap_and_bad_manifests(tmp_path):
    root = make_bundle(tmp_path / "big", "x = 1\n")
    (root / "data.bin").write_bytes(b"\0" * (2 * 1024 * 1024))
    with pytest.raises(BundleError, match="larger than 1 MiB"):
        load_bundle(root, max_bytes=1024 * 1024)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bot.toml").write_text('run = "python3 bot.py"\n')
    with pytest.raises(BundleError, match="`run` must be a non-empty list"):
        load_bundle(bad)
    (bad / "bot.toml").write_text("run = [\n")
    with pytest.raises(BundleError, match="not valid TOML"):
        load_bundle(bad)
