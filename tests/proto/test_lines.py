"""arena/proto/lines.py: `referee_line` reads the fields itself (it is on every move of a stdio bot),
and must give exactly the text protobuf's JSON mapping gave, which the bridge always wrote and every
stdio bot reads. Checked against `json_dict` (json_format) on every message kind, on filled-in
messages at the edges of each type, and on every line of real matches."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from google.protobuf import json_format

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.proto.lines import UINT64_FIELDS, bot_line, bot_message, json_dict, referee_line, referee_message
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]
KINDS = [f.name for f in pb.RefereeMessage.DESCRIPTOR.oneofs_by_name["msg"].fields]


def _reference(message: pb.RefereeMessage) -> str:
    """The line as json_format gives it: what the bridge wrote before."""
    kind = message.WhichOneof("msg") or "unknown"
    body = json_dict(getattr(message, kind))
    for key in UINT64_FIELDS:
        if key in body:
            body[key] = int(body[key])
    return json.dumps({"type": kind, **body}, separators=(",", ":")) + "\n"


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_empty_is_the_json_format_line(kind: str) -> None:
    message = pb.RefereeMessage()
    getattr(message, kind).SetInParent()
    assert referee_line(message) == _reference(message)


def _filled() -> list[pb.RefereeMessage]:
    """Messages of each kind with fields at the edges of their types."""
    trick = pb.Trick(number=16, leader=1, lead_card="AS", follow_card="7H", winner=1, honours=2**32 - 1)
    view = pb.View(seat=1, hand=["AS", "7H"], lead_card="KS", tricks=[trick, pb.Trick()], honours=[0, 2**31],
                   drawn=["é", "\u2028", '"\\'], lines=[3, 0], flags=[1, 2], pot=7)  # fmt: skip
    return [
        pb.RefereeMessage(
            turn_request=pb.TurnRequest(
                turn_id=2**64 - 1,
                view=view,
                legal_cards=["AS"],
                move_ms=1,
                bank_ms=0,
                deadline_ms=2**32 - 1,
                deal_start=pb.DealStart(deal_number=3, hand=["AS"]),
                trick_result=pb.TrickResult(deal_number=3),
            )
        ),  # fmt: skip
        pb.RefereeMessage(welcome=pb.Welcome(seat=1, bot_seed=2**64 - 1, rules=pb.Rules(trumps=True))),
        pb.RefereeMessage(error=pb.Error(code="STALE_TURN", fatal=True, turn_id=2**63, message="\x00\x7f")),
        pb.RefereeMessage(match_result=pb.MatchResult(winner=-1, void=True, verdicts=["OK", "CRASH"])),
    ]


def test_filled_messages_at_the_edges_of_each_type_are_the_json_format_line() -> None:
    for message in _filled():
        assert referee_line(message) == _reference(message)


@pytest.mark.parametrize("kind", KINDS)
def test_the_sdk_reads_every_kind_back_as_the_message_it_was(kind: str) -> None:
    """The Python SDK's stdio transport (`referee_message`) inverts `referee_line`."""
    message = pb.RefereeMessage()
    getattr(message, kind).SetInParent()
    for m in [message, *(f for f in _filled() if f.WhichOneof("msg") == kind)]:
        assert referee_message(referee_line(m)) == m
        assert referee_message(referee_line(m).encode()) == m


def test_the_sdk_skips_what_a_newer_referee_adds_and_refuses_what_is_not_a_line() -> None:
    newer = '{"type":"welcome","seat":1,"colour":"red"}'
    assert referee_message(newer) == pb.RefereeMessage(welcome=pb.Welcome(seat=1))
    assert referee_message('{"type":"encore","x":1}').WhichOneof("msg") is None
    for bad in ("not json", "[1]", '{"seat":1}', '{"type":3}'):
        with pytest.raises(ValueError):
            referee_message(bad)


def test_the_sdk_writes_the_lines_the_seat_reads() -> None:
    action = pb.BotMessage(action=pb.Action(turn_id=2**64 - 1, card="AS"))
    log = pb.BotMessage(log=pb.Log(text='a "quoted"\nline é'))
    for message in (action, log):
        line = bot_line(message)
        assert line.endswith("\n") and line.count("\n") == 1
        assert bot_message(line, current_turn=5) == message
    with pytest.raises(ValueError, match="join"):
        bot_line(pb.BotMessage(join=pb.Join(token="t")))


def test_every_line_of_real_matches_is_the_json_format_line(tmp_path) -> None:
    """A stdio bot records what it read over three deals with trumps; each line, parsed back into its
    message, is the line json_format gives for that message."""
    bot = tmp_path / "recorder"
    bot.mkdir()
    (bot / "bot.py").write_text(
        "import json, sys\n"
        "with open('seen.txt', 'w') as seen:\n"
        "    for line in sys.stdin:\n"
        "        seen.write(line)\n"
        "        msg = json.loads(line)\n"
        "        if msg['type'] == 'turn_request':\n"
        "            print(json.dumps({'card': msg['legal_cards'][-1]}), flush=True)\n"
    )
    (bot / "bot.toml").write_text('name = "recorder"\nprotocol = "stdio"\nrun = ["python3", "bot.py"]\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    out = play_match(
        (load_bundle(bot), load_bundle(REPO / "sample_bots" / "python" / "greedy")),
        rules=Rules(max_deals=3, trumps=True), seed=11, time_control=TimeControl(), launcher=launcher,
    )  # fmt: skip
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    lines = (bot / "seen.txt").read_text().splitlines(keepends=True)
    assert len(lines) > 3 * 16
    for line in lines:
        data = json.loads(line)
        message = pb.RefereeMessage()
        json_format.ParseDict({k: v for k, v in data.items() if k != "type"}, getattr(message, data["type"]))
        assert referee_line(message) == _reference(message) == line
        assert referee_message(line) == message  # the SDK's own reader agrees with json_format's
