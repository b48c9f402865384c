"""The sample bots' strategy modules live in their bundle folders (a bundle imports its siblings),
so the tests put those folders on sys.path. Their module names are unique across the bundles.

`sandbox` is the bwrap launcher with a bundle cache private to this session: builds really run,
once per session (test_languages.py and test_repro.py share the C++ and Node builds)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

BOTS = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
SAMPLES = BOTS.parent
# A clean copy leaves out what a build or a local install made (gitignored), as a fresh checkout.
BUILD_OUTPUTS = shutil.ignore_patterns(
    "build", "node_modules", "bot", "bot.exe", "classes", "dist", "target", "__pycache__"
)
for bundle in ("tactician", "greedy", "pimc", "ismcts"):
    path = str(BOTS / bundle)
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(scope="session")
def bundle_cache(tmp_path_factory) -> Path:
    """One fresh bundle cache for the session's sandboxed matches: each sample builds once."""
    return tmp_path_factory.mktemp("bundle-cache")


@pytest.fixture(scope="module")
def sandbox(bundle_cache):
    """The bwrap launcher, using the session's bundle cache (ARENA_BUNDLE_CACHE is set only while
    the module runs, so suites elsewhere keep theirs)."""
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

    mp = pytest.MonkeyPatch()
    mp.setenv("ARENA_BUNDLE_CACHE", str(bundle_cache))
    try:
        yield BwrapLauncher()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    finally:
        mp.undo()


@pytest.fixture(scope="session")
def clean_copy(tmp_path_factory):
    """clean_copy("node") -> a copy of sample_bots/node without build outputs, made once a session
    (the same bytes every time, so the session's bundle cache builds each sample once)."""
    root = tmp_path_factory.mktemp("clean-bundles")
    made: dict[str, Path] = {}

    def copy(bundle: str) -> Path:
        if bundle not in made:
            dest = root / bundle.replace("/", "-")
            shutil.copytree(SAMPLES / bundle, dest, ignore=BUILD_OUTPUTS)
            dest.chmod(0o755)
            made[bundle] = dest
        return made[bundle]

    return copy
