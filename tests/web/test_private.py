"""Bots' private output and self-given names reach only their owner and the admin.

The `sealed` store plants MARK in every private place: the record's Log lines, the seats' MatchLog
text, the part of a verdict detail after its first line, a suspension reason's second line, and
(with the records format that has them) the private details and self-reported names. Its players
call themselves "tactician" inside the record. A crawl of every public route finds none of that,
nor the seed of any unrevealed match; the owner's and the admin's tokens open exactly their part.
"""

from __future__ import annotations

import re
import zlib

import pytest

from arena.proto.codec import MAGIC, decode_record
from arena.proto.replay_pb2 import MatchRecord

SELF_NAME = "tactician"


def _text(body: bytes) -> str:
    """A response as searchable text; a binary record is decompressed first."""
    if body.startswith(MAGIC):
        body = zlib.decompress(body[len(MAGIC) :])
    return body.decode("utf-8", "replace")


def public_urls(sealed) -> list[str]:
    """Every public page and API route of the sealed store."""
    urls = [
        "/", "/?season=winter", "/matches", "/matches?season=winter", "/matches?bot=impostor",
        "/matches?verdict=CRASH", "/matches?verdict=OK", "/bots/impostor", "/bots/honest",
        "/api/seasons", "/api/standings", "/api/standings?season=winter", "/api/bots", "/api/bots/impostor",
        "/api/bots/honest", "/api/matches", "/api/matches?season=winter", "/api/matches?verdict=CRASH",
        "/api/matches?bot=honest", "/api/openapi.json", "/api/docs", "/healthz",
    ]  # fmt: skip
    for mid in sealed.seeds:
        urls += [
            f"/matches/{mid}", f"/matches/{mid}?view=0", f"/matches/{mid}?view=1", f"/matches/{mid}/replay.json",
            f"/api/matches/{mid}", f"/api/matches/{mid}/record", f"/api/matches/{mid}/record.bin",
            f"/api/matches/{mid}/timeline", f"/api/matches/{mid}/timeline?view=0",
            f"/api/matches/{mid}/timeline?view=1", f"/api/matches/{mid}/private-record.bin",
        ]  # fmt: skip
    return urls


def test_nothing_private_is_public(sealed_client, sealed):
    secret_seeds = {str(sealed.seeds[mid]) for mid in sealed.unrevealed}
    served = 0
    for url in public_urls(sealed):
        r = sealed_client.get(url)
        assert r.status_code in (200, 401, 403), (url, r.status_code, r.text[:200])
        served += r.status_code == 200
        text = _text(r.content)
        assert sealed.mark not in text, url
        assert "api_key" not in text, url
        assert SELF_NAME not in text, url
        for seed in secret_seeds:
            assert seed not in text, (url, "an unrevealed seed")
    assert served > 40  # the crawl really read the revealed matches' pages and replays


def test_public_record_has_no_logs_and_registered_seats(sealed_client, sealed):
    for mid in sealed.revealed:
        rec = decode_record(sealed_client.get(f"/api/matches/{mid}/record.bin").content)
        stored: MatchRecord = sealed.records[mid]
        assert len(stored.logs) == 2 and len(rec.logs) == 0
        assert [(p.name, p.version) for p in rec.players] == [(n, "1") for n in sealed.seats[mid]]
        assert [list(d.plays) for d in rec.deals] == [list(d.plays) for d in stored.deals]
        assert all("\n" not in d for d in rec.result.details)
        labels = [f"{n}@1" for n in sealed.seats[mid]]
        assert sealed_client.get(f"/api/matches/{mid}/record").json()["seats"] == labels
        assert sealed_client.get(f"/api/matches/{mid}/timeline").json()["seats"] == labels
        page = sealed_client.get(f"/matches/{mid}").text
        assert f"{labels[0]}'s view" in page and f"{labels[1]}'s view" in page


def test_verdict_details_and_suspension_reasons_show_the_first_line_only(sealed_client, sealed):
    crash = sealed.revealed[0]
    out = sealed_client.get(f"/api/matches/{crash}").json()
    assert out["verdicts"] == ["OK", "CRASH"]
    assert out["verdict_details"][1] == "the process exited with status 1 at deal 1, trick 2"
    page = sealed_client.get(f"/matches/{crash}").text
    assert "the process exited with status 1 at deal 1, trick 2" in page and "last output" not in page
    bot = sealed_client.get("/api/bots/impostor").json()
    assert bot["suspended"] and bot["suspension_reason"].endswith("; last: crash")
    assert "; last: crash" in sealed_client.get("/bots/impostor").text


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_private_record_refuses_spectators_and_other_owners(
    sealed_client, sealed, owner_tokens, admin_secret
):
    mid = sealed.revealed[1]
    url = f"/api/matches/{mid}/private-record.bin"
    none = sealed_client.get(url)
    assert none.status_code == 401 and none.headers["www-authenticate"].startswith("Bearer")
    assert "owner's or the admin's token" in none.json()["detail"]
    for token in ("guess", owner_tokens.token("ann"), admin_secret + "x"):
        r = sealed_client.get(url, headers=_auth(token))
        assert r.status_code == 403 and 'error="insufficient_scope"' in r.headers["www-authenticate"], token
        assert sealed.mark not in r.text
    assert sealed_client.get(url, headers={"X-Owner-Token": "guess"}).status_code == 403


