"""arena.analysis sits just above the engine: it may import only arena.engine (and itself)."""

from __future__ import annotations

import ast
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[2] / "arena" / "analysis"


def test_analysis_imports_only_the_engine() -> None:
    for path in sorted(ANALYSIS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.startswith("arena"):
                    assert name.startswith(("arena.engine", "arena.analysis")), f"{path.name} imports {name}"
