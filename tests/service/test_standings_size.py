"""GetStandings' reply stays small however large the ladder: each row carries its LOS over the next
row, and a LOS table is sent only when asked, of at most 32 bots (a 1,000-entry ladder's full table
was 9 MB, over gRPC's 4 MiB default, issue #30). Over the limit is RESOURCE_EXHAUSTED, an unknown bot
NOT_FOUND."""

from __future__ import annotations

import grpc
import pytest
from service_support import Running

from arena.ladder.standings import LOS_MAX
from arena.ladder.standings_page import PAGE, PAGE_MAX
from arena.proto import arena_pb2 as pb
from tests.ladder.ladder_rows import make_season, random_results, record

ENTRIES = 1000
MB = 1 << 20


def test_a_thousand_entry_ladders_standings_stay_under_a_megabyte(arena_service: Running) -> None:
    ids = make_season(arena_service.service.store, ENTRIES, "wide")
    record(arena_service.service.store, "wide", random_results(ids, 8 * ENTRIES, seed=5))
    api = arena_service.stub()

    first = api.GetStandings(pb.GetStandingsRequest(season="wide"), timeout=120)
    assert len(first.rows) == PAGE and first.total == ENTRIES and first.first == 1
    assert not first.los and not first.los_bots  # no table unless asked
    pages, token = [first], first.next_page_token
    while token:  # the whole table, page after page: every row once, in order
        pages.append(api.GetStandings(pb.GetStandingsRequest(season="wide", page_token=token), timeout=120))
        token = pages[-1].next_page_token
    assert [p.first for p in pages] == list(range(1, ENTRIES + 1, PAGE))
    assert all(p.ByteSize() < MB / 20 for p in pages)  # a page is tens of KB, whatever the ladder
    reply = pb.Standings(rows=[r for p in pages for r in p.rows])
    assert len({r.bot for r in reply.rows}) == len(reply.rows) == ENTRIES
    rated = [r for r in reply.rows if not r.unrated]
    with_next = [r for r in rated if r.has_los_next]
    assert len(with_next) >= len(rated) - 2 and all(0.0 <= r.los_next <= 1.0 for r in with_next)
    assert with_next[0].los_next >= 0.5  # ranked above the next: at least even odds

    top = api.GetStandings(pb.GetStandingsRequest(season="wide", los_top=LOS_MAX), timeout=120)
    assert len(top.los_bots) == LOS_MAX == len(top.los) and top.ByteSize() < MB
    assert top.los_bots[:3] == [r.bot for r in reply.rows[:3]]
    assert top.los[0].values[1] == pytest.approx(reply.rows[0].los_next, abs=1e-4)

    pair = api.GetStandings(
        pb.GetStandingsRequest(season="wide", los_bots=[rated[9].bot, rated[3].bot]), timeout=120
    )
    assert list(pair.los_bots) == [rated[3].bot, rated[9].bot]  # in rank order
    assert pair.los[0].values[1] == pytest.approx(1.0 - pair.los[1].values[0], abs=1e-4)
    around = api.GetStandings(pb.GetStandingsRequest(season="wide", los_around=rated[500].bot), timeout=120)
    assert list(around.los_bots) == [r.bot for r in rated[498:503]]

    with pytest.raises(grpc.RpcError) as over:
        api.GetStandings(pb.GetStandingsRequest(season="wide", los_top=LOS_MAX + 1), timeout=120)
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and str(LOS_MAX) in over.value.details()
    with pytest.raises(grpc.RpcError) as unknown:
        api.GetStandings(pb.GetStandingsRequest(season="wide", los_bots=["nobody@1"]), timeout=120)
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND and "nobody@1" in unknown.value.details()
    with pytest.raises(grpc.RpcError) as empty:  # a fuzzed request once made this INTERNAL (KeyError)
        api.GetStandings(pb.GetStandingsRequest(season="wide", los_bots=[""]), timeout=120)
    assert empty.value.code() == grpc.StatusCode.NOT_FOUND and "empty name" in empty.value.details()

    found = api.GetStandings(
        pb.GetStandingsRequest(season="wide", bot=rated[250].bot.split("@")[0]), timeout=120
    )
    assert found.first == 201 and rated[250].bot in [r.bot for r in found.rows]
    small = api.GetStandings(pb.GetStandingsRequest(season="wide", limit=7, page_token="14"), timeout=120)
    assert [r.bot for r in small.rows] == [r.bot for r in reply.rows[14:21]] and small.next_page_token == "21"
    for bad in (
        pb.GetStandingsRequest(season="wide", page_token="x1"),
        pb.GetStandingsRequest(limit=PAGE_MAX + 1),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            api.GetStandings(bad, timeout=120)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as nobody:
        api.GetStandings(pb.GetStandingsRequest(season="wide", bot="nobody"), timeout=120)
    assert nobody.value.code() == grpc.StatusCode.NOT_FOUND and "nobody" in nobody.value.details()
