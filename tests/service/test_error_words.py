"""Errors name what a person types (`arena season create`), never the gRPC method behind it
(`CreateSeason`): every message raised to a caller, in the service, the CLI, the web and access
layers, is read here from the source, and a refused call is checked over a real server."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from arena.service.core import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos" / "elfern" / "arena" / "v1"
# a bot's `Play` is also an English word; it names no command a person runs
RPCS = sorted(
    {m for p in PROTOS.glob("*.proto") for m in re.findall(r"\brpc (\w+)", p.read_text())} - {"Play"}
)
RAISED = ("arena/service", "arena/cli", "arena/web", "arena/access")


def _texts(node: ast.AST) -> list[str]:
    """The string parts of an expression (f-string pieces included)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def raised_messages() -> list[tuple[str, int, str]]:
    """(file, line, text) of every string in a `raise X(...)` under RAISED."""
    out = []
    for folder in RAISED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "proto" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    out += [(str(path.relative_to(ROOT)), node.lineno, t) for t in _texts(node.exc)]
    return out


def test_no_raised_message_names_a_grpc_method() -> None:
    pattern = re.compile(r"\b(" + "|".join(RPCS) + r")\b")
    found = [(f, line, t) for f, line, t in raised_messages() if pattern.search(t)]
    assert len(RPCS) > 20 and len(raised_messages()) > 300  # the scan reads what it should
    assert found == []


def test_every_admin_call_has_words() -> None:
    assert set(COMMANDS) <= set(RPCS)
    assert not any(re.search(r"\b[A-Z][a-z]+[A-Z]\w+\b", words) for words in COMMANDS.values())
