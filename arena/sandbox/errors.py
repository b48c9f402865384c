"""The error every bundle check raises (archive.py, links.py, bundle.py share it)."""

from __future__ import annotations


class BundleError(ValueError):
    """A bundle that cannot be used; the message names the file and the fix."""
