"""`arena replay analyse` and `arena replay show --analysis` as a user runs them."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli
from arena.engine import Match, Rules, card_code
from arena.proto import referee_pb2 as pb
from arena.proto import replay_pb2 as rpb
from arena.proto.codec import encode_record
from arena.replay.json_record import match_to_json


def _match(seed: int, rules: Rules) -> Match:
    m = Match(rules, seed)
    rng = random.Random(seed)
    while not m.over:
        deal = m.start_deal()
        while not deal.done:
            m.play(rng.choice(deal.legal_cards()))
    return m


def _json_file(tmp_path: Path, seed: int = 4, rules: Rules | None = None) -> Path:
    path = tmp_path / f"m{seed}.json"
    path.write_text(json.dumps(match_to_json(_match(seed, rules or Rules(max_deals=1)), ["ann", "bea"])))
    return path


def _binary_file(tmp_path: Path, seed: int = 6) -> Path:
    rules = Rules(max_deals=1, trumps=True)
    m = _match(seed, rules)
    d = rules.to_dict()
    rec = rpb.MatchRecord(format=1, match_id=str(seed), seed=seed,
                          rules=pb.Rules(**{**d, "max_deals": d["max_deals"] or 0}))  # fmt: skip
    for seat, name in enumerate(("ann", "bea")):
        rec.players.add(seat=seat, name=name, version="1")
    for s in m.deals:
        dr = rec.deals.add(number=s.index + 1, dealer=s.dealer, deck=[card_code(c) for c in s.deck])
        seat_of = [t for t in s.tricks for t in ((t.leader, t.lead), (1 - t.leader, t.follow))]
        for seat, card in seat_of:
            dr.plays.add(seat=seat, card=card_code(card), think_us=10)
    rec.result.winner = -1 if m.winner is None else m.winner
    rec.result.end_reason = "COMPLETED"
    path = tmp_path / "m.replay"
    path.write_bytes(encode_record(rec))
    return path


def test_analyse_json_follows_the_schema(tmp_path: Path) -> None:
    path = _json_file(tmp_path)
    result = CliRunner().invoke(cli, ["replay", "analyse", str(path), "--json", "--samples", "3"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["format"] == "elfern-analysis/1" and out["samples"] == 3
    (deal,) = out["deals"]
    assert len(deal["moves"]) == 32 and deal["complete"] is True
    assert {mv["exact"] for mv in deal["moves"][:20]} == {False} and {
        mv["exact"] for mv in deal["moves"][20:]
    } == {True}
    again = CliRunner().invoke(cli, ["replay", "analyse", str(path), "--json", "--samples", "3"])
    assert again.output == result.output  # deterministic


def test_analyse_text_and_show_analysis_of_a_binary_replay(tmp_path: Path) -> None:
    path = _binary_file(tmp_path)
    text = CliRunner().invoke(cli, ["replay", "analyse", str(path), "--samples", "2"])
    assert text.exit_code == 0, text.output
    assert (
        text.output.startswith("analysis: phase 2 exact")
        and "deal 1: honours lost in phase 2: ann[0]" in text.output
    )
    data = json.loads(
        CliRunner().invoke(cli, ["replay", "analyse", str(path), "--json", "--samples", "2"]).output
    )
    lost = data["deals"][0]["lost"]
    assert f"ann[0] {lost[0]}, bea[1] {lost[1]}" in text.output
    for mv in data["deals"][0]["moves"]:
        if mv["exact"] and mv["lost"]:
            assert f"{mv['play'] + 1:2d}. {('ann[0]', 'bea[1]')[mv['seat']]}" in text.output
    show = CliRunner().invoke(cli, ["replay", "show", str(path), "--analysis", "--samples", "2"])
    assert show.exit_code == 0, show.output
    assert show.output.index("result:") < show.output.index("analysis: phase 2 exact")
    assert text.output.strip() in show.output
    mine = CliRunner().invoke(
        cli, ["replay", "show", str(path), "--analysis", "--samples", "2", "--seat", "0"]
    )
    assert mine.exit_code == 0, mine.output
    moves = [line for line in mine.output.split("analysis: ")[1].splitlines() if line.startswith("  ")]
    assert not [line for line in moves if "bea[1]" in line]  # --seat 0: only seat 0's moves


def test_analyse_refuses_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["replay", "analyse", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such replay file" in missing.output
    broken = tmp_path / "broken.json"
    rec = match_to_json(_match(1, Rules(max_deals=1)))
    rec["deals"][0]["plays"][3], rec["deals"][0]["plays"][4] = (
        rec["deals"][0]["plays"][4],
        rec["deals"][0]["plays"][3],
    )
    broken.write_text(json.dumps(rec))
    bad = runner.invoke(cli, ["replay", "analyse", str(broken)])
    assert bad.exit_code == 2 and "does not verify" in bad.output and "Traceback" not in bad.output
    junk = tmp_path / "junk.json"
    junk.write_text("{")
    assert "not valid JSON" in runner.invoke(cli, ["replay", "analyse", str(junk)]).output
    zero = runner.invoke(cli, ["replay", "analyse", str(_json_file(tmp_path)), "--samples", "0"])
    assert zero.exit_code == 2 and "--samples" in zero.output
