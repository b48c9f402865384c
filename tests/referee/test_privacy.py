"""What a match tells whom, over real gRPC with real bot processes: a bot's own text (its output, the
card text it sent, its Log lines, the name it gives itself) reaches the private record and the bot
itself, never the opponent nor the public detail; the recorded names are the registered ones; the
deck commitment is drawn, sent in Welcome and recorded."""

from __future__ import annotations

import queue
import threading

import grpc
import pytest

from arena.engine import CommitmentError, Rules, deck_commitment
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.proto.codec import encode_record
from arena.referee import MatchRunner, MatchSpec
from arena.referee.loop import run_sync
from arena.replay.privacy import is_public, public_record
from arena.replay.verify import verify_file
from arena.workers.execute import seat_logs

MARKER = "LEAK-7f3a9c"  # what tests/referee/bots/misbehave.py's `leaky` mode logs and prints


class Witness:
    """A seat driven from the test process: plays its first legal card and keeps every message."""

    def __init__(self, address: str, token: str, name: str = "raw-witness", card: str = "") -> None:
        self.channel = grpc.insecure_channel(address)
        self.token, self.name, self.card = token, name, card
        self.received: list[pb.RefereeMessage] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        out: queue.SimpleQueue = queue.SimpleQueue()
        out.put(pb.BotMessage(join=pb.Join(token=self.token, bot_name=self.name, protocol_version=1)))
        try:
            for msg in pbg.RefereeStub(self.channel).Play(
                iter(out.get, None), wait_for_ready=True, timeout=60
            ):
                self.received.append(msg)
                if msg.WhichOneof("msg") == "turn_request":
                    req = msg.turn_request
                    out.put(
                        pb.BotMessage(
                            action=pb.Action(turn_id=req.turn_id, card=self.card or req.legal_cards[0])
                        )
                    )
                elif msg.WhichOneof("msg") == "match_result":
                    break
        except grpc.RpcError:
            pass
        finally:
            out.put(None)
            self.channel.close()

    def first(self, kind: str):
        return next(getattr(m, kind) for m in self.received if m.WhichOneof("msg") == kind)

    def raw(self) -> bytes:
        return b"".join(m.SerializeToString() for m in self.received)


def match_with_process(referee, launch_bot, spec: MatchSpec, seat: int, bot: str):
    """A match on the in-process referee with `bot` launched for real in `seat` (the referee reads
    its output through the handle, as in play_match)."""

    async def create():
        return referee.server.create_match(spec)

    runner = run_sync(create())
    handle = launch_bot(bot, referee.server.unix_path, runner.tokens[seat])
    runner.handles = [handle if i == seat else None for i in (0, 1)]

    async def start():
        referee.server.start_match(runner)

    run_sync(start())
    return runner


def test_a_crashing_bots_output_reaches_only_its_private_record(referee, launch_bot, fast_tc, tmp_path):
    spec = MatchSpec(seed=3, time_control=fast_tc, match_id="leak-1")
    runner = match_with_process(referee, launch_bot, spec, 0, "leaky")
    witness = Witness(referee.address("unix"), runner.tokens[1])
    result = referee.wait(runner)
    witness.thread.join(10)
    record = runner.record
    assert list(result.verdicts) == ["CRASH", "OK"] and result.winner == 1
    # the private record has the bot's output and its Log line; the public sentence has neither
    assert (
        MARKER in record.result.private_details[0]
        and "last output of the bot" in record.result.private_details[0]
    )
    assert any(MARKER in entry.text for entry in record.logs)
    assert "process died (exit code 3)" in record.result.details[0] and MARKER not in record.result.details[0]
    # the opponent got the public sentences only: no message it received quotes the crashed bot
    assert list(witness.first("match_result").details) == list(record.result.details)
    assert witness.received and MARKER.encode() not in witness.raw()
    # the public form drops every private field and nothing else, and still verifies
    public = public_record(record)
    assert MARKER.encode() not in public.SerializeToString() and is_public(public) and not is_public(record)
    path = tmp_path / "public.replay"
    path.write_bytes(encode_record(public))
    assert verify_file(path) == (True, f"{path}: ok")