@pytest.mark.parametrize("owner,bot", [("ivy", "impostor"), ("hal", "honest")])
def test_an_owner_gets_their_own_seat_only(sealed_client, sealed, owner_tokens, owner, bot):
    for mid in sealed.revealed:
        seat = sealed.seats[mid].index(bot)
        r = sealed_client.get(
            f"/api/matches/{mid}/private-record.bin", headers=_auth(owner_tokens.token(owner))
        )
        assert r.status_code == 200 and r.headers["cache-control"] == "private, no-store"
        rec = decode_record(r.content)
        assert [log.seat for log in rec.logs] == [seat]
        assert rec.logs[0].text.startswith(f"{sealed.mark}-log-{bot}-{mid}")
        other = sealed.seats[mid][1 - seat]
        assert f"{sealed.mark}-log-{other}" not in _text(r.content)
        if "private_details" in rec.result.DESCRIPTOR.fields_by_name:
            assert rec.result.private_details[seat] == f"{sealed.mark}-private-{bot}"
            assert rec.result.private_details[1 - seat] == ""
        player = {p.seat: p for p in rec.players}
        if "self_reported_name" in player[seat].DESCRIPTOR.fields_by_name:
            assert player[seat].self_reported_name == f"{sealed.mark}-selfname-{bot}"
            assert player[1 - seat].self_reported_name == ""
        assert player[seat].name == bot  # the registered name, whatever the bot called itself
        if mid == sealed.revealed[0] and seat == 1:  # its own crash: the whole detail, output included
            assert rec.result.details[1].endswith(f"{sealed.mark}-detail")
        elif mid == sealed.revealed[0]:
            assert "\n" not in rec.result.details[1]


def test_an_owner_waits_for_the_reveal_and_the_admin_does_not(
    sealed_client, sealed, owner_tokens, admin_secret
):
    url = f"/api/matches/{sealed.sealed_done}/private-record.bin"
    r = sealed_client.get(url, headers=_auth(owner_tokens.token("ivy")))
    assert r.status_code == 403 and "its duplicate twin is not" in r.json()["detail"]
    admin = sealed_client.get(url, headers=_auth(admin_secret))
    assert admin.status_code == 200
    rec = decode_record(admin.content)
    assert sorted(log.seat for log in rec.logs) == [0, 1] and rec.seed == sealed.seeds[sealed.sealed_done]
    running = sealed_client.get(
        f"/api/matches/{sealed.running}/private-record.bin", headers=_auth(admin_secret)
    )
    assert running.status_code == 404 and "has no replay" in running.json()["detail"]


def test_the_admin_gets_every_private_part(sealed_client, sealed, admin_secret):
    for mid in sealed.revealed:
        r = sealed_client.get(
            f"/api/matches/{mid}/private-record.bin", headers={"X-Owner-Token": admin_secret}
        )
        assert r.status_code == 200
        rec = decode_record(r.content)
        assert sorted(log.seat for log in rec.logs) == [0, 1]
        assert [p.name for p in rec.players] == list(sealed.seats[mid])


def test_logs_owner_admin_and_held_until_reveal(sealed_client, sealed, owner_tokens, admin_secret):
    url = "/api/bots/impostor/logs"
    assert sealed_client.get(url).status_code == 401
    assert sealed_client.get(url, headers=_auth(owner_tokens.token("hal"))).status_code == 403
    mine = sealed_client.get(url, headers=_auth(owner_tokens.token("ivy"))).json()
    texts = [log["text"] for log in mine["logs"]]
    assert {f"{sealed.mark}-matchlog-impostor-{mid}" for mid in sealed.revealed} <= set(texts)
    assert f"{sealed.mark}-matchlog-impostor-{sealed.sealed_done}" not in texts and mine["held"] == 1
    assert not any("-honest-" in t for t in texts)  # never the opponent's seat
    admin = sealed_client.get(url, headers=_auth(admin_secret)).json()
    assert f"{sealed.mark}-matchlog-impostor-{sealed.sealed_done}" in [log["text"] for log in admin["logs"]]
    assert admin["held"] == 0
    page = sealed_client.post("/bots/impostor/logs", data={"token": admin_secret})
    assert page.status_code == 200 and f"{sealed.mark}-matchlog-impostor-{sealed.sealed_done}" in page.text
    owner_page = sealed_client.post("/bots/impostor/logs", data={"token": owner_tokens.token("ivy")})
    assert "1 match log is held back" in owner_page.text
    wrong = sealed_client.post("/bots/impostor/logs", data={"token": owner_tokens.token("hal")})
    assert wrong.status_code == 403 and sealed.mark not in wrong.text


def test_registered_names_on_every_page(sealed_client, sealed):
    for mid in sealed.seeds:
        page = sealed_client.get(f"/matches/{mid}").text
        h1 = re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)
        assert "impostor@1" in h1 and "honest@1" in h1
