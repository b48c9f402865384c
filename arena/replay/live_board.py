"""The table a spectator of a live match may see, rebuilt from the public watch events (deal, trick,
deal_end: `arena.service.ops_watch`), in the replay viewer's step format (`arena.web.timeline`), so
that the web's live page draws it with the viewer's own code and `arena watch` prints its honours.

Only public facts go in (docs/rules.md §8): the cards of the tricks shown, who took them, the honours
they hold, who leads the next trick shown (`to_move`: the non-dealer first, then each trick's
winner), the hand sizes and the stock's size (both follow from the trick number and the rules), the
lines after each finished deal. Hands are backs; drawn cards, the stock and the turned trump (not in
the events) are never shown. The feed is one trick behind the play, so the board is too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine.cards import HONOUR, card_label, parse_card
from arena.engine.rules import TRICKS_PER_DEAL, Rules

HONOURS_IN_DEAL = 20  # docs/rules.md §1: the pack holds 20 honour points
TO_WIN = HONOURS_IN_DEAL // 2 + 1  # 11 wins a deal (§4)


def honours_of(codes: Sequence[str]) -> int:
    """The honour points among card codes (A, K, Q, J and 10 count 1 each: docs/rules.md §1)."""
    return sum(HONOUR[parse_card(c)] for c in codes)


class LiveBoard:
    """Feed it the watch events in order (`feed`), read the table after the last one (`state`)."""

    def __init__(self, names: Sequence[str], rules: Rules | None = None, deck: str = "french") -> None:
        self.names = list(names) if len(names) == 2 else ["seat 0", "seat 1"]
        self.rules = rules or Rules()
        self.deck = deck
        self.reset()

    def reset(self) -> None:
        """Back to before the first deal (a match restarted by a new attempt starts again)."""
        self.deal = 0
        self.dealer: int | None = None
        self.trick = 0
        self.honours = [0, 0]
        self.lines = [0, 0]  # the match totals before the deal (after the last finished one)
        self.last: Mapping[str, Any] | None = None  # the last trick shown
        self.ended: Mapping[str, Any] | None = None  # the deal's end, once shown

    def feed(self, event: Mapping[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "deal":
            if int(event["deal"]) == 1:  # a match's first deal (again, after a restart): no line yet
                self.lines = [0, 0]
            elif self.ended is not None:
                self.lines = [int(x) for x in self.ended.get("lines") or self.lines]
            self.deal, self.dealer = int(event["deal"]), int(event["dealer"])
            self.trick, self.honours, self.last, self.ended = 0, [0, 0], None, None
        elif kind == "trick":
            if int(event["deal"]) != self.deal:  # a trick of a deal whose start was not shown
                self.deal, self.trick, self.honours, self.ended = int(event["deal"]), 0, [0, 0], None
            self.trick = int(event["trick"])
            self.honours[int(event["winner"])] += honours_of(event["cards"])
            self.last = event
        elif kind == "deal_end":
            self.ended = event

    def _counts(self) -> tuple[list[int], int]:
        """Cards in each hand and in the stock after the tricks shown (§3, §7)."""
        h = self.rules.hand_size
        stock = TRICKS_PER_DEAL * 2 - 2 * h
        phase1 = self.rules.phase1_tricks
        if self.trick <= phase1:
            return [h, h], stock - 2 * self.trick
        left = max(0, h - (self.trick - phase1))
        return [left, left], 0

    def note(self) -> str:
        """What the table says in words: the last trick, then who is winning the deal and why."""
        names = self.names
        if self.deal == 0:
            return "No deal shown yet."
        if self.last is None:
            who = names[self.dealer] if self.dealer is not None else "?"
            return f"Deal {self.deal}: {who} deals; the first trick is shown once the second is complete."
        t = self.last
        lead, follow = t["cards"][0], t["cards"][1]
        leader, winner = int(t["leader"]), int(t["winner"])
        got = honours_of(t["cards"])
        text = (
            f"Trick {t['trick']}: {names[leader]} leads {self._label(lead)}, {names[1 - leader]} plays "
            f"{self._label(follow)}; {names[winner]} takes it"
            + (f" (+{got} honour{'s' if got != 1 else ''})." if got else " (no honour in it).")
        )
        return text + " " + self.standing()

    def standing(self) -> str:
        """The deal's running score in words: honours so far and what they mean (11 of 20 win it)."""
        a, b = self.honours
        names = self.names
        if self.ended is not None:
            w = int(self.ended.get("winner", -1))
            if w < 0:
                return f"Deal over: honours {a}–{b}, a Ständer (10–10): nobody scores it."
            won = self.honours[w]
            value = self.rules.deal_value(won) if won >= TO_WIN else 0
            lines = list(self.ended.get("lines") or [])
            gained = lines[w] - self.lines[w] if len(lines) == 2 else value
            return (
                f"Deal over: honours {a}–{b}; {names[w]} wins it and scores {gained} "
                f"line{'s' if gained != 1 else ''}."
            )
        if a == b:
            return f"Honours {a}–{b}: level; {TO_WIN} of the {HONOURS_IN_DEAL} win the deal."
        ahead = 0 if a > b else 1
        most = max(a, b)
        if most >= TO_WIN:
            return f"Honours {a}–{b}: {names[ahead]} has won the deal ({most} of {HONOURS_IN_DEAL})."
        return f"Honours {a}–{b}: {names[ahead]} leads; {TO_WIN - most} more win{'s' if TO_WIN - most == 1 else ''} the deal for them."

    def _next_leader(self) -> int | None:
        """Who leads the next trick the board will show: the non-dealer first (docs/rules.md §2), then
        each trick's winner (§3); None before a deal and once its tricks are all shown or it ended."""
        if self.deal == 0 or self.ended is not None or self.trick >= TRICKS_PER_DEAL:
            return None
        if self.last is None:
            return None if self.dealer is None else 1 - self.dealer
        return int(self.last["winner"])

    def _label(self, code: str) -> str:
        return card_label(parse_card(code), self.deck)

    def state(self) -> dict[str, Any]:
        """The table after the events fed so far, in the viewer's step format (no hand, no drawn card)."""
        counts, stock = self._counts()
        t = self.last
        table = (
            [
                {"seat": int(t["leader"]), "card": t["cards"][0]},
                {"seat": 1 - int(t["leader"]), "card": t["cards"][1]},
            ]
            if t is not None
            else []
        )
        lines = list(self.lines)
        if self.ended is not None and len(self.ended.get("lines") or []) == 2:
            lines = [int(x) for x in self.ended["lines"]]
        return {
            "deal": self.deal,
            "dealer": self.dealer,
            "hands": [None, None],
            "counts": counts,
            "stock": stock,
            "table": table,
            "trick_winner": int(t["winner"]) if t is not None else None,
            "tricks": self.trick,
            "honours": list(self.honours),
            "to_move": self._next_leader(),
            "legal": None,
            "drew": [],
            "trump": None,
            "lines": lines,
            "note": self.note(),
        }
