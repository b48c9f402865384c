"""What must stay hidden, and a scanner that finds it in any response body.

The test reads the store directly (as only the organiser could) and, for every match that is not yet
revealed (not done, or a match sharing its decks is not done), derives the secrets a spectator must
not learn: the seed in every common spelling, the salt, every deck (docs/shuffle.md, computed with
`arena.engine.deal_deck` independently of the code under test) and the two hands dealt from each.

A "revealed" match here is defined independently of `arena.ladder.visibility`: done, and every match
of the same season and pair (or with the same seed) done or failed.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import select

from arena.engine import card_code, deal_deck
from arena.engine.cards import parse_card
from arena.store import Store
from arena.store.models import Match

FINAL = ("done", "failed")
RUN = 10  # consecutive deck cards that count as a deck leak (chance of a false hit: ~1 in 10^14 per window)
DECKS_WITHOUT_LIMIT = 12  # decks to derive when the rules set no max_deals (matches rarely go longer)

_CODE = re.compile(r"[789TJQKA][CDHS]")
_LABEL = re.compile(r"([♣♦♥♠])(10|[789JQKA])")
_LABEL_SUITS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
_LOGGED_HAND = re.compile(rb"match m(\d+) deal \d+ hand ((?:[789TJQKA][CDHS] ?)+)")  # the marker bot's Log
_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


RECORD_MAGIC = b"ELFREC1\n"  # a binary match record: this magic, then zlib (arena/proto/codec.py)


def expand(body: bytes) -> bytes:
    """The body with every compressed payload in it appended, decompressed: a binary match record is
    zlib inside, so a secret in it is invisible to a plain search."""
    extra = []
    start = body.find(RECORD_MAGIC)
    while start != -1:
        try:
            extra.append(zlib.decompressobj().decompress(body[start + len(RECORD_MAGIC) :]))
        except zlib.error:
            pass
        start = body.find(RECORD_MAGIC, start + 1)
    at = body.find(b"\x1f\x8b")
    if at != -1:
        try:
            extra.append(gzip.decompress(body[at:]))
        except (OSError, EOFError, zlib.error):
            pass
    return b"\n".join([body, *extra])


@dataclass(frozen=True)
class MatchRow:
    id: int
    season_id: int | None
    pair: int | None
    status: str
    seed: int
    salt: str
    rules: tuple[str, ...]


@dataclass
class Snapshot:
    """The matches as the store holds them at one moment."""

    rows: dict[int, MatchRow]

    def twins(self, m: MatchRow) -> list[MatchRow]:
        """Every other match that deals the same decks: same season and pair, or the same seed."""
        return [
            o
            for o in self.rows.values()
            if o.id != m.id
            and (o.seed == m.seed or (m.pair is not None and (o.season_id, o.pair) == (m.season_id, m.pair)))
        ]

    def revealed(self, m: MatchRow) -> bool:
        return m.status == "done" and all(o.status in FINAL for o in self.twins(m))

    def state(self, m: MatchRow) -> str:
        """queued, running, embargoed (done, a twin unfinished), revealed, or failed."""
        if m.status == "done":
            return "revealed" if self.revealed(m) else "embargoed"
        return m.status

    def hidden(self) -> list[MatchRow]:
        return [m for m in self.rows.values() if m.status != "failed" and not self.revealed(m)]


def snapshot(store: Store) -> Snapshot:
    """One light query (the crawl takes one after every request)."""
    cols = (Match.id, Match.season_id, Match.pair, Match.status, Match.seed, Match.salt, Match.rules)
    with store.read() as s:
        rows = {
            r[0]: MatchRow(r[0], r[1], r[2], r[3], int(r[4]), r[5] or "", tuple(r[6] or ()))
            for r in s.execute(select(*cols))
        }
    return Snapshot(rows)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _deal_count(rules: Iterable[str]) -> int:
    for pair in rules:
        key, _, value = pair.partition("=")
        if key.strip() == "max_deals" and value.strip().isdigit():
            return int(value)
    return DECKS_WITHOUT_LIMIT


@dataclass(frozen=True)
class Secrets:
    """The secrets of one hidden match."""

    match_id: int
    strings: tuple[tuple[str, bytes], ...]  # (what, bytes that must not appear)
    runs: tuple[tuple[str, tuple[str, ...]], ...]  # (what, RUN consecutive deck cards)
    hands: tuple[tuple[str, frozenset[str], frozenset[str]], ...]  # (deal, non-dealer hand, dealer hand)


def secrets_of(m: MatchRow) -> Secrets:
    seed = m.seed & ((1 << 64) - 1)
    strings: list[tuple[str, bytes]] = []
    if len(str(seed)) >= 8:  # CSPRNG seeds are ~19 digits; a tiny seed would match by chance
        strings.append(("seed (decimal)", str(seed).encode()))
    for spelling in (f"{seed:x}", f"{seed:016x}", f"{seed:X}", f"{seed:016X}"):
        if len(spelling) >= 8:
            strings.append(("seed (hex)", spelling.encode()))
    strings.append(("seed (protobuf varint)", b"\x18" + _varint(seed)))  # MatchRecord.seed is field 3
    strings.append(("seed (8 bytes)", seed.to_bytes(8, "little")))
    strings.append(("seed (8 bytes)", seed.to_bytes(8, "big")))
    if len(m.salt) >= 16:
        strings.append(("salt", m.salt.lower().encode()))
        strings.append(("salt", m.salt.upper().encode()))
    runs: list[tuple[str, tuple[str, ...]]] = []
    hands: list[tuple[str, frozenset[str], frozenset[str]]] = []
    for k in range(_deal_count(m.rules)):
        deck = [card_code(c) for c in deal_deck(m.seed, k)]
        for i in range(len(deck) - RUN + 1):
            runs.append((f"deck of deal {k + 1}", tuple(deck[i : i + RUN])))
            runs.append((f"deck of deal {k + 1} (reversed)", tuple(reversed(deck[i : i + RUN]))))
        # packets of two from the top: non-dealer c1-2, c5-6, c9-10; dealer c3-4, c7-8, c11-12 (hand size 6)
        hands.append(
            (
                f"hands of deal {k + 1}",
                frozenset(deck[i] for i in (0, 1, 4, 5, 8, 9)),
                frozenset(deck[i] for i in (2, 3, 6, 7, 10, 11)),
            )
        )
    return Secrets(m.id, tuple(strings), tuple(runs), tuple(hands))


def card_sequences(body: bytes) -> list[list[str]]:
    """The card codes in a body, in order, adjacent repeats merged (one card drawn as `data-card` and
    `#card-QS`): one sequence of the text codes, and one of the labels (`♠Q`, `♥10`) if there are any.

    Text codes stand alone (`"QS"`, `#card-QS`); in a binary record they follow their length byte 0x02,
    whatever byte comes next."""
    text = body.decode("latin-1")
    codes: list[str] = []
    for mt in _CODE.finditer(text):
        p = mt.start()
        before = text[p - 1] if p else " "
        after = text[p + 2] if p + 2 < len(text) else " "
        if before == "\x02" or (before not in _ALNUM and after not in _ALNUM):
            codes.append(mt.group())
    out = [_merge_repeats(codes)]
    try:
        utf8 = body.decode("utf-8")
    except UnicodeDecodeError:
        return out
    if "\\u26" in utf8:  # JSON with escaped suit symbols
        try:
            utf8 = json.dumps(json.loads(utf8), ensure_ascii=False)
        except ValueError:
            pass
    labels = [_label_code(mt) for mt in _LABEL.finditer(utf8)]
    if labels:
        out.append(_merge_repeats(labels))
    return out


def _merge_repeats(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for code in tokens:
        if not out or out[-1] != code:
            out.append(code)
    return out


def _label_code(mt: re.Match) -> str:
    rank = "T" if mt.group(2) == "10" else mt.group(2)
    return rank + _LABEL_SUITS[mt.group(1)]


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _sorted_windows(tokens: list[str], n: int) -> set[frozenset[str]]:
    """Windows of n distinct cards in ascending or descending card order: how hands are shown."""
    ints = [parse_card(t) for t in tokens]
    out = set()
    for i in range(len(ints) - n + 1):
        w = ints[i : i + n]
        if all(x < y for x, y in zip(w, w[1:], strict=False)) or all(
            x > y for x, y in zip(w, w[1:], strict=False)
        ):
            out.add(frozenset(tokens[i : i + n]))
    return out


def _any_windows(tokens: list[str], n: int) -> set[frozenset[str]]:
    return {frozenset(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@dataclass
class Finding:
    kind: str  # marker, name, seed, salt, deck, hand, status
    url: str
    identity: str
    detail: str
    match_id: int | None = None

    def line(self) -> str:
        where = f" of match {self.match_id}" if self.match_id is not None else ""
        return f"[{self.identity}] {self.kind}{where}: {self.detail} at {self.url}"


@dataclass
class Scanner:
    """Scans bodies for the marker, a self-reported name, and the secrets of hidden matches."""

    marker: str  # the unique part of the marker bot's secret
    fake_names: tuple[str, ...]  # names no public page may show (lower case)
    findings: list[Finding] = field(default_factory=list)
    _cache: dict[int, Secrets] = field(default_factory=dict)

    def secrets(self, m: MatchRow) -> Secrets:
        if m.id not in self._cache or self._cache[m.id].strings[0][1] != secrets_of(m).strings[0][1]:
            self._cache[m.id] = secrets_of(m)
        return self._cache[m.id]

    def scan(
        self,
        url: str,
        identity: str,
        body: bytes,
        hidden: list[MatchRow],
        *,
        marker_allowed: bool = False,
        names_allowed: bool = False,
        about: frozenset[int] = frozenset(),
    ) -> list[Finding]:
        """Findings for one response; `about` holds the match ids the URL is about (a single hand there
        is enough; elsewhere both hands of one deal must show, so other matches' hands never match)."""
        out: list[Finding] = []
        body = expand(body)
        lower = body.lower()
        if not marker_allowed and self.marker.lower().encode() in lower:
            out.append(Finding("marker", url, identity, f"the bot's private output ({self.marker}) is shown"))
        if not names_allowed:
            for name in self.fake_names:
                if name.encode() in lower:
                    out.append(Finding("name", url, identity, f"the self-reported name {name!r} is shown"))
        grams: set[tuple[str, ...]] = set()
        sorted6: set[frozenset[str]] = set()
        any6: set[frozenset[str]] = set()
        for tokens in card_sequences(body) if hidden else []:
            grams |= _ngrams(tokens, RUN)
            sorted6 |= _sorted_windows(tokens, 6)
            if about:
                any6 |= _any_windows(tokens, 6)
        hidden_ids = {m.id for m in hidden}
        for found in _LOGGED_HAND.finditer(body):
            if int(found.group(1)) in hidden_ids:
                hand = found.group(2).decode("latin-1", "replace")
                detail = (
                    f"a Log line quotes the bot's hand ({hand}) while the match or its twin is unfinished"
                )
                out.append(Finding("hand", url, identity, detail, int(found.group(1))))
                break
        for m in hidden:
            sec = self.secrets(m)
            for what, needle in sec.strings:
                if needle in body:
                    kind = "salt" if what == "salt" else "seed"
                    out.append(Finding(kind, url, identity, f"{what} {needle[:24]!r}", m.id))
                    break
            for what, run in sec.runs:
                if run in grams:
                    out.append(Finding("deck", url, identity, f"{what}: {' '.join(run)}", m.id))
                    break
            for what, h0, h1 in sec.hands:
                both = h0 in sorted6 and h1 in sorted6
                single = m.id in about and (h0 in any6 or h1 in any6)
                if both or single:
                    shown = " ".join(sorted(h0 if h0 in sorted6 | any6 else h1))
                    out.append(Finding("hand", url, identity, f"{what}: {shown}", m.id))
                    break
        self.findings += out
        return out
