"""docs/security.md's "Resources a caller can spend" (issue #31) names, for every resource, its bounds,
what a caller over them gets and the tests that prove it: each test it names must exist, in the file
it names, so that a renamed or removed test cannot leave a row pointing at nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["resource", "per-owner bound", "per-address bound (anonymous)", "global bound"]
COLUMNS += ["over it, the caller gets", "tested by"]


def resource_rows() -> list[list[str]]:
    lines = (ROOT / "docs" / "security.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Resources a caller can spend")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("#"))
    table = [line for line in lines[start:end] if line.startswith("| ")]
    assert [c.strip() for c in table[0].strip("|").split(" | ")] == COLUMNS
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in table[1:]]


def test_every_resource_row_fills_its_columns_and_names_tests_that_exist() -> None:
    rows = resource_rows()
    assert len(rows) >= 20
    wrong = []
    for cells in rows:
        name = cells[0][:60]
        if len(cells) != len(COLUMNS) or not all(cells):
            wrong.append(f"{name}: {len(cells)} cells, some empty")
            continue
        tested = cells[-1]
        if "tests/" not in tested:
            wrong.append(f"{name}: names no test file")
        current: Path | None = None
        for match in re.finditer(r"(tests/[\w/]+\.py)|`(test_\w+)`", tested):
            if match.group(1):
                current = ROOT / match.group(1)
                if not current.is_file():
                    wrong.append(f"{name}: {match.group(1)} does not exist")
                    current = None
            elif current is not None and not re.search(rf"def {match.group(2)}\b", current.read_text()):
                wrong.append(f"{name}: {current.relative_to(ROOT)} has no {match.group(2)}")
    assert not wrong, wrong


def test_the_play_streams_row_is_there() -> None:
    assert any(cells[0].startswith("bots' `Play` streams not yet joined") for cells in resource_rows())
