"""Binary match record (replay.proto) -> elfern/1 JSON, via the engine and json_record's writer.

The record is re-simulated by `walk.Walk` (so the JSON is what the engine says, not a copy of recorded fields),
then written by `match_to_json`. A match ended early by a verdict gets the unfinished deal's plays
and a `verdict` object, which `arena replay verify` accepts (docs/records.md, "Early ends").
"""

from __future__ import annotations

from typing import Any

from arena.engine import Match, card_code
from arena.proto import replay_pb2
from arena.replay.json_record import match_to_json
from arena.replay.record import rules_of
from arena.replay.walk import DealEnd, Walk, record_deals


def record_to_json(record: replay_pb2.MatchRecord) -> dict[str, Any]:
    """The elfern/1 object of a binary record. Raises the engine's errors if it does not re-simulate."""
    m = Match(rules_of(record), record.seed)
    partial: dict[str, Any] | None = None
    for step in Walk(m, record_deals(record)):
        if isinstance(step, DealEnd) and not step.deal.done:
            deal = step.deal
            partial = {"dealer": deal.dealer, "deck": [card_code(c) for c in deal.deck],
                       "plays": [card_code(c) for c in deal.plays]}  # fmt: skip
    names = {p.seat: p.name for p in record.players}
    out = match_to_json(m, [names.get(0) or "seat 0", names.get(1) or "seat 1"])
    if partial is not None:
        out["deals"].append(partial)
    r = record.result
    out["match_id"] = record.match_id
    if record.commitment:  # the deck commitment and its salt, revealed now the match is over
        out["commitment"] = record.commitment
        out["salt"] = record.salt
    verdict = early_end(record)
    if verdict is not None:
        out["verdict"] = verdict
        out["winner"] = None if r.winner < 0 else r.winner
    return out


def early_end(record: replay_pb2.MatchRecord) -> dict[str, Any] | None:
    """The elfern/1 `verdict` object of a match that did not complete (None for one that did)."""
    r = record.result
    if not r.end_reason or r.end_reason == "COMPLETED":
        return None
    failed = [s for s, v in enumerate(r.verdicts) if v != "OK"]
    status = r.verdicts[failed[0]] if failed else r.end_reason
    verdict: dict[str, Any] = {
        "status": status,
        "verdicts": list(r.verdicts),
        # the public sentences only (older records appended the bot's output after a newline)
        "details": [line.split("\n")[0] for line in r.details],
        "end_reason": r.end_reason,
    }
    if len(failed) == 1:
        verdict["seat"] = failed[0]
    return verdict
