"""The layers of docs/architecture.md, enforced: every `import arena.X` (lazy ones inside functions too) must
point down the table, and the sample bots reach the arena only through the SDK.

`MAY_IMPORT` is the table's "may import" column. A new package must be added here (the test fails on
one it does not know), and an import that points up fails with the file and line that makes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOTTOM = {"engine", "proto", "verdicts", "memo", "logs", "bundlehash", "extras", "limits", "metrics"}

MAY_IMPORT: dict[str, set[str]] = {
    "verdicts": set(),
    "memo": set(),
    "logs": set(),
    "bundlehash": set(),
    "extras": set(),  # the optional extras and the one line a missing one gives
    "limits": set(),  # the longest text a caller may set, field by field
    "metrics": {"verdicts"},  # the counters every layer bumps; the verdicts are a label's closed set
    "engine": set(),  # pure: the standard library only
    "proto": set(),
    "analysis": {"engine"},
    "sandbox": {"verdicts", "bundlehash", "limits"},
    "replay": BOTTOM,
    "store": BOTTOM,
    "access": BOTTOM | {"store"},
    "referee": BOTTOM | {"access"},
    "ladder": BOTTOM | {"store", "replay", "analysis"},
    "workers": BOTTOM | {"store", "referee", "sandbox", "replay", "ladder"},
    "service": BOTTOM | {"store", "access", "referee", "sandbox", "replay", "ladder", "workers", "analysis"},
    "sdk": {"proto", "engine", "analysis"},  # what a sandboxed bot may see
    # training environments on the engine (the single-agent one plays a bot through the referee's
    # messages), and datasets from the store's revealed records
    "env": BOTTOM | {"referee", "sdk", "store", "ladder", "replay", "sandbox"},
    "web": BOTTOM | {"store", "access", "replay", "ladder", "workers", "service", "analysis"},
    "bench": BOTTOM
    | {"analysis", "sandbox", "replay", "store", "access", "referee", "ladder", "workers", "service", "sdk"}
    | {"env"},
    "cli": BOTTOM
    | {"analysis", "sandbox", "replay", "store", "access", "referee", "ladder", "workers", "service"}
    | {"sdk", "web", "bench", "env"},
}


def _arena_imports(path: Path) -> list[tuple[int, str]]:
    """(line, first package under `arena`) for every absolute import of the arena in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "arena" else [f"arena.{a.name}" for a in node.names]
        else:
            continue
        found += [(node.lineno, n.split(".")[1]) for n in names if n.startswith("arena.")]
    return sorted(found)


def _package(path: Path) -> str:
    parts = path.relative_to(ROOT / "arena").parts
    return (
        parts[0].removesuffix(".py")
        if len(parts) > 1 or parts[0] in ("verdicts.py", "extras.py", "limits.py")
        else ""
    )


def test_every_import_points_down_the_layers() -> None:
    wrong, unknown = [], set()
    for path in sorted((ROOT / "arena").rglob("*.py")):
        package = _package(path)
        if not package:  # arena/__init__.py, arena/__main__.py
            continue
        if package not in MAY_IMPORT:
            unknown.add(package)
            continue
        for line, target in _arena_imports(path):
            if target != package and target not in MAY_IMPORT[package]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {package} imports arena.{target}")
    assert not unknown, (
        f"packages missing from the layer table (tests/test_layers.py, docs/architecture.md): {unknown}"
    )
    assert not wrong, "imports up the layers:\n" + "\n".join(wrong)


def test_the_layer_table_has_no_cycle() -> None:
    """Each package's allowed imports lie strictly below it: the table is a partial order."""
    state: dict[str, str] = {}

    def visit(package: str, trail: list[str]) -> None:
        assert state.get(package) != "open", "cycle: " + " -> ".join([*trail, package])
        if state.get(package) == "done":
            return
        state[package] = "open"
        for below in MAY_IMPORT[package]:
            visit(below, [*trail, package])
        state[package] = "done"

    for package in MAY_IMPORT:
        visit(package, [])


def test_sample_bots_see_only_the_sdk() -> None:
    wrong = []
    for path in sorted((ROOT / "sample_bots").rglob("*.py")):
        for line, target in _arena_imports(path):
            if target != "sdk":
                wrong.append(f"{path.relative_to(ROOT)}:{line}: imports arena.{target}")
    assert not wrong, "sample bots may import only arena.sdk:\n" + "\n".join(wrong)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The parser finds lazy and `from arena import x` imports, so the checks above can fail."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from arena.web import app\n    from arena import cli\nimport arena.engine.cards\n"
    )
    assert _arena_imports(probe) == [(2, "web"), (3, "cli"), (4, "engine")]
