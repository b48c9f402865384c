"""Re-simulate elfern/1 records (`walk.Walk`) and report the first thing that does not hold.

Numbering in messages is 1-based: `deal 2, play 5` is the fifth card of the second deal. A binary
replay (arena.proto.codec) is read too: it is exported to elfern/1 first. A record that carries a deck
commitment must match it (docs/shuffle.md), which proves its decks were fixed before play.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine import (
    CardError,
    DeckError,
    IllegalMove,
    Match,
    Rules,
    RulesError,
    StateError,
    card_code,
    check_commitment,
    check_deck,
    deal_deck,
    deck_commitment,
    parse_card,
)
from arena.proto.codec import MAGIC, RecordError, decode_record
from arena.replay.json_record import DEAL_KEYS, FORMAT, RecordFileError, load
from arena.replay.walk import DealEnd, DealSource, Walk

NO_COMMITMENT = "no deck commitment to check"  # the note on an arena record that predates commitments
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SALT = re.compile(r"[0-9a-f]{32}")


class RecordFailure(Exception):
    """The first problem in a record: where (1-based deal and play, if any) and why."""

    def __init__(self, reason: str, deal: int | None = None, play: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.deal = deal
        self.play = play

    def where(self) -> str:
        if self.deal is None:
            return ""
        return f" deal {self.deal}" + (f", play {self.play}" if self.play is not None else "")

    def __str__(self) -> str:
        return f"FAIL{self.where()}: {self.reason}"


@dataclass
class Verified:
    """What a record re-simulates to."""

    match: Match
    seats: list[str]
    verdict: Any  # the record's early-end verdict, if any
    note: str = ""  # something that could not be checked, said after `ok`


def replay_json(record: Any) -> Verified:
    """Re-simulate a parsed elfern/1 record; raises RecordFailure at the first discrepancy."""
    if not isinstance(record, dict):
        raise RecordFailure(f"an elfern/1 record is a JSON object, not {_kind(record)}")
    if record.get("format") != FORMAT:
        if "format" not in record:
            raise RecordFailure(f'missing "format": "{FORMAT}"')
        raise RecordFailure(f"format {record['format']!r} is not supported; this arena reads {FORMAT}")
    rules_data = record.get("rules", {})
    if not isinstance(rules_data, dict):
        raise RecordFailure(f'"rules" must be an object of options, not {_kind(rules_data)}')
    try:
        rules = Rules.from_dict(rules_data)
    except (RulesError, TypeError) as exc:
        raise RecordFailure(str(exc)) from None
    seats = record.get("seats", ["seat 0", "seat 1"])
    if not (isinstance(seats, list) and len(seats) == 2 and all(isinstance(s, str) for s in seats)):
        raise RecordFailure('"seats" must be a list of two names, e.g. ["alice", "bob"]')
    seed = record.get("seed")
    if seed is not None and not (type(seed) is int and 0 <= seed < 2**64):
        raise RecordFailure(f'"seed" must be an integer from 0 to 2^64-1, not {seed!r}')
    deals = record.get("deals")
    if not isinstance(deals, list):
        raise RecordFailure('"deals" must be a list of deals' if "deals" in record else 'missing "deals"')
    verdict = record.get("verdict")
    if verdict is not None and not _valid_verdict(verdict):
        raise RecordFailure('"verdict" must be a status name or an object with a "status" string')
    note = ""
    if "commitment" in record:
        _check_commitment(record, seed)
    elif seed is not None and "match_id" in record:
        note = NO_COMMITMENT

    m = Match(rules, seed if seed is not None else 0)
    walk = Walk(m, _sources(m, deals, seed))
    try:
        for step in walk:
            if isinstance(step, DealEnd):
                partial_ok = verdict is not None and step.number == len(deals)
                _check_deal_end(m, step.number, deals[step.number - 1], partial_ok)
    except IllegalMove as exc:
        deal = m.deal
        assert deal is not None  # the card was refused inside a deal
        raise RecordFailure(
            f"seat {deal.to_move} cannot play it: {exc.reason}", walk.deal, walk.play
        ) from None
    except (DeckError, StateError) as exc:
        if walk.play is not None:  # only a deal's start refuses a deck or a dealer; a play never gets here
            raise
        raise RecordFailure(
            f"wrong dealer: {exc}" if isinstance(exc, StateError) else str(exc), walk.deal
        ) from None

    if verdict is None and not m.over:
        raise RecordFailure(_unfinished(m))
    _expect(None, "lines (the match totals)", record.get("lines", _MISSING), list(m.lines))
    if verdict is None:
        _expect(None, "winner (of the match)", record.get("winner", _MISSING), m.winner)
    else:
        winner = record.get("winner")
        if winner not in (0, 1, None) or type(winner) is bool:
            raise RecordFailure(f'"winner" must be 0, 1 or null, not {winner!r}')
    return Verified(m, seats, verdict, note)


def verify_file(path: str | Path) -> tuple[bool, str]:
    """One line for `arena replay verify`: `FILE: ok`, `FILE: ok (a note)` or `FILE: FAIL ...`."""
    try:
        done = replay_json(_load_any(path))
    except RecordFileError as exc:
        return False, f"{path}: FAIL: {exc}"
    except RecordFailure as exc:
        return False, f"{path}: {exc}"
    return True, f"{path}: ok" + (f" ({done.note})" if done.note else "")


def _load_any(path: str | Path) -> Any:
    """elfern/1 JSON as parsed, or a binary replay exported to it."""
    try:
        with open(path, "rb") as f:
            binary = f.read(len(MAGIC)) == MAGIC
    except OSError:
        binary = False  # load() names the problem
    if not binary:
        return load(path)
    from arena.replay.export import record_to_json

    try:
        record = decode_record(Path(path).read_bytes())
    except (RecordError, OSError) as exc:
        raise RecordFileError(str(exc)) from None
    try:
        return record_to_json(record)
    except (CardError, DeckError, IllegalMove, RulesError, StateError, ValueError) as exc:
        raise RecordFailure(f"the binary record does not re-simulate: {exc}") from None


def _check_commitment(record: dict[str, Any], seed: int | None) -> None:
    """The deck commitment must be the SHA-256 of this seed, match id and salt (docs/shuffle.md)."""
    commitment, salt, ident = record.get("commitment"), record.get("salt"), record.get("match_id")
    if not (isinstance(commitment, str) and _SHA256.fullmatch(commitment)):
        raise RecordFailure(
            f'"commitment" must be 64 lower-case hex digits (a SHA-256), not {_short(commitment)}'
        )
    if seed is None:
        raise RecordFailure('a "commitment" needs the "seed" it commits to')
    if not (isinstance(salt, str) and _SALT.fullmatch(salt)):
        raise RecordFailure(f'"salt" must be 32 lower-case hex digits (16 bytes), not {_short(salt)}')
    if not (isinstance(ident, str) and 0 < len(ident.encode()) <= 0xFFFF):
        raise RecordFailure(f'a "commitment" needs the "match_id" it commits to, not {_short(ident)}')
    if not check_commitment(commitment, seed, ident, bytes.fromhex(salt)):
        actual = deck_commitment(seed, ident, bytes.fromhex(salt))
        raise RecordFailure(
            f"the deck commitment does not match: the seed, match_id and salt give {actual}, "
            f"the record says {commitment} (docs/shuffle.md)"
        )


def _short(value: Any) -> str:
    """A value for an error line, never more than 80 characters of it."""
    text = "nothing" if value is None else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- one deal ------------------------------------------------------------------------------------------
_MISSING = object()


def _sources(m: Match, deals: list[Any], seed: int | None) -> Iterator[DealSource]:
    """The record's deals for the walk, each checked as the walk reaches it (so errors come in play order)."""
    for n, entry in enumerate(deals, start=1):
        deck, dealer = _deal_entry(m, n, entry, seed)
        yield deck, dealer, _plays(m, n, entry)


