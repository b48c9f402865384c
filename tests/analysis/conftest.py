"""The analysis tests run against the compiled core: `make setup` builds it; a checkout that was not
set up gets it built here (gcc is part of the setup's packages)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def compiled_core() -> None:
    from arena.analysis.build import ensure_built

    ensure_built()
