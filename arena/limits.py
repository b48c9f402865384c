"""The longest text a caller may set, field by field: one table for the manifest parser, the API's
request checks (gRPC and HTTP), the store's column types and the database's CHECK constraints.

Without these, one 5,000,000-character `language` in a `bot.toml` was stored (SQLite does not enforce
`String(32)`) and then made every `ListBots` reply too big for gRPC's 4 MiB. Lengths count
characters (Python's `len`, SQL's `length()`), as the database stores them. docs/security.md has the
table. This module is at the bottom of the layers: the sandbox (manifests) and the store (columns)
both read it and neither may import the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """`most` characters for the text called `field` (the name an error gives it)."""

    field: str
    most: int

    def check(self, value: str, field: str | None = None) -> str:
        """`value` unchanged, or FieldTooLong naming the field, its maximum and the length given."""
        if len(value) > self.most:
            raise FieldTooLong(field or self.field, self.most, len(value))
        return value


class FieldTooLong(ValueError):
    """A text over its maximum; the message names the field, the maximum and the length given."""

    def __init__(self, field: str, most: int, given: int) -> None:
        self.field, self.most, self.given = field, most, given
        super().__init__(f"{field} is {given:,} characters long; at most {most:,} are allowed: shorten it")


# ---- names -----------------------------------------------------------------------------------------
NAME = Limit("name", 64)  # bots, owners, seasons (the name rule, `NAME_RE`, says 1-64 too)
# ---- the bot.toml manifest (arena/sandbox/bundle.py) --------------------------------------------
LANGUAGE = Limit("language", 32)
PROTOCOL = Limit("protocol", 16)
VERSION = Limit("version", 64)
COMMAND_ARG = Limit("an argument of run/build", 1024)  # one string of `run = [...]` or `build = [...]`
COMMAND_ARGS = 64  # strings in `run` or `build`
# ---- what the organiser writes -------------------------------------------------------------------
REASON = Limit("reason", 500)  # a suspension's reason, as the organiser gives it
SUSPENSION_REASON = Limit("suspension_reason", 1000)  # as stored: the arena's words around `REASON`
RULE = Limit("rules", 64)  # one "key=value" rules option
RULES = 50  # rules options in one request
ANCHORS = 50  # anchored bots of a season
# ---- any other text of a request -----------------------------------------------------------------
TEXT = Limit("text", 1024)  # a request's string field that no row below names
FORMAT = Limit("format", 16)
KIND = Limit("kind", 16)  # a match's kind, a match or season status, a verdict's name
STATUS = Limit("status", 16)
VERDICT = Limit("verdict", 32)
MATCH_ID = Limit("match_id", 64)  # a standalone referee's match id
PAGE_TOKEN = Limit("page_token", 512)
# ---- columns the arena writes itself, bounded all the same --------------------------------------
HASH = Limit("content_hash", 64)  # SHA-256 hex
TOKEN_PREFIX = Limit("token_prefix", 16)
NOTICE_KIND = Limit("kind", 32)
SALT = Limit("salt", 32)
LEASE_OWNER = Limit("lease_owner", 128)

# ---- replies: a list call's page, bounded by construction -------------------------------------------
#: Bots in one `ListBots` page, and the versions each `BotInfo` carries (its newest; `version_count`
#: says how many it has). The largest `BotInfo` these allow, in protobuf bytes: name and owner 64 + 2
#: each (ASCII: the name rule), state 12 + 2, suspension_reason 1,000 characters of up to 4 bytes
#: + 3, 20 versions of at most 6 (number) + 66 (hash) + 130 (language, 32 characters of up to 4
#: bytes) + 18 (protocol) + 2 (build_ok) + 22 (created_at) + 3 (framing) = 247 bytes, version_count 6,
#: and 3 bytes of framing: 66 + 66 + 14 + 4,003 + 20 x 247 + 6 + 3 = 9,098 bytes. A page of 100 is
#: at most 909,800 bytes plus its page token (66): under 1 MB, a quarter of gRPC's 4 MiB.
#: tests/security/test_abuse_inputs.py builds that page in a real store and reads it through the server.
BOTS_PAGE = 100
#: Seasons in one `ListSeasons` page and owners in one `ListOwners` page (each row is small and
#: bounded by the text maxima above, so a page stays far under gRPC's limit however many there are).
SEASONS_PAGE = 100
OWNERS_PAGE = 100
VERSIONS_SHOWN = 20
GRPC_MESSAGE = 4 * 1024 * 1024  # gRPC's default limit on a message, each way
#: A `GetBotLogs` reply: the newest `VERSIONS_SHOWN` build logs, each its first `BUILD_LOG_SHOWN`
#: bytes (the capture keeps 256 KiB; errors come first): at most 20 x 64 KiB = 1.25 MiB; then match
#: logs newest first, each its last `LOG_SHOWN` bytes (a bot may write 2,000 Log lines of 1 KiB and
#: 64 KiB of output in a match), while the whole reply stays within `LOGS_REPLY`; the others are
#: counted (`left_out`) and can be asked for one match at a time. 1.25 + 1 MiB < 3 MiB, so one match
#: log always fits.
BUILD_LOG_SHOWN = 64 * 1024
LOG_SHOWN = 1024 * 1024
LOGS_REPLY = 3 * 1024 * 1024

#: Every bounded column of the store: (table, column) -> its Limit. The models' `String(N)` and the
#: CHECK constraints of migration 0008 are these figures (tests/security/test_abuse_inputs.py).
COLUMNS: dict[tuple[str, str], Limit] = {
    ("bots", "name"): NAME,
    ("bots", "owner"): NAME,
    ("bots", "suspension_reason"): SUSPENSION_REASON,
    ("bot_versions", "content_hash"): HASH,
    ("bot_versions", "language"): LANGUAGE,
    ("bot_versions", "protocol"): PROTOCOL,
    ("owners", "name"): NAME,
    ("owners", "token_hash"): HASH,
    ("owners", "token_prefix"): TOKEN_PREFIX,
    ("notices", "kind"): NOTICE_KIND,
    ("seasons", "name"): NAME,
    ("seasons", "status"): STATUS,
    ("matches", "kind"): KIND,
    ("matches", "requested_by"): NAME,
    ("matches", "salt"): SALT,
    ("matches", "commitment"): HASH,
    ("matches", "status"): STATUS,
    ("matches", "lease_owner"): LEASE_OWNER,
}

#: The string fields of API requests, by field name (gRPC messages and their HTTP forms alike); a
#: field not named here takes `TEXT`. Repeated fields bound each item; their counts are bounded
#: where the operation reads them (`RULES`, `ANCHORS`).
REQUEST_FIELDS: dict[str, Limit] = {
    "name": NAME,
    "owner": NAME,
    "bot": NAME,
    "my_bot": NAME,
    "opponent": NAME,
    "season": NAME,
    "anchors": Limit("anchors", NAME.most + 11),  # NAME@VERSION
    "reason": REASON,
    "worker": LEASE_OWNER,
    "rules": RULE,
    "format": FORMAT,
    "kind": KIND,
    "status": STATUS,
    "verdict": VERDICT,
    "step": STATUS,
    "match_id": MATCH_ID,
    "page_token": PAGE_TOKEN,
}


def request_limit(field: str) -> Limit:
    """The Limit of a request's string field called `field` (`TEXT` for one not in the table)."""
    found = REQUEST_FIELDS.get(field)
    return found if found is not None else Limit(field, TEXT.most)
