"""The HTML pages without JavaScript: every page renders from the store, and the replay viewer steps
through a deal by its links alone, showing exactly the replay's cards at every step."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from arena.engine import Rules


class Board(HTMLParser):
    """Collects the card codes the board shows: per hand (by seat), on the table, and hidden backs."""

    def __init__(self) -> None:
        super().__init__()
        self.where: list[str | None] = []
        self.hands: dict[int, list[str]] = {0: [], 1: []}
        self.backs: dict[int, int] = {0: 0, 1: 0}
        self.table: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "div" and "hand" in cls:
            self.where.append(f"hand{a['data-seat']}")
        elif tag == "div" and "trick" in cls:
            self.where.append("trick")
        elif tag == "div":
            self.where.append(None)
        if tag == "svg" and "card" in cls:
            ctx = next((w for w in reversed(self.where) if w), None)
            if ctx and ctx.startswith("hand"):
                if "back" in cls:
                    self.backs[int(ctx[4])] += 1
                else:
                    self.hands[int(ctx[4])].append(a["data-card"])
            elif ctx == "trick":
                self.table.append(a["data-card"])

    def handle_endtag(self, tag):
        if tag == "div" and self.where:
            self.where.pop()


def board_of(page: str) -> Board:
    section = re.search(r'<section id="board".*?</section>', page, re.S)
    assert section, "no board on the page"
    b = Board()
    b.feed(section.group(0))
    return b


def link(page: str, element_id: str) -> str | None:
    m = re.search(rf'<a id="{element_id}"[^>]*href="([^"]+)"', page)
    return html.unescape(m.group(1)) if m else None


def test_standings_page(client):
    page = client.get("/").text
    assert '<meta name="viewport"' in page
    assert 'href="/bots/alice"' in page and 'href="/bots/carol"' in page
    assert '<option value="autumn"' in page and '<option value="spring" selected' in page
    assert "±" in page and 'class="spark"' in page
    assert "LOS ↓" in page and "likelihood of superiority" in page  # each row's LOS over the next
    assert re.search(r'<td class="num[^"]*">\d+%</td>', page)  # a row's figure, as a percentage
    autumn = client.get("/?season=autumn").text
    assert '<option value="autumn" selected' in autumn
    assert client.get("/?season=nope").status_code == 404


def test_standings_page_pages_and_finds_a_bot(client):
    """100 rows a page by default; "worse"/"better" links by place, a bot search that opens the page
    holding its row with the row marked, and a 404 naming a bot that has none."""
    first = client.get("/?season=autumn&limit=2").text
    assert "Rows 1–2 of 3" in first and 'rel="prev"' not in first
    nxt = re.search(r'<a rel="next" href="([^"]+)"', first)
    assert nxt and html.unescape(nxt.group(1)) == "/?season=autumn&after=2&limit=2"
    second = client.get(html.unescape(nxt.group(1))).text
    assert "Rows 3–3 of 3" in second and 'rel="next"' not in second and 'rel="prev"' in second
    assert 'role="search"' in first and 'name="bot"' in first
    whole = client.get("/?season=autumn").text
    assert "Rows 1–3 of 3" in whole and 'rel="next"' not in whole
    last = re.findall(r'class="bot" href="/bots/(\w+)"', whole)[-1]
    found = client.get(f"/?season=autumn&limit=2&bot={last}").text
    assert "Rows 3–3 of 3" in found and re.search(
        rf'<tr class="focus" id="focus">\s*<td>\d+</td>\s*<td><a class="bot" href="/bots/{last}"', found
    )
    missing = client.get("/?season=autumn&bot=nobody")
    assert missing.status_code == 404 and "nobody" in missing.text and "<html" in missing.text


def test_bot_page(client, arena):
    page = client.get("/bots/bob").text
    assert '<svg class="chart"' in page and "<polyline" in page
    assert "Head to head" in page and 'href="/bots/alice"' in page
    for mid, rec in arena.records.items():
        assert (f'href="/matches/{mid}"' in page) == ("bob" in rec["names"])
    assert 'action="/bots/bob/logs"' in page and "bob says hello" not in page
    missing = client.get("/bots/nobody")
    assert missing.status_code == 404 and "There is no bot named" in missing.text and "<html" in missing.text


def test_logs_page_needs_the_token(client, owner_tokens):
    wrong = client.post("/bots/bob/logs", data={"token": "guess"})
    assert wrong.status_code == 403 and "build of bob" not in wrong.text
    right = client.post("/bots/bob/logs", data={"token": owner_tokens.token("ben")})
    assert right.status_code == 200 and "build of bob v1: ok" in right.text


def test_match_list_page_filters(client, arena):
    page = client.get("/matches", params={"verdict": "CRASH"}).text
    ids = set(map(int, re.findall(r'<td[^>]*><a href="/matches/(\d+)">', page)))
    assert ids == {arena.crash_match}
    page = client.get("/matches", params={"season": "spring", "bot": "alice"}).text
    ids = set(map(int, re.findall(r'<td[^>]*><a href="/matches/(\d+)">', page)))
    want = {m for m, r in arena.records.items() if r["season"] == "spring" and "alice" in r["names"]}
    assert ids == want and want


def test_viewer_steps_through_a_deal_by_links(client, arena, expected_states):
    mid = next(m for m, r in arena.records.items() if r["season"] == "spring")  # German deck
    rec = arena.records[mid]["record"]
    want = expected_states(Rules.from_pairs(["flags=1", "deck=german"]), rec.deals[0])
    url = f"/matches/{mid}?deal=1&step=0&view=omni"
    page = client.get(url).text
    assert 'id="card-AS"' in page and "Eichel" in page  # the German sprite and names
    for k, (hand0, hand1, table, _) in enumerate(want):
        b = board_of(page)
        assert (b.hands[0], b.hands[1], b.table) == (hand0, hand1, table), f"step {k}"
        nxt = link(page, "next")
        assert nxt is not None
        page = client.get(nxt).text
    assert 'data-deal="2" data-step="0"' in page  # forward from the deal's last step opens the next deal
    back = client.get(link(page, "prev")).text
    assert 'data-deal="1" data-step="32"' in back


def test_viewer_seat_view_shows_backs(client, arena):
    mid = next(iter(arena.records))
    page = client.get(f"/matches/{mid}", params={"deal": 1, "step": 0, "view": "1"}).text
    b = board_of(page)
    assert b.hands[0] == [] and b.backs[0] == 6 and len(b.hands[1]) == 6
    clamp = client.get(f"/matches/{mid}", params={"deal": 99, "step": 999}).text
    assert 'id="board"' in clamp  # out-of-range steps clamp to the last one


def test_match_downloads_from_the_page(client, arena):
    mid = arena.crash_match
    page = client.get(f"/matches/{mid}").text
    assert f'href="/matches/{mid}/replay.json"' in page and f'href="/api/matches/{mid}/record.bin"' in page
    assert "CRASH" in page and "process exited with code 1" in page and "unfinished" in page
    end = client.get(f"/matches/{mid}", params={"deal": 2, "step": 99}).text
    assert "The match ended here by a verdict (" in end and ": CRASH)." in end
    r = client.get(f"/matches/{mid}/replay.json")
    assert r.headers["content-disposition"] == f'attachment; filename="match-{mid}.json"'
    assert r.json()["format"] == "elfern/1"
    card = client.get("/cards/german/QS.svg")
    assert card.headers["content-type"].startswith("image/svg+xml") and 'id="card-QS"' in card.text
    assert client.get("/cards/german/XX.svg").status_code == 404


def test_the_game_is_explained_where_it_is_seen(client, arena):
    """Issue #33 §3: a rules page derived from docs/rules.md (its value tables the engine's), linked from
    every match and live page, the terms linked in place with their meaning, and a legend under the
    standings saying what Elo, ±, the bounds, Live, LOS and the marks mean."""
    from arena.engine.rules import VALUE_TABLES

    rules = client.get("/rules")
    assert rules.status_code == 200 and "How Elfern is played and scored" in rules.text
    for anchor in ("honours", "lines", "flags", "staender", "schneider", "schwarz", "stock", "glossary"):
        assert f'id="{anchor}"' in rules.text, anchor
    values = re.search(r'<table id="values">.*?</table>', rules.text, re.S).group(0)
    shown = [
        [int(x) for x in re.findall(r'<td class="num">(\d+)</td>', row)] for row in values.split("<tr>")[2:]
    ]
    assert shown == [list(v) for v in VALUE_TABLES.values()]

    mid = min(arena.records)
    for page in (client.get(f"/matches/{mid}").text, client.get(f"/live/{mid}").text):
        assert 'id="rules-link" href="/rules"' in page
        assert re.search(r'<a class="term" href="/rules#honours" title="[^"]*11[^"]*">', page)
        assert 'href="/rules#lines"' in page
    match = client.get(f"/matches/{mid}").text
    for anchor in ("schneider", "schwarz", "staender", "flags"):
        assert f'href="/rules#{anchor}"' in match, anchor

    legend = client.get("/").text
    legend = legend[legend.index('id="standings-legend"') :]
    for word in ("<b>Elo</b>", "<b>±</b>", "<b>≥</b>", "<b>Live</b>", "<b>LOS ↓</b>", "provisional"):
        assert word in legend, word
    assert "differ from Elo" in legend
