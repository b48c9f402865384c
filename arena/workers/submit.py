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


def submit_bundle(store: Store, path: str | Path, *, name: str, owner: str, launcher: str = "local") -> Submitted:
    """Register the bundle at `path` (a directory) as a new version of bot `name`."""
    from arena.workers.execute import make_launcher

    source = load_bundle(path)  # raises BundleError naming the problem
    digest = content_hash(source.path)
    stored = store_copy(source.path, store.bundles_dir, digest)
    bundle = load_bundle(stored)
    ok, log = True, ""
    if bundle.build and not (stored / ".arena-built").exists():
        ok, log = make_launcher(launcher).build(bundle, Limits())
        if ok:
            (stored / ".arena-built").write_text("ok\n")
    return store.add_version(name, owner, content_hash=digest, path=str(stored), language=bundle.language,
                             protocol=bundle.protocol, build_ok=ok, build_log=log)
