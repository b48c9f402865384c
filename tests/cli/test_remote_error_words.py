"""Over a real server, a refused or failed call's line names the command the user ran, never the
gRPC method behind it (tests/service/test_error_words.py reads every raised message)."""

from __future__ import annotations

import re

from remote_support import REPO, Server, one_line_error

PROTOS = REPO / "protos" / "elfern" / "arena" / "v1"
NAMES = re.compile(
    r"\b(" + "|".join(re.findall(r"\brpc (\w+)", (PROTOS / "arena.proto").read_text())) + r")\b"
)


def test_refusals_name_commands_not_calls(server: Server) -> None:
    alice = server.tokens["alice"]
    none = one_line_error(server.run("standings"), "NOT_FOUND", "creates one with `arena season create`")
    denied = one_line_error(
        server.run("season", "create", "s", token=alice), "PERMISSION_DENIED", "`arena season create` is for"
    )
    owners = one_line_error(server.run("owners", "list", token=alice), "`arena owners list` is for")
    for line in (none, denied, owners):
        assert not NAMES.search(line), line