def _deal_entry(m: Match, n: int, entry: Any, seed: int | None) -> tuple[list[int], int]:
    """Deal n's deck and dealer, once they are shown to be the ones the rules and the seed give."""
    if m.over:
        who = "a draw" if m.winner is None else f"seat {m.winner} won"
        raise RecordFailure(
            f"recorded after the match ended: it ended after deal {n - 1} ({who}, lines {m.lines[0]}-{m.lines[1]})",
            n,
        )
    if not isinstance(entry, dict):
        raise RecordFailure(f"a deal is a JSON object with {', '.join(DEAL_KEYS)}; got {_kind(entry)}", n)
    for key in ("dealer", "deck", "plays"):
        if key not in entry:
            raise RecordFailure(f'missing "{key}"', n)
    dealer = entry["dealer"]
    if type(dealer) is not int or dealer not in (0, 1):
        raise RecordFailure(f'"dealer" must be seat 0 or 1, not {dealer!r}', n)
    deck = _cards(entry["deck"], "deck", n)
    try:
        check_deck(deck)
    except DeckError as exc:
        raise RecordFailure(str(exc), n) from None
    index = n - 1
    if seed is not None:
        seeded = deal_deck(seed, index)
        if deck != seeded:
            at = next(i for i in range(32) if deck[i] != seeded[i])
            raise RecordFailure(
                f"the deck is not the shuffle of seed {seed} for this deal: card {at + 1} is "
                f"{card_code(deck[at])}, the seeded shuffle has {card_code(seeded[at])} (docs/shuffle.md)",
                n,
            )
        if not m.dealer_is_fixed and dealer != m.dealer:
            raise RecordFailure(
                f"seat {dealer} deals, but with seed {seed} the draw ({m.dealer_reason}) makes seat {m.dealer} deal",
                n,
            )
    return deck, dealer


