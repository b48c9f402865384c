"""`python_elfern`: Elfern as an OpenSpiel Python game, registered with `pyspiel.register_game` on import.

- Imperfect information; the shuffle is explicit chance: before each deal, a dealer draw (two equally
  likely outcomes, only when the rules leave the dealer to a draw: the first deal, and after a Ständer
  with dealer_after_tie=draw), then the 32 cards of the pack one chance node each, top card first.
  The engine then deals that pack (`Match.start_deal(deck, dealer)`): dealing, play, scoring and who
  deals next are the engine's, never written here.
- Actions are cards: 0..31, the engine's card int (suit * 8 + rank, named by its wire code).
- Parameters are the rules options that change play or scoring (arena/engine/rules.py); `max_deals`
  (default 1: one deal) bounds the game, since OpenSpiel needs a finite game length.
- Returns: the difference in lines at the end, zero-sum.
- Observation: the seat's view (arena/env/encoding.py), tensor and string. Information state: the
  observation plus what the seat saw earlier that the view no longer shows: the turned trump card of
  the deal in progress (tensor and string) and the final view of every earlier deal (string only).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel  # type: ignore[import-not-found]

from arena.engine import Match, Rules
from arena.engine.rules import VALUE_TABLES
from arena.env import encoding
from arena.env.resample import resample_deck

NAME = "python_elfern"
NUM_CARDS = encoding.NUM_CARDS
#: the view's slots only its own seat sees; the rest is public (both seats' views agree on it)
PRIVATE = frozenset({"seat", "hand", "drawn", "legal"})
DEFAULTS: dict[str, Any] = {
    "scoring": "tendler",
    "hand_size": 6,
    "trumps": False,
    "must_head_phase2": False,
    "standoff": "double",
    "next_dealer": "winner",
    "dealer_after_tie": "draw",
    "max_deals": 1,
}

GAME_TYPE = pyspiel.GameType(
    short_name=NAME,
    long_name="Python Elfern",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=True,
    parameter_specification=DEFAULTS,
)


def rules_of(params: dict[str, Any]) -> Rules:
    """The engine's Rules for the game's parameters; a bad value raises the engine's RulesError."""
    values = {**DEFAULTS, **params}
    if values["max_deals"] < 1:
        raise ValueError(f"python_elfern needs max_deals >= 1 (a bounded game), not {values['max_deals']}")
    return Rules(**values)


def game_info(rules: Rules) -> pyspiel.GameInfo:
    deals = rules.max_deals or 1
    # a deal scores at most its value doubled (standoff=double) or plus the pot (one line per earlier Ständer)
    bound = float(deals * (2 * max(VALUE_TABLES[rules.scoring]) + deals))
    return pyspiel.GameInfo(
        num_distinct_actions=NUM_CARDS,
        max_chance_outcomes=NUM_CARDS,
        num_players=2,
        min_utility=-bound,
        max_utility=bound,
        utility_sum=0.0,
        max_game_length=deals * NUM_CARDS,
    )


class ElfernGame(pyspiel.Game):
    """The game: its rules, fixed by the parameters."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules = rules_of(dict(params or {}))
        super().__init__(GAME_TYPE, game_info(self.rules), params or {})

    def new_initial_state(self) -> ElfernState:
        return ElfernState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ElfernObserver:
        obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        return ElfernObserver(obs_type, params)


class Progress:
    """What a state holds: the engine's match, the chance outcomes of the deal being dealt, each deal's
    dealer, pack and plays, and each seat's final view of every finished deal. OpenSpiel clones a Python
    state by deep-copying its attributes; a Progress copies itself by replaying its deals through the
    engine, which is cheaper than copying the engine's tables and shares nothing mutable."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.match = Match(rules, 0)  # packs and dealers come from chance, not from the seed
        self.dealer: int | None = None if not self.match.dealer_is_fixed else self.match.dealer
        self.pack: list[int] = []  # the chance cards of the next deal so far, top first
        self.decks: list[tuple[int, list[int], list[int]]] = []  # per deal: (dealer, pack, plays)
        self.final_views: tuple[list[str], list[str]] = ([], [])  # per seat, each finished deal's view

    def chance(self, action: int) -> None:
        """A dealer draw's outcome (the dealer's seat) when one is due, else the pack's next card."""
        if self.dealer is None:
            self.dealer = action
            return
        self.pack.append(action)
        if len(self.pack) == NUM_CARDS:
            self.match.start_deal(deck=self.pack, dealer=self.dealer)
            self.decks.append((self.dealer, self.pack, []))
            self.pack = []

    def play(self, card: int) -> None:
        self.match.play(card)
        self.decks[-1][2].append(card)
        deal = self.match.deal
        assert deal is not None
        if deal.done:
            for seat in (0, 1):
                self.final_views[seat].append(self.view_text(seat))
            self.dealer = None if not self.match.dealer_is_fixed else self.match.dealer

    def view_text(self, seat: int) -> str:
        return encoding.to_string(self.match.view(seat))

    def __deepcopy__(self, memo: dict) -> Progress:
        copy = Progress(self.rules)
        for dealer, pack, plays in self.decks:
            if copy.dealer is None:  # a dealer draw was due
                copy.chance(dealer)
            for card in pack:
                copy.chance(card)
            for card in plays:
                copy.play(card)
        if self.dealer is not None and copy.dealer is None:
            copy.chance(self.dealer)
        for card in self.pack:
            copy.chance(card)
        return copy


