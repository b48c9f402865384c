"""`arena demo --match`: one seeded in-process match between two built-in players, printed deal by
deal (the quick look at the game; `arena demo` itself runs a sandboxed season, see demo.py)."""

from __future__ import annotations

import random
from collections.abc import Callable

import click

from arena.cli.errors import UserError
from arena.engine import Deal, Match, Rules, RulesError, card_label
from arena.engine.cards import ABOVE, HONOUR, SUIT_OF_CARD_MASK

Player = Callable[[Deal], int]


def random_player(seed: int) -> Player:
    """Any legal card, uniformly (seeded)."""
    rng = random.Random(seed)
    return lambda deal: rng.choice(deal.legal_cards())


def greedy_player(deal: Deal) -> int:
    """Leads its lowest card; follows by taking an honour with the cheapest winning card, else discards low."""
    legal = deal.legal_cards()
    lead = deal.table
    if lead is None:
        return min(legal, key=lambda c: (HONOUR[c], c & 7))
    beating = [c for c in legal if (1 << c) & ABOVE[lead] & SUIT_OF_CARD_MASK[lead]]
    if deal.trump_suit is not None and lead >> 3 != deal.trump_suit:
        beating += [c for c in legal if c >> 3 == deal.trump_suit]
    if beating and (HONOUR[lead] or any(HONOUR[c] for c in beating)):
        return min(beating, key=lambda c: (HONOUR[c], c & 7))
    return min(legal, key=lambda c: (HONOUR[c], c & 7))


def play_demo(seed: int, rules: Rules) -> tuple[Match, list[str]]:
    """Play the match and describe it in a few lines."""
    names = ("greedy", "random")
    players: tuple[Player, Player] = (greedy_player, random_player(seed))
    m = Match(rules, seed)
    deck = rules.deck
    a, b = m.first_dealer_draws[-1]
    ties = len(m.first_dealer_draws) - 1
    lines = [
        f"Elfern demo: {names[0]} (seat 0) vs {names[1]} (seat 1), seed {seed}, rules: "
        + (", ".join(f"{k}={v}" for k, v in rules.changed().items()) or "the rule book's defaults"),
        f"first dealer: {names[m.dealer]} ({names[0]} drew {card_label(a, deck)}, {names[1]} "
        f"{card_label(b, deck)}: the lower card deals{f'; after {ties} tie(s)' if ties else ''})",
    ]
    while not m.over:
        deal = m.start_deal()
        while not deal.done:
            seat = deal.to_move
            assert seat is not None  # the deal is not done
            card = players[seat](deal)
            m.play(card)
        out = deal.outcome
        assert out is not None
        h0, h1 = out.honours
        head = f"deal {deal.index + 1:>2}: {names[deal.dealer]:>6} deals, honours {h0:>2}-{h1:<2}"
        if out.winner is None:
            pending = f"next deal x{m.multiplier}" if rules.standoff == "double" else f"pot {m.pot}"
            lines.append(f"{head} Ständer, nobody scores ({pending})")
        else:
            extra = f" x{out.multiplier}" if out.multiplier > 1 else (f" +{out.pot} pot" if out.pot else "")
            gained = out.lines[out.winner]
            lines.append(
                f"{head} {names[out.winner]} wins {gained} line{'s' if gained != 1 else ''}"
                f" (value {out.value}{extra}); lines {m.lines[0]}-{m.lines[1]}"
            )
    if m.winner is None:
        lines.append(f"match: a draw at {m.lines[0]}-{m.lines[1]} after {len(m.deals)} deals")
    else:
        lines.append(
            f"match: {names[m.winner]} wins {m.lines[m.winner]}-{m.lines[1 - m.winner]} "
            f"after {len(m.deals)} deals ({m.flags[m.winner]} flag{'s' if m.flags[m.winner] != 1 else ''})"
        )
    return m, lines


@click.command()
@click.option(
    "--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True, help="The match seed."
)
@click.option("-r", "--rule", "rules", multiple=True, metavar="NAME=VALUE",
              help="A rules option, e.g. -r scoring=altenburg -r flags=2 (see docs/engine.md).")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Also write the match as elfern/1 JSON (check it with `arena replay verify`).")  # fmt: skip
def match_demo(seed: int, rules: tuple[str, ...], out: str | None) -> None:
    """Play one seeded match between two built-in players (greedy and random) and print it deal by deal."""
    try:
        parsed = Rules.from_pairs(rules)
    except RulesError as exc:
        raise UserError(f"{exc} (in --rule)") from None
    m, lines = play_demo(seed, parsed)
    for line in lines:
        click.echo(line)
    if out:
        from arena.replay.json_record import match_to_json, save

        save(match_to_json(m, ["greedy", "random"]), out)
        click.echo(f"record: {out} (check it: arena replay verify {out})")
    else:
        click.echo(
            f"same match again: arena demo --match --seed {seed}; as elfern/1 JSON: add --out match.json"
        )
