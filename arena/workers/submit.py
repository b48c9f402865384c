"""Submitting a bot: validate the bundle, store a content-addressed copy, build it, register the version.

The build runs on the stored copy (so what is built is exactly what will play) and its log is kept
for the bot's owner. A failed build is registered too (the owner sees why) but never enters a season.
"""

from __future__ import annotations

from pathlib import Path

from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import Limits
from arena.store import Store, Submitted
from arena.store.bundles import content_hash, store_copy


def submit_bundle(
    store: Store, path: str | Path, *, name: str, owner: str, launcher: str = "bwrap"
) -> Submitted:
    """Register the bundle at `path` (a directory or an archive) as a new version of bot `name`."""
    from arena.workers.execute import make_launcher

    source = load_bundle(path)  # raises BundleError naming the problem; unpacks archives
    # hash what the author gave (a directory) or the unpacked archive, never a built copy
    files = source.source if source.source is not None and source.source.is_dir() else source.path
    digest = content_hash(files)
    stored = store_copy(files, store.bundles_dir, digest)
    bundle = load_bundle(stored)
    ok, log = make_launcher(launcher).build(bundle, Limits()) if bundle.build else (True, "")
    return store.add_version(
        name,
        owner,
        content_hash=digest,
        path=str(stored),
        language=bundle.language,
        protocol=bundle.protocol,
        build_ok=ok,
        build_log=log,
    )
