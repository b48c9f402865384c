"""Submitting a bot: validate the bundle, store a content-addressed copy, build it, register the version.

The build runs on the stored copy (so what is built is exactly what will play) and its log is kept
for the bot's owner. A failed build is registered too (the owner sees why) but never enters a season.
A submit that is refused (a bad manifest, a `run` program that does not exist, a name the store
refuses) or interrupted leaves nothing behind: the stored copy and the build's staged copy it made
are removed again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from arena.sandbox.bundle import Bundle, BundleError, is_staged, load_bundle, missing_program
from arena.sandbox.launcher import Limits
from arena.store import Store, Submitted
from arena.store.bundles import content_hash, store_copy
from arena.store.repo import check_name


def submit_bundle(
    store: Store,
    path: str | Path,
    *,
    name: str,
    owner: str,
    launcher: str = "bwrap",
    accept: Callable[[str, Path], None] | None = None,
) -> Submitted:
    """Register the bundle at `path` (a directory or an archive) as a new version of bot `name`.

    `accept(digest, stored)`, when given, is called once the build is over and before the version is
    registered (the server's disk quota: `arena.service.quota`); raising refuses the submit, which
    then leaves nothing behind, as any refusal."""
    from arena.workers.execute import make_launcher

    check_name(name, "bot name")  # before any file is copied: a refused name leaves nothing
    check_name(owner, "owner")
    source = load_bundle(path)  # raises BundleError naming the problem; unpacks archives
    # hash what the author gave (a directory) or the unpacked archive, never a built copy
    files = source.source if source.source is not None and source.source.is_dir() else source.path
    digest = content_hash(files)
    new_copy = not (store.bundles_dir / digest).is_dir()
    stored = store_copy(files, store.bundles_dir, digest)
    bundle: Bundle | None = None
    try:
        bundle = load_bundle(stored)
        ok, log = make_launcher(launcher).build(bundle, Limits()) if bundle.build else (True, "")
        if ok:
            built = load_bundle(stored) if bundle.build else bundle  # the staged copy the build wrote
            why = missing_program(built, host_runtime=launcher != "docker")
            if why is not None:
                raise BundleError(f"{path}: {why}; fix `run` in bot.toml")
        if accept is not None:
            accept(digest, stored)
        submitted = store.add_version(
            name,
            owner,
            content_hash=digest,
            path=str(stored),
            language=bundle.language,
            protocol=bundle.protocol,
            build_ok=ok,
            build_log=log,
        )
    except BaseException:
        if new_copy:
            _discard(stored, bundle)
        raise
    if not ok and new_copy:  # registered (the owner reads why) but never played: no staged copy kept
        _discard(None, bundle)
    return submitted


def _discard(stored: Path | None, bundle: Bundle | None) -> None:
    """Remove what this submit made: the stored copy, and the build's staged copy in the cache
    (for a bundle with a build step, `load_bundle` of the stored copy returns that staged copy)."""
    if stored is not None:
        shutil.rmtree(stored, ignore_errors=True)
    if bundle is not None and is_staged(bundle):
        shutil.rmtree(bundle.path.parent, ignore_errors=True)
