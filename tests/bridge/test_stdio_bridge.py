"""The stdio bridge: the JSON line format both ways, then real matches through the referee with
well-behaved and misbehaving line bots. Every failure must end in the referee's named verdict."""

from __future__ import annotations

import json

import pytest
from bridge_support import REPO, bridged_bundle

from arena.proto import referee_pb2 as pb
from arena.sdk.stdio_bridge import bot_message, referee_line

FIRST_LEGAL = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "turn_request":
        print(json.dumps({"card": msg["legal_cards"][0]}), flush=True)
"""


def test_a_turn_request_is_one_line_with_every_field_in_proto_order() -> None:
    view = pb.View(
        seat=1,
        hand=["AS", "7H"],
        lead_card="KS",
        honours=[2, 0],
        tricks=[pb.Trick(number=1, lead_card="8C", follow_card="TC", winner=1, honours=1)],
    )
    line = referee_line(
        pb.RefereeMessage(turn_request=pb.TurnRequest(turn_id=9, view=view, legal_cards=["AS"]))
    )
    assert line.endswith("\n") and line.count("\n") == 1
    data = json.loads(line)
    assert data["type"] == "turn_request"
    assert data["turn_id"] == 9 and isinstance(data["turn_id"], int)
    assert data["legal_cards"] == ["AS"]
    assert data["view"]["trump_suit"] == "" and data["view"]["stock_size"] == 0, "defaults are present"
    assert line.index('"lead_card":"KS"') < line.index('"tricks"'), "the view's lead card comes first"
    assert list(data["view"]) == [f.name for f in pb.View.DESCRIPTOR.fields]


def test_the_welcome_line_carries_the_bot_seed_as_a_plain_number() -> None:
    # protobuf's JSON mapping quotes 64-bit ints; a line bot reads a number, up to 2**64 - 1.
    line = referee_line(pb.RefereeMessage(welcome=pb.Welcome(seat=1, bot_seed=2**64 - 1)))
    assert '"bot_seed":18446744073709551615}' in line
    assert json.loads(line)["bot_seed"] == 2**64 - 1
    assert json.loads(referee_line(pb.RefereeMessage(welcome=pb.Welcome())))["bot_seed"] == 0


@pytest.mark.parametrize("kind", [f.name for f in pb.RefereeMessage.DESCRIPTOR.oneofs_by_name["msg"].fields])
def test_every_referee_message_kind_becomes_a_typed_line(kind: str) -> None:
    message = pb.RefereeMessage(
        **{kind: getattr(pb, pb.RefereeMessage.DESCRIPTOR.fields_by_name[kind].message_type.name)()}
    )
    assert json.loads(referee_line(message))["type"] == kind


def test_deal_start_and_last_trick_ride_in_the_lines_that_carry_them() -> None:
    first = pb.RefereeMessage(turn_request=pb.TurnRequest(turn_id=1, legal_cards=["AS"],
                                                           deal_start=pb.DealStart(deal_number=2, hand=["AS"])))  # fmt: skip
    data = json.loads(referee_line(first))
    assert data["deal_start"]["deal_number"] == 2 and data["deal_start"]["hand"] == ["AS"]
    assert "trick_result" not in data, "an unset message field is left out, not printed empty"
    later = json.loads(
        referee_line(pb.RefereeMessage(turn_request=pb.TurnRequest(turn_id=2, legal_cards=["AS"])))
    )
    assert "deal_start" not in later
    end = pb.RefereeMessage(
        deal_result=pb.DealResult(deal_number=2, last_trick=pb.TrickResult(deal_number=2))
    )
    assert json.loads(referee_line(end))["last_trick"]["deal_number"] == 2


def test_bot_lines_become_actions_and_logs() -> None:
    assert bot_message('{"card": "AS"}\n', 4) == pb.BotMessage(action=pb.Action(turn_id=4, card="AS"))
    assert bot_message('{"card": "AS", "turn_id": 2}', 4).action.turn_id == 2
    assert bot_message('{"log": "hello"}', 4) == pb.BotMessage(log=pb.Log(text="hello"))


@pytest.mark.parametrize("line", ["AS", "hello world", "{}", '{"card": 7}', "[1,2]", ""])
def test_a_malformed_line_is_passed_on_as_a_bad_card_for_the_referee_to_reject(line: str) -> None:
    msg = bot_message(line + "\n", 5)
    assert msg.WhichOneof("msg") == "action" and msg.action.turn_id == 5
    assert msg.action.card not in ("", None)


def test_a_line_bot_plays_a_full_match(tmp_path, play, random_bot) -> None:
    bot = bridged_bundle(tmp_path / "first", FIRST_LEGAL, name="first-legal")
    out = play(bot, random_bot, deals=2)
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    assert out.deals_played == 2 and out.end_reason == "COMPLETED"
    assert out.record.players[0].name == "first-legal"
    assert sum(len(d.plays) for d in out.record.deals) == 2 * 32


def test_the_shell_sample_plays_behind_the_bridge(tmp_path, play, random_bot) -> None:
    bundle = tmp_path / "sh"
    bundle.mkdir()
    (bundle / "bot.sh").write_text((REPO / "sample_bots/stdio/shell/bot.sh").read_text())
    (bundle / "bot.toml").write_text(
        'name = "sh"\nrun = ["python3", "-m", "arena.sdk.stdio_bridge", "--", "/bin/sh", "bot.sh"]\n'
    )
    out = play(random_bot, bundle, deals=1)
    assert out.verdicts == ("OK", "OK"), out.verdict_details


def test_log_lines_reach_the_replay(tmp_path, play, random_bot) -> None:
    script = FIRST_LEGAL.replace(
        'print(json.dumps({"card"',
        'print(json.dumps({"log": "thinking"}), flush=True); print(json.dumps({"card"',
    )
    out = play(bridged_bundle(tmp_path / "chatty", script), random_bot, deals=1)
    assert out.verdicts == ("OK", "OK")
    assert any(log.seat == 0 and log.text == "thinking" for log in out.record.logs)


def test_garbage_on_stdout_is_a_protocol_error(tmp_path, play, random_bot) -> None:
    script = FIRST_LEGAL.replace(
        'json.dumps({"card": msg["legal_cards"][0]})', '"I think I will play the ace"'
    )
    out = play(bridged_bundle(tmp_path / "garbage", script), random_bot)
    assert out.verdicts[0] == "PROTOCOL_ERROR" and out.verdicts[1] == "OK"
    assert out.winner == 1


def test_an_illegal_card_is_an_illegal_move(tmp_path, play, random_bot) -> None:
    script = FIRST_LEGAL.replace(
        'msg["legal_cards"][0]',
        'next(c for c in (r + s for r in "789TJQKA" for s in "CDHS") if c not in msg["view"]["hand"])',
    )
    out = play(bridged_bundle(tmp_path / "illegal", script), random_bot)
    assert out.verdicts[0] == "ILLEGAL_MOVE" and out.winner == 1


def test_a_bot_that_exits_early_loses_without_hanging(tmp_path, play, random_bot) -> None:
    script = FIRST_LEGAL.replace("print(json.dumps(", "sys.exit(3); print(json.dumps(")
    out = play(bridged_bundle(tmp_path / "quitter", script), random_bot)
    assert out.verdicts[0] in ("CRASH", "DISCONNECT"), out.verdicts
    assert out.verdicts[1] == "OK" and out.winner == 1


def test_a_missing_bot_command_fails_the_seat(tmp_path, play, random_bot) -> None:
    bundle = tmp_path / "missing"
    bundle.mkdir()
    (bundle / "bot.toml").write_text(
        'name = "missing"\nrun = ["python3", "-m", "arena.sdk.stdio_bridge", "--", "./no-such-bot"]\n'
    )
    out = play(random_bot, bundle, deals=1)
    assert out.verdicts[1] != "OK" and out.verdicts[0] == "OK" and out.winner == 0
