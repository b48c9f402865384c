"""Binary match records: determinism (same seed, same bytes apart from timing), export to elfern/1
that verify accepts, the text rendering per seat, and `last`. Matches are real: two bot processes
and a referee on a Unix socket."""

from __future__ import annotations

import json
import os
import time
import warnings

import pytest

from arena.engine import Rules, card_label, check_commitment, parse_card
from arena.proto import replay_pb2
from arena.proto.codec import decode_record, encode_record, strip_timing
from arena.referee import TimeControl
from arena.replay.export import record_to_json
from arena.replay.record import ReplayNotFound, load_record, resolve
from arena.replay.render import render
from arena.replay.verify import replay_json, verify_file
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match

TC = TimeControl(startup=20.0, move=0.5, bank=2.0)
SALT = bytes.fromhex("00112233445566778899aabbccddeeff")  # fixed, so that two runs compare byte for byte


def _play(repo_root, a, b, seed, match_id, rules=None, salt=SALT):
    def bundle(name):
        path = repo_root / "sample_bots" / "python" / name
        return load_bundle(path if path.is_dir() else repo_root / "tests" / "referee" / "bots" / name)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    return play_match((bundle(a), bundle(b)), rules=rules or Rules(flags=2), seed=seed, time_control=TC,
                      launcher=launcher, match_id=match_id, salt=salt)  # fmt: skip


@pytest.fixture(scope="module")
def matches(repo_root):
    return {
        "a": _play(repo_root, "random", "random", 42, "det-1"),
        "b": _play(repo_root, "random", "random", 42, "det-1"),
        "other_seed": _play(repo_root, "random", "random", 43, "det-1"),
        "crash": _play(repo_root, "crash", "random", 42, "det-2"),
        "drawn_salt": _play(repo_root, "random", "random", 42, "det-1", salt=None),
    }


def test_same_seed_same_record_apart_from_timing(matches):
    a, b = matches["a"].record, matches["b"].record
    assert encode_record(strip_timing(a)) == encode_record(strip_timing(b))
    assert a.deals[0].plays[0].think_us > 0  # think times are stored...
    assert any(
        pa.think_us != pb_.think_us for pa, pb_ in zip(a.deals[0].plays, b.deals[0].plays, strict=True)
    )
    other = matches["other_seed"].record
    assert other.deals[0].deck != a.deals[0].deck  # ...and the seed decides the deals


def test_the_salt_changes_only_the_commitment(matches):
    """A drawn salt: the same decks and plays, a different (but matching) commitment."""
    a, drawn = matches["a"].record, matches["drawn_salt"].record
    assert a.salt == SALT.hex() and drawn.salt != a.salt and len(bytes.fromhex(drawn.salt)) == 16
    assert drawn.commitment != a.commitment
    assert check_commitment(drawn.commitment, 42, "det-1", bytes.fromhex(drawn.salt))
    assert [d.deck for d in drawn.deals] == [d.deck for d in a.deals]


def test_replay_bytes_decode_to_the_record(matches):
    out = matches["a"]
    assert decode_record(out.replay_bytes) == out.record
    assert out.record.format == 1 and out.record.seed == 42
    assert [p.name for p in out.record.players] == ["random", "random"]


@pytest.mark.parametrize("key", ["a", "crash"])
def test_export_is_elfern1_that_verify_accepts(matches, key):
    record = matches[key].record
    data = json.loads(json.dumps(record_to_json(record)))
    verified = replay_json(data)
    assert data["format"] == "elfern/1" and data["seed"] == 42
    assert (data["commitment"], data["salt"]) == (record.commitment, SALT.hex())  # revealed, and checked
    if key == "a":
        assert "verdict" not in data and verified.match.over
        assert data["winner"] == matches[key].winner
    else:
        assert data["verdict"]["status"] == "CRASH" and data["verdict"]["seat"] == 0
        assert data["winner"] == 1
        assert len(data["deals"][-1]["plays"]) == sum(len(d.plays) for d in record.deals[-1:])


def test_seat_view_shows_only_what_the_seat_knew(matches):
    record = matches["a"].record
    deal = record.deals[0]
    hidden_seat = 1 - deal.dealer  # the non-dealer's hand: deck packets 0-1, 4-5, 8-9
    dealer_hand = {card_label(parse_card(deal.deck[i])) for i in (2, 3, 6, 7, 10, 11)}
    seat_view = "\n".join(render(record, seat=hidden_seat, only_deal=1))
    omniscient = "\n".join(render(record, only_deal=1))
    assert "stock (draw order)" in omniscient and "stock (draw order)" not in seat_view
    hold_line = next(line for line in seat_view.splitlines() if "you hold:" in line)
    assert not dealer_hand & set(hold_line.split(":", 1)[1].split())
    assert "opponent drew" not in seat_view and "you drew" in seat_view
    assert sum(1 for line in omniscient.splitlines() if "holds:" in line) == 2


def test_last_is_the_newest_replay(tmp_path, matches):
    with pytest.raises(ReplayNotFound):
        resolve("last", tmp_path)
    old, new = tmp_path / "a.replay", tmp_path / "b.replay"
    old.write_bytes(matches["a"].replay_bytes)
    new.write_bytes(matches["crash"].replay_bytes)
    os.utime(old, (time.time() + 60, time.time() + 60))  # names do not decide: modification time does
    assert resolve("last", tmp_path) == old
    assert load_record("last", tmp_path).match_id == "det-1"


def test_verify_reads_binary_replays_and_checks_their_commitment(tmp_path, matches):
    good = tmp_path / "good.replay"
    good.write_bytes(matches["crash"].replay_bytes)
    assert verify_file(good) == (True, f"{good}: ok")
    forged = replay_pb2.MatchRecord()
    forged.CopyFrom(matches["a"].record)
    forged.salt = "ff" * 16  # a salt other than the committed one: the seed was not the one committed to
    bad = tmp_path / "forged.replay"
    bad.write_bytes(encode_record(forged))
    ok, line = verify_file(bad)
    assert not ok and line.startswith(f"{bad}: FAIL: the deck commitment does not match")
    corrupt = tmp_path / "corrupt.replay"
    corrupt.write_bytes(matches["a"].replay_bytes[:20])
    ok, line = verify_file(corrupt)
    assert not ok and line.startswith(f"{corrupt}: FAIL: corrupt match record") and "\n" not in line
