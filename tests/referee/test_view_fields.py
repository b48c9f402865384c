"""One table drives the View conversions (arena/proto/view_fields.py): the wire message, the engine's View
and the SDK's View must all agree with it, so a new field forgotten in the table fails here."""

from __future__ import annotations

import dataclasses

from arena.engine import Rules
from arena.engine.view import View as EngineView
from arena.proto import referee_pb2 as pb
from arena.proto.view_fields import OTHER_VIEW_FIELDS, VIEW_FIELDS
from arena.referee.convert import rules_to_proto
from arena.sdk.view import View as SdkView

FROM_TURN_REQUEST = {"turn_id", "legal", "move_seconds", "bank_seconds"}  # the SDK's, off the TurnRequest


def test_every_field_of_the_wire_view_has_its_row():
    wire = [f.name for f in pb.View.DESCRIPTOR.fields]
    rows = [name for name, _, _ in VIEW_FIELDS]
    assert sorted(rows + list(OTHER_VIEW_FIELDS)) == sorted(wire)
    assert len(set(rows)) == len(rows)


def test_every_row_reads_a_field_of_the_engines_view():
    engine = {f.name for f in dataclasses.fields(EngineView)}
    assert {attr for _, attr, _ in VIEW_FIELDS} <= engine


def test_the_sdks_view_is_the_table_and_the_turn_request():
    sdk = {f.name for f in dataclasses.fields(SdkView)}
    assert sdk == {name for name, _, _ in VIEW_FIELDS} | set(OTHER_VIEW_FIELDS) | FROM_TURN_REQUEST


def test_the_rules_message_is_the_rules_dataclass():
    assert [f.name for f in pb.Rules.DESCRIPTOR.fields] == [f.name for f in dataclasses.fields(Rules)]
    rules = Rules.from_dict({"trumps": True, "max_deals": 3, "scoring": "altenburg"})
    msg = rules_to_proto(rules)
    assert (msg.trumps, msg.max_deals, msg.scoring) == (True, 3, "altenburg")
    assert rules_to_proto(Rules()).max_deals == 0  # no limit travels as 0