def test_the_offending_bot_alone_hears_its_own_bad_card(referee, fast_tc):
    runner = referee.new_match(seed=4, time_control=fast_tc, match_id="card-1")
    addr = referee.address("tcp")
    bad, good = Witness(addr, runner.tokens[0], card="ZZ-" + MARKER), Witness(addr, runner.tokens[1])
    result = referee.wait(runner)
    bad.thread.join(10)
    good.thread.join(10)
    assert list(result.verdicts) == ["PROTOCOL_ERROR", "OK"]
    assert MARKER in bad.first("error").message  # its own text, told to itself
    assert MARKER not in result.details[0] and MARKER.encode() not in good.raw()
    assert runner.record.result.private_details[0] == f"Action.card was 'ZZ-{MARKER}'"


def test_registered_names_win_over_what_the_bot_calls_itself(referee, launch_bot, fast_tc):
    names = (("impostor", "1"), ("witness", "2"))
    spec = MatchSpec(seed=5, time_control=fast_tc, match_id="names-1", names=names, rules=Rules(max_deals=1))
    runner = match_with_process(referee, launch_bot, spec, 0, "tactician")  # its Join says "tactician"
    witness = Witness(referee.address("unix"), runner.tokens[1])
    result = referee.wait(runner)
    witness.thread.join(10)
    assert list(result.verdicts) == ["OK", "OK"], list(result.details)
    welcome = witness.first("welcome")
    assert (welcome.opponent_name, welcome.opponent_version) == ("impostor", "1")
    players = [(p.name, p.version, p.self_reported_name) for p in runner.record.players]
    assert players == [("impostor", "1", "tactician"), ("witness", "2", "raw-witness")]
    assert "tactician" not in {p.name for p in public_record(runner.record).players} | {
        p.self_reported_name for p in public_record(runner.record).players
    }
    # the commitment the bots saw is the recorded one, and it binds the seed, the id and the salt
    record = runner.record
    assert (
        welcome.commitment == record.commitment == deck_commitment(5, "names-1", bytes.fromhex(record.salt))
    )


def test_the_worker_path_records_registered_names_and_keeps_private_text_for_the_owner(play_bots):
    out = play_bots("leaky", "tactician", seed=3, names=(("impostor", "3"), ("honest", "1")))
    assert out.verdicts == ("CRASH", "OK")
    assert [(p.name, p.self_reported_name) for p in out.record.players] == [
        ("impostor", "leaky"),
        ("honest", "tactician"),
    ]
    assert MARKER not in out.verdict_details[0]
    logs = seat_logs(out)
    # its Log line, its stderr kept in the record (source "output") and the output tail quoted with the
    # verdict: all three in its owner's log only
    assert logs[0].count(MARKER) == 3
    assert MARKER not in logs[1]


def test_the_salt_is_drawn_unless_given_and_always_recorded():
    given = bytes(range(16))
    runner = MatchRunner(MatchSpec(seed=9, match_id="m7", salt=given))
    assert runner.recorder.record.salt == given.hex()
    assert runner.recorder.record.commitment == deck_commitment(9, "m7", given)
    drawn = [MatchRunner(MatchSpec(seed=9, match_id="m7")).salt for _ in range(2)]
    assert len(drawn[0]) == 16 and drawn[0] != drawn[1]
    with pytest.raises(CommitmentError, match="16 bytes"):
        MatchRunner(MatchSpec(seed=9, match_id="m7", salt=b"short"))


def test_a_spec_without_names_records_remote_seats():
    runner = MatchRunner(MatchSpec(names=(("alice", "1"), ("", ""))))
    assert [(s.name, s.version) for s in runner.seats] == [("alice", "1"), ("remote", "")]