def _plays(m: Match, n: int, entry: dict[str, Any]) -> Iterator[int]:
    """Deal n's cards, each a card code, and none after the deal's 32nd."""
    plays = entry["plays"]
    if not isinstance(plays, list):
        raise RecordFailure(f'"plays" must be a list of card codes, not {_kind(plays)}', n)
    for k, code in enumerate(plays, start=1):
        try:
            card = parse_card(code) if isinstance(code, str) else _bad_card(code)
        except CardError as exc:
            raise RecordFailure(str(exc), n, k) from None
        deal = m.deal
        assert deal is not None  # the walk started the deal before it asks for a card
        if deal.done:
            raise RecordFailure(
                f"too many plays: the deal ended with play 32, but {len(plays)} are recorded", n, k
            )
        yield card


def _check_deal_end(m: Match, n: int, entry: dict[str, Any], partial_ok: bool) -> None:
    """A deal the plays finished has the recorded honours, winner and lines; one they did not is
    the last of a match a verdict ended."""
    deal = m.deal
    assert deal is not None
    if not deal.done:
        if partial_ok:
            for key in ("honours", "winner", "lines"):
                if entry.get(key) is not None:
                    raise RecordFailure(f'an unfinished deal has no "{key}" (write null or leave it out)', n)
            return
        raise RecordFailure(
            f"too few plays: {len(entry['plays'])} recorded, a deal has 32 (seat {deal.to_move} is to play next)",
            n,
            len(entry["plays"]) + 1,
        )
    out = deal.outcome
    assert out is not None
    _expect(n, "honours", entry.get("honours", _MISSING), list(out.honours))
    _expect(n, "winner", entry.get("winner", _MISSING), out.winner)
    _expect(n, "lines", entry.get("lines", _MISSING), list(out.lines))


def _expect(n: int | None, key: str, recorded: Any, actual: Any) -> None:
    name = key.split(" ")[0]
    if recorded is _MISSING:
        raise RecordFailure(f'missing "{name}": the plays give {_json(actual)}', n)
    if recorded != actual or type(recorded) is bool:
        raise RecordFailure(f"{key} recorded as {_json(recorded)}, but the plays give {_json(actual)}", n)


def _cards(value: Any, what: str, n: int) -> list[int]:
    if not isinstance(value, list):
        raise RecordFailure(f'"{what}" must be a list of card codes, not {_kind(value)}', n)
    out = []
    for i, code in enumerate(value, start=1):
        try:
            out.append(parse_card(code) if isinstance(code, str) else _bad_card(code))
        except CardError as exc:
            raise RecordFailure(f"{what} card {i}: {exc}", n) from None
    return out


def _bad_card(value: Any) -> int:
    raise CardError(f"{value!r} is not a card: write a code like 'TS' (rank A K Q J T 9 8 7, suit C D H S)")


def _unfinished(m: Match) -> str:
    n = len(m.deals)
    if m.rules.max_deals is not None:
        return f"the match is not over: {n} of max_deals={m.rules.max_deals} deals are recorded"
    return (
        f"the match is not over after {n} deal(s): lines {m.lines[0]}-{m.lines[1]}, it ends at "
        f'{4 * m.rules.flags} lines (flags={m.rules.flags}); add the missing deals or a "verdict"'
    )


def _valid_verdict(verdict: Any) -> bool:
    if isinstance(verdict, str):
        return bool(verdict)
    return isinstance(verdict, dict) and isinstance(verdict.get("status"), str) and bool(verdict["status"])


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)
