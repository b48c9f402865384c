"""elfern/1: match records as JSON that people can read and write by hand (docs/records.md).

This module writes and reads the files; `arena.replay.verify` re-simulates them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.engine import Match, card_code, deal_deck
from arena.engine.match import DealSummary

FORMAT = "elfern/1"
DEAL_KEYS = ("dealer", "deck", "plays", "honours", "winner", "lines")


class RecordFileError(ValueError):
    """A file that cannot be read or is not JSON; the message is one line naming the problem."""


def deal_to_json(summary: DealSummary) -> dict[str, Any]:
    """One finished deal as an elfern/1 deal object."""
    return {
        "dealer": summary.dealer,
        "deck": [card_code(c) for c in summary.deck],
        "plays": [card_code(c) for c in summary.plays],
        "honours": list(summary.honours),
        "winner": summary.winner,
        "lines": list(summary.lines),
    }


def match_to_json(match: Match, seats: tuple[str, str] | list[str] = ("seat 0", "seat 1")) -> dict[str, Any]:
    """A match (finished or not) as an elfern/1 record. Only finished deals are written.

    `seed` is included when every deal used the seeded deck and the seeded dealer draws, so that
    `arena replay verify` can check the shuffles too.
    """
    record: dict[str, Any] = {
        "format": FORMAT,
        "rules": match.rules.to_dict(),
        "seats": list(seats),
    }
    if _seeded(match):
        record["seed"] = match.seed
    record["deals"] = [deal_to_json(s) for s in match.deals]
    record["lines"] = list(match.lines)
    record["winner"] = match.winner
    return record


def _seeded(match: Match) -> bool:
    for s in match.deals:
        if s.deck != tuple(deal_deck(match.seed, s.index)):
            return False
        if s.dealer_draws is None and (s.index == 0 or _free_dealer_after(match, s.index - 1)):
            return False  # a dealer the draw would have picked was given instead
    return True


def _free_dealer_after(match: Match, index: int) -> bool:
    """True when the dealer of deal index + 1 was up to a draw (a Ständer with dealer_after_tie=draw)."""
    return match.deals[index].winner is None and match.rules.dealer_after_tie == "draw"


def dumps(record: dict[str, Any]) -> str:
    """Readable JSON: one key per line at the top, one line per deck and per play list."""
    top = []
    for key, value in record.items():
        if key == "deals" and isinstance(value, list) and value:
            deals = ",\n".join(_dump_deal(d) for d in value)
            top.append(f'"deals": [\n{deals}]')
        else:
            top.append(f"{json.dumps(key)}: {_one_line(value)}")
    return "{" + ",\n ".join(top) + "}\n"


def _dump_deal(deal: Any) -> str:
    if not isinstance(deal, dict):
        return "  " + _one_line(deal)
    lines: list[str] = []
    tail: list[str] = []
    for key, value in deal.items():
        item = f"{json.dumps(key)}: {_one_line(value)}"
        (tail if key in ("honours", "winner", "lines") else lines).append(item)
    if tail:
        lines.append(", ".join(tail))
    return "  {" + ",\n   ".join(lines) + "}"


def _one_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def save(record: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(dumps(record), encoding="utf-8")


def load(path: str | Path) -> Any:
    """Parse a file as JSON; RecordFileError (one line) for unreadable files and bad JSON."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise RecordFileError("cannot read: it is a directory") from None
    except OSError as exc:
        raise RecordFileError(f"cannot read: {exc.strerror or exc}") from None
    return loads(data)


def loads(data: bytes | str) -> Any:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise RecordFileError(f"not a text file (invalid UTF-8 at byte {exc.start})") from None
    if not text.strip():
        raise RecordFileError("the file is empty; an elfern/1 record is a JSON object")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordFileError(f"not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise RecordFileError("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits (Python's own cap)
        raise RecordFileError(f"not a usable JSON record: {str(exc).split(';')[0][:160]}") from None
