"""`arena demo` and `arena bench engine` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli
from arena.cli.demo import greedy_player, play_demo
from arena.engine import Deal, Rules, deal_deck, parse_card
from arena.replay.verify import verify_file


def test_demo_prints_every_deal_and_the_result_and_is_deterministic(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    first = CliRunner().invoke(cli, ["demo", "--match", "--seed", "3", "--out", str(out)])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(cli, ["demo", "--match", "--seed", "3", "--out", str(out)])
    assert again.output == first.output
    m, _ = play_demo(3, Rules())
    lines = first.output.splitlines()
    assert sum(line.startswith("deal ") for line in lines) == len(m.deals)
    assert any(line.startswith("match: ") for line in lines)
    assert verify_file(out) == (True, f"{out}: ok")
    record = json.loads(out.read_text())
    assert record["seats"] == ["greedy", "random"] and record["seed"] == 3


def test_demo_seeds_differ_and_rules_apply() -> None:
    a = CliRunner().invoke(cli, ["demo", "--match", "--seed", "1"]).output
    b = CliRunner().invoke(cli, ["demo", "--match", "--seed", "2", "-r", "max_deals=3"]).output
    assert a != b
    assert "max_deals=3" in b and sum(line.startswith("deal ") for line in b.splitlines()) == 3


def test_demo_bad_rule_is_one_clear_line() -> None:
    result = CliRunner().invoke(cli, ["demo", "--match", "-r", "standoff=triple"])
    assert result.exit_code == 2
    assert "standoff='triple' is invalid; allowed: double, pot" in result.output
    assert "Traceback" not in result.output


def test_greedy_player_takes_an_honour_cheaply() -> None:
    deal = Deal(Rules(), 1, deal_deck(0, 0))
    deal.hands = [0, 0]
    for card in ("TH", "AS", "7C", "8D", "9D", "QD"):
        deal.hands[0] |= 1 << parse_card(card)
    for card in ("JH", "AH", "7H", "7S", "8S", "9S"):
        deal.hands[1] |= 1 << parse_card(card)
    deal.play(parse_card("TH"))
    assert greedy_player(deal) == parse_card("JH")  # the cheapest card that wins the ten


def test_bench_engine_json_figures() -> None:
    result = CliRunner().invoke(cli, ["bench", "engine", "--seconds", "0.4", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    for key in (
        "baseline_deals_per_s",
        "engine_deals_per_s",
        "engine_playout_deals_per_s",
        "seeded_shuffles_per_s",
    ):
        assert figures[key] > 0
    ratio = figures["engine_playout_deals_per_s"] / figures["baseline_deals_per_s"]
    assert abs(figures["playout_vs_baseline"] - ratio) < 0.02
    assert set(figures["deals"]) == {"baseline", "engine", "engine_playout", "shuffle", "core_playout"}
    assert figures["core_playout_deals_per_s"] > 0 and figures["core_vs_c_reference"] > 0


def test_bench_engine_text() -> None:
    result = CliRunner().invoke(cli, ["bench", "engine", "--seconds", "0.3"])
    assert result.exit_code == 0, result.output
    assert "deals/s" in result.output and "x baseline" in result.output and "target 3.0x" in result.output
