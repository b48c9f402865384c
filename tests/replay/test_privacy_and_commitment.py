"""The public form of a record (arena/replay/privacy.py) and the deck commitment in elfern/1 records
(`arena replay verify`, docs/records.md)."""

from __future__ import annotations

import json

import pytest
from elfern1_helpers import mutated, seeded_record

from arena.engine import deck_commitment
from arena.proto import replay_pb2
from arena.proto.codec import RecordError, decode_record, encode_record
from arena.replay.json_record import save
from arena.replay.privacy import (
    is_public,
    private_record,
    private_record_bytes,
    public_record,
    public_record_bytes,
)
from arena.replay.verify import NO_COMMITMENT, RecordFailure, replay_json, verify_file

SALT = "00112233445566778899aabbccddeeff"


def _record(private: bool) -> replay_pb2.MatchRecord:
    """A record with every field set; with `private`, also the private ones."""
    rec = replay_pb2.MatchRecord(
        format=1,
        match_id="m17",
        seed=42,
        commitment=deck_commitment(42, "m17", bytes.fromhex(SALT)),
        salt=SALT,
    )
    for seat, name in enumerate(("impostor", "honest")):
        rec.players.add(seat=seat, name=name, version="1", self_reported_name="tactician" if private else "")
    rec.deals.add(number=1, dealer=0, deck=["AS"] * 32).plays.add(seat=1, card="AS", think_us=5)
    rec.result.CopyFrom(replay_pb2.ResultRecord(
        winner=1, verdicts=["CRASH", "OK"], details=["the bot's process died (exit code 3)", ""],
        private_details=["last output of the bot:\napi_key=LEAK", ""] if private else [], end_reason="VERDICT",
    ))  # fmt: skip
    if private:
        rec.logs.add(seat=0, deal=1, trick=1, text="api_key=LEAK")
    rec.stats.add(seat=0, stale_actions=2)
    rec.timing.duration_ms = 9
    return rec


def test_the_public_form_drops_the_private_fields_and_nothing_else():
    full = _record(private=True)
    public = public_record(full)
    assert encode_record(public) == encode_record(_record(private=False))  # byte for byte
    assert public_record_bytes(encode_record(full)) == encode_record(_record(private=False))
    assert b"LEAK" not in public.SerializeToString() and b"tactician" not in public.SerializeToString()
    assert is_public(public) and not is_public(full)
    assert full.logs and full.result.private_details[0]  # the original is untouched


def test_the_public_form_of_a_record_without_a_result_stays_without_one():
    bare = replay_pb2.MatchRecord(format=1, match_id="m1")
    assert not public_record(bare).HasField("result") and is_public(bare)


def test_bytes_that_are_not_a_record_are_refused():
    with pytest.raises(RecordError):
        public_record_bytes(b"not a record")


def _committed(seed: int = 42) -> dict:
    record = seeded_record(seed)
    record["match_id"] = "m17"
    record["commitment"] = deck_commitment(seed, "m17", bytes.fromhex(SALT))
    record["salt"] = SALT
    return record


def test_a_matching_commitment_verifies(tmp_path):
    path = tmp_path / "ok.json"
    save(_committed(), path)
    assert verify_file(path) == (True, f"{path}: ok")
    assert replay_json(_committed()).note == ""


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: r.update(salt="ff" * 16), "the deck commitment does not match"),
        (lambda r: r.update(match_id="m18"), "the deck commitment does not match"),
        (lambda r: r.update(commitment="0" * 64), "the record says " + "0" * 64),
        (lambda r: r.update(commitment="ABC"), '"commitment" must be 64 lower-case hex digits'),
        (lambda r: r.update(commitment=r["commitment"].upper()), '"commitment" must be 64 lower-case hex'),
        (lambda r: r.update(salt="00"), '"salt" must be 32 lower-case hex digits'),
        (lambda r: r.pop("salt"), '"salt" must be 32 lower-case hex digits (16 bytes), not nothing'),
        (lambda r: r.pop("seed"), 'a "commitment" needs the "seed"'),
        (lambda r: r.pop("match_id"), 'a "commitment" needs the "match_id"'),
        (lambda r: r.update(match_id=7), 'a "commitment" needs the "match_id" it commits to, not 7'),
    ],
)
def test_a_commitment_that_does_not_hold_is_refused(change, words):
    with pytest.raises(RecordFailure) as info:
        replay_json(mutated(_committed(), change))
    assert words in str(info.value) and str(info.value).startswith("FAIL: ")


def test_a_wrong_commitment_fails_the_file_in_one_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(mutated(_committed(), lambda r: r.update(salt="ff" * 16))))
    ok, line = verify_file(path)
    assert not ok and line.startswith(f"{path}: FAIL: the deck commitment does not match: the seed")
    assert "\n" not in line and line.endswith("(docs/shuffle.md)")


def test_an_arena_record_without_a_commitment_verifies_with_a_note(tmp_path):
    old = mutated(_committed(), lambda r: [r.pop("commitment"), r.pop("salt")])
    path = tmp_path / "old.json"
    save(old, path)
    assert verify_file(path) == (True, f"{path}: ok ({NO_COMMITMENT})")
    hand_written = tmp_path / "hand.json"  # no match id: nothing was ever committed to
    save(seeded_record(), hand_written)
    assert verify_file(hand_written) == (True, f"{hand_written}: ok")


def test_an_owners_form_keeps_the_private_fields_of_its_own_seats_only():
    full = _record(private=True)
    full.logs.add(seat=1, deal=1, trick=2, text="seat one's secret")
    full.result.private_details[1] = "seat one's output"
    full.players[1].self_reported_name = "seat-one-self"
    mine = private_record(full, [0])
    assert [entry.text for entry in mine.logs] == ["api_key=LEAK"]
    assert list(mine.result.private_details) == ["last output of the bot:\napi_key=LEAK", ""]
    assert [p.self_reported_name for p in mine.players] == ["tactician", ""]
    theirs = decode_record(private_record_bytes(encode_record(full), [1]))
    assert b"LEAK" not in theirs.SerializeToString() and b"tactician" not in theirs.SerializeToString()
    assert [entry.text for entry in theirs.logs] == ["seat one's secret"]
    assert private_record_bytes(encode_record(full), [0, 1]) == encode_record(full)  # the admin: all of it
    assert is_public(private_record(full, []))  # no seat of yours: nothing private