class ElfernState(pyspiel.State):
    """A match in progress (its `Progress`), seen through OpenSpiel's API."""

    def __init__(self, game: ElfernGame) -> None:
        super().__init__(game)
        self.rules: Rules = game.rules
        self.progress = Progress(game.rules)

    @property
    def match(self) -> Match:
        return self.progress.match

    @property
    def dealer(self) -> int | None:
        return self.progress.dealer

    @property
    def pack(self) -> list[int]:
        return self.progress.pack

    @property
    def decks(self) -> list[tuple[int, list[int], list[int]]]:
        return self.progress.decks

    # -- the OpenSpiel API ---------------------------------------------------------------------------
    def current_player(self) -> int:
        if self.match.over:
            return int(pyspiel.PlayerId.TERMINAL)
        deal = self.match.deal
        if deal is None or deal.done:
            return int(pyspiel.PlayerId.CHANCE)
        assert deal.to_move is not None
        return deal.to_move

    def _legal_actions(self, player: int) -> list[int]:
        deal = self.match.deal
        assert deal is not None and deal.to_move == player
        return deal.legal_cards()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.dealer is None:
            return [(0, 0.5), (1, 0.5)]
        left = sorted(set(range(NUM_CARDS)) - set(self.pack))
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self.progress.chance(int(action))
        else:
            self.progress.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.dealer is None:
                return f"dealer:{action}"
            return f"pack:{encoding.card_name(action)}"
        return encoding.card_name(action)

    def is_terminal(self) -> bool:
        return self.match.over

    def returns(self) -> list[float]:
        if not self.match.over:
            return [0.0, 0.0]
        a, b = self.match.lines
        return [float(a - b), float(b - a)]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> ElfernState:
        """A state `player_id` cannot tell from this one: each deal's hidden cards reshuffled
        (arena/env/resample.py), the same dealers and plays."""
        sampler = probability_sampler
        state = self.get_game().new_initial_state()
        for dealer, pack, plays in self.decks:
            if state.dealer is None:  # a dealer draw is due
                state.apply_action(dealer)
            for card in resample_deck(self.rules, dealer, pack, plays, player_id, sampler):
                state.apply_action(card)
            for card in plays:
                state.apply_action(card)
        if self.dealer is not None and state.dealer is None:
            state.apply_action(self.dealer)
        left = list(range(NUM_CARDS))
        for _ in self.pack:  # an unfinished shuffle: cards nobody has seen
            state.apply_action(left.pop(min(int(sampler() * len(left)), len(left) - 1)))
        return state

    def __str__(self) -> str:
        deal = self.match.deal
        lines = f"lines {self.match.lines[0]}-{self.match.lines[1]}"
        if deal is None:
            return f"before the first deal; {lines}"
        hands = " | ".join(" ".join(encoding.card_name(c) for c in _cards(h)) for h in deal.hands)
        plays = " ".join(encoding.card_name(c) for c in deal.plays)
        return f"deal {deal.index + 1} dealer {deal.dealer}; hands {hands}; plays {plays}; {lines}"

    # -- views ---------------------------------------------------------------------------------------
    def _view_text(self, seat: int) -> str:
        return self.progress.view_text(seat)

    def trump_seen(self) -> int | None:
        """The turned trump card of the deal in progress (public from the deal until its end)."""
        deal = self.match.deal
        return None if deal is None else deal.trump_card

    def information_text(self, seat: int) -> str:
        trump = self.trump_seen()
        now = {"trump_turned": None if trump is None else encoding.card_name(trump)}
        earlier = "\n".join(self.progress.final_views[seat])
        return f"{earlier}\n{json.dumps(now)} {self._view_text(seat)}".lstrip("\n")


def _cards(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


class ElfernObserver:
    """The PyObserver of the game: the seat's view (arena/env/encoding.py), or the part of it that is
    public (everything but the seat, its hand, its draws and its legal cards) or private (those four),
    for OpenSpiel's factored observations; with perfect recall, also the turned trump card."""

    def __init__(self, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"python_elfern observers take no parameters; got {params}")
        private = iig_obs_type.private_info
        if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError(
                "python_elfern observes one seat at a time: private_info=ALL_PLAYERS is not offered"
            )
        with_private = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.names = [
            name
            for name, _ in encoding.LAYOUT
            if (name in PRIVATE and with_private) or (name not in PRIVATE and iig_obs_type.public_info)
        ]
        self.perfect_recall = bool(iig_obs_type.perfect_recall) and bool(iig_obs_type.public_info)
        self.full = len(self.names) == len(encoding.LAYOUT)
        parts = [encoding.SLICES[name] for name in self.names]
        self._index = (
            np.concatenate([np.arange(p.start, p.stop) for p in parts]) if parts else np.array([], int)
        )
        size = len(self._index) + (NUM_CARDS if self.perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self._view = np.zeros(encoding.SIZE, np.float32)
        self.dict: dict[str, Any] = {}
        at = 0
        for name, part in zip(self.names, parts, strict=True):
            width = part.stop - part.start
            self.dict[name] = self.tensor[at : at + width]
            at += width
        if self.perfect_recall:
            self.dict["trump_turned"] = self.tensor[at:]

    def set_from(self, state: ElfernState, player: int) -> None:
        encoding.encode(state.match.view(player), self._view)
        n = len(self._index)
        self.tensor[:n] = self._view[self._index]
        if self.perfect_recall:
            self.tensor[n:] = 0
            trump = state.trump_seen()
            if trump is not None:
                self.tensor[n + trump] = 1

    def string_from(self, state: ElfernState, player: int) -> str:
        if self.perfect_recall and self.full:
            return state.information_text(player)
        if self.full:
            return state._view_text(player)
        view = state.match.view(player).to_dict()
        return json.dumps({k: view[k] for k in self.names}, sort_keys=True, separators=(",", ":"))


pyspiel.register_game(GAME_TYPE, ElfernGame)
