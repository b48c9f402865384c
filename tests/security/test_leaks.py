"""The leak test (issue 11): a real duplicate season plays in the bwrap sandbox while a crawler reads
every public page and API route of the real web app, and nothing it can read gives away

- the marker that one bot writes to its stderr and into its `Log` lines (its owner and the admin
  do see it: the positive controls),
- the seed, the salt, a deck or a hand of a match that is not over, or whose duplicate twin is not,
- the name the bot gives itself instead of the one it is registered under.

The crawl is proven not to pass vacuously: it must have read match pages while the store held those
matches queued, running, and done-with-the-twin-unfinished (embargoed); and the same scanner, pointed
at a finished match's public record and viewer page, must find that match's seed, deck and hands.
Every problem is collected and reported at once, so one run lists every leak.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
import pytest
from leak_crawl import Crawler, Fetch, Identity, Page, form_requests, openapi_requests
from leak_grpc import GrpcCrawl, arena_service
from leak_secrets import Finding, Scanner, Snapshot, expand, snapshot
from leak_world import FAKE_NAME, SEASON, World
from sqlalchemy import select

from arena.proto.codec import decode_record
from arena.store.models import Bot, BotVersion, Match

PROBE_EVERY = 25  # requests of a round's tail between looks for a match embargoed right now
PLAY_DEADLINE = 150.0  # seconds the season may take before the test gives up (it takes ~20)
HOT_LINKS = 8  # discovered links about one unfinished match, refetched every round
COLD_LINKS = 120  # other discovered links per round, each fetched once per identity (again at the end)

SPECTATOR = Identity("spectator")


def _route(url: str) -> str:
    """A URL with its ids replaced, to group findings."""
    parts = urlsplit(url)
    path = re.sub(r"/\d+(?=/|$)", "/{id}", parts.path)
    query = re.sub(r"=\d+", "={n}", parts.query)
    return path + (f"?{query}" if query else "")


def _diverse(urls: list[str], cap: int) -> list[str]:
    """At most `cap` URLs, taking one of each route shape in turn, so a cap never hides a kind of page."""
    groups: dict[str, list[str]] = defaultdict(list)
    for url in sorted(urls):
        groups[_route(url)].append(url)
    out: list[str] = []
    while len(out) < cap and any(groups.values()):
        for key in sorted(groups):
            if groups[key] and len(out) < cap:
                out.append(groups[key].pop(0))
    return out


class LeakCrawl:
    """Rounds of crawling as one identity at a time, each page scanned against the store as it was
    right after the page was read (a match hidden then was hidden while the page was made)."""

    def __init__(self, world: World, base: str, grpc: GrpcCrawl, grpc_ids: dict[str, Identity]) -> None:
        self.world = world
        self.crawler = Crawler(base)
        self.grpc, self.grpc_ids = grpc, grpc_ids  # the Arena service, and who is who there (API tokens)
        self.scanner = Scanner(marker=world.marker[5:17], fake_names=(FAKE_NAME,))
        self.observed: dict[tuple[str, str], set[int]] = defaultdict(set)  # (identity, state) -> ids
        self.errors: list[Finding] = []
        self.unfilled: set[str] = set()
        self.links: set[str] = set()
        self.forms: dict[tuple[str, str], dict[str, list[str]]] = {}
        self.done_cold: set[tuple[str, str]] = set()  # (identity, url) fetched once
        self.done_revealed: set[tuple[str, int]] = set()  # (identity, match id) crawled once revealed
        self.pages = 0
        self.spec = self.crawler.client.get("/api/openapi.json").json()

    # -- what to fetch ---------------------------------------------------------------------------
    def _values(self, snap: Snapshot) -> dict[str, list[str]]:
        with self.world.store.read() as s:
            bots = list(s.scalars(select(Bot.name)))
        return {
            "match": [str(i) for i in sorted(snap.rows)],
            "bot": bots,
            "season": [SEASON],
            "verdict": ["CRASH", "OK", "VOID"],
        }

    def _fixed(self, values: dict[str, list[str]]) -> list[str]:
        urls = ["/", "/matches", "/api/docs", "/healthz", "/api/openapi.json"]
        urls += [f"/?season={SEASON}", f"/matches?season={SEASON}", "/matches?verdict=CRASH"]
        for bot in values["bot"]:
            urls += [f"/bots/{bot}", f"/matches?bot={bot}", f"/api/bots/{bot}/logs"]
        return urls

    @staticmethod
    def _match_urls(mid: int) -> list[str]:
        page = f"/matches/{mid}"
        api = f"/api/matches/{mid}"
        return [
            page,
            f"{page}?view=0",
            f"{page}?view=1",
            f"{page}?deal=2",
            f"{page}/replay.json",
            api,
            f"{api}/record",
            f"{api}/record.bin",
            f"{api}/timeline",
            f"{api}/timeline?view=0",
        ]

    # -- fetching and scanning -------------------------------------------------------------------
    def _web(self, identity: Identity, url: str, data: dict[str, str] | None = None) -> Fetch:
        return lambda: self.crawler.fetch(url, identity, data=data)

    def _read(self, identity: Identity, fetches: list[Fetch]) -> None:
        """Make each request and scan its answer against the store as it was just after (a match hidden
        then was hidden while the answer was made); a match whose state was the same just before and
        just after counts as seen in that state."""
        before = snapshot(self.world.store)
        for fetch in fetches:
            page = fetch()
            after = snapshot(self.world.store)
            self.pages += 1
            self.links.update(page.links)
            for method, action, fields_ in page.forms:
                self.forms[(method, action)] = fields_
            about = page.about()
            for mid in about:
                if mid in before.rows and mid in after.rows:
                    state = after.state(after.rows[mid])
                    if before.state(before.rows[mid]) == state:
                        self.observed[(identity.name, state)].add(mid)
            label = f"{page.method} {page.url}"
            if page.status >= 500:
                tail = page.body[-160:].decode("utf-8", "replace").strip().replace("\n", " ")
                self.errors.append(Finding("error", label, identity.name, f"status {page.status}: {tail}"))
            self.scanner.scan(
                label,
                identity.name,
                page.body,
                after.hidden(),
                marker_allowed=identity.sees_private,
                names_allowed=identity.sees_private,
                about=about,
            )
            before = after

    def round(self, identity: Identity, *, final: bool = False, links: bool = True) -> None:
        """Read every match's pages and gRPC calls (embargoed, running, queued ones first), every list
        and bot page and call, every route of the OpenAPI document and (unless not `links`) the links and
        forms found so far, bounded. A `final` round reads every match again, revealed ones included."""
        snap = snapshot(self.world.store)
        values = self._values(snap)
        api_urls, unfilled = openapi_requests(self.spec, values)
        self.unfilled.update(unfilled)
        by_match: dict[int, list[str]] = defaultdict(list)
        other: list[str] = []
        for url in api_urls + self._fixed(values):
            ids = Page("GET", url, 0, b"", "").about()
            (by_match[min(ids)] if ids else other).append(url)
        order = {"embargoed": 0, "running": 1, "queued": 2, "revealed": 3, "failed": 4}
        rpc_identity = self.grpc_ids[identity.name]
        pending = set(snap.rows)
        while pending:  # the most interesting match first, by the store's state now (one just embargoed)
            now = snapshot(self.world.store)
            left = [now.rows[i] for i in pending if i in now.rows]
            if not left:
                break
            m = min(left, key=lambda m: (order[now.state(m)], m.id))
            pending.discard(m.id)
            if now.state(m) in ("revealed", "failed") and not final:
                if (identity.name, m.id) in self.done_revealed:
                    continue
                self.done_revealed.add((identity.name, m.id))
            about = [u for u in self.links if m.id in Page("GET", u, 0, b"", "").about()]
            hot = _diverse(about, HOT_LINKS if links else 0)
            urls = list(dict.fromkeys(self._match_urls(m.id) + by_match.get(m.id, []) + hot))
            fetches = self.grpc.match_calls(rpc_identity, m.id) + [self._web(identity, u) for u in urls]
            if now.state(m) == "embargoed":  # the moment an owner's log would quote the twin's hands
                logs = [self._web(identity, f"/api/bots/{b}/logs") for b in values["bot"]]
                logs += [
                    self._web(identity, f"/bots/{b}/logs", {"token": identity.token or ""})
                    for b in values["bot"]
                ]
                fetches = logs + self.grpc.logs_calls(rpc_identity, values["bot"]) + fetches
            self._read(identity, fetches)
        requests: list[tuple[str, dict[str, str] | None]] = [(u, None) for u in dict.fromkeys(other)]
        for (method, action), fields_ in sorted(self.forms.items()):
            requests += form_requests(method, action, fields_, identity)
        cold = [u for u in self.links if not Page("GET", u, 0, b"", "").about()]
        cold = [u for u in cold if final or (identity.name, u) not in self.done_cold]
        cold = _diverse(cold, COLD_LINKS if links else 0)
        self.done_cold.update((identity.name, u) for u in cold)
        requests += [(u, None) for u in cold]
        unique = {(u, tuple(sorted(d.items())) if d else None): (u, d) for u, d in requests}
        fetches = [self._web(identity, u, d) for u, d in unique.values()]
        fetches += self.grpc.global_calls(rpc_identity, values["bot"], [SEASON])
        for start in range(0, len(fetches), PROBE_EVERY):  # the long tail, with looks at embargoed matches
            self._read(identity, fetches[start : start + PROBE_EVERY])
            self._probe(identity, "embargoed")
            if not self.observed[(SPECTATOR.name, "running")]:
                self._probe(SPECTATOR, "running")

    def _probe(self, identity: Identity, state: str) -> None:
        """Read the pages of a match that is in `state` right now and not yet seen so: an embargo lasts
        one match, and a round's long tail of lists and forms would otherwise let it pass unread; the
        spectator's rounds take turns with the owners', and on a loaded machine every match could run
        during the others' rounds (a spectator that never saw a running match makes the crawl vacuous)."""
        now = snapshot(self.world.store)
        seen = self.observed[(identity.name, state)]
        hot = [mid for mid, m in sorted(now.rows.items()) if now.state(m) == state and mid not in seen]
        for mid in hot[:2]:
            self._read(identity, [self._web(identity, u) for u in self._match_urls(mid)[:4]])


def _positive_controls(world: World, base: str, impostor_matches: list[int]) -> list[str]:
    """The owner and the admin DO see the marker bot's output; another owner does not."""
    problems: list[str] = []
    secret = world.marker
    own = {"Authorization": f"Bearer {world.owner_tokens['impostor']}"}
    admin = {"Authorization": f"Bearer {world.admin_token}"}
    rival = {"Authorization": f"Bearer {world.owner_tokens['random']}"}
    # From an address of its own: the crawl's tokens that open nothing (another owner's web token on
    # this bot, as a guesser's) spent 127.0.0.1's anonymous budget, and that answers 429 (docs/security.md).
    fresh = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=base, timeout=60, transport=fresh) as c:
        for who, headers in (("owner", own), ("admin", admin)):
            r = c.get("/api/bots/impostor/logs", headers=headers)
            if r.status_code != 200 or secret not in r.text:
                problems.append(f"{who}: /api/bots/impostor/logs is {r.status_code} without the marker")
        token = world.owner_tokens["impostor"]
        r = c.post("/bots/impostor/logs", data={"token": token})
        if r.status_code != 200 or secret not in r.text:
            problems.append(f"owner: the logs form of /bots/impostor is {r.status_code} without the marker")
        r = c.get("/api/bots/impostor/logs", headers=rival)
        if r.status_code not in (401, 403) or secret in r.text:
            problems.append(f"another owner: /api/bots/impostor/logs is {r.status_code}, not refused")
        for mid in impostor_matches[:2]:
            for who, headers in (("owner", own), ("admin", admin)):
                r = c.get(f"/api/matches/{mid}/private-record.bin", headers=headers)
                if r.status_code != 200 or secret.encode() not in expand(r.content):
                    problems.append(
                        f"{who}: /api/matches/{mid}/private-record.bin is {r.status_code} without the marker"
                    )
            r = c.get(f"/api/matches/{mid}/private-record.bin", headers=rival)
            if secret.encode() in expand(r.content):
                problems.append(f"another owner: /api/matches/{mid}/private-record.bin shows the marker")
            r = c.get(f"/api/matches/{mid}/private-record.bin")
            if r.status_code not in (401, 403):
                problems.append(f"spectator: /api/matches/{mid}/private-record.bin is {r.status_code}")
    return problems


def _grpc_controls(
    grpc: GrpcCrawl, world: World, api: dict[str, str], impostor_matches: list[int]
) -> list[str]:
    """On the gRPC service too the marker reaches the owner (API token) and the admin, not another owner."""
    from arena.proto import arena_pb2 as pb

    problems: list[str] = []
    who = {
        "owner": Identity("owner", api["impostor"]),
        "admin": Identity("admin", world.admin_token),
        "another owner": Identity("rival", api["random"]),
    }
    for name, identity in who.items():
        logs = grpc._call(
            "GetBotLogs", grpc.stub.GetBotLogs, pb.GetBotLogsRequest(name="impostor"), identity, False
        )
        private = [
            grpc._call(
                "GetReplay",
                grpc.stub.GetReplay,
                pb.GetReplayRequest(match_id=m, private=True),
                identity,
                False,
            )
            for m in impostor_matches[:2]
        ]
        seen = [world.marker.encode() in expand(p.body) for p in [logs, *private]]
        if name == "another owner" and any(seen):
            problems.append(
                "grpc: another owner reads the marker bot's output (GetBotLogs or GetReplay private)"
            )
        elif name != "another owner" and not all(seen):
            problems.append(
                f"grpc: the {name} does not see the marker in GetBotLogs and private GetReplay: {seen}"
            )
    return problems


def _names(world: World, base: str, done: list[int]) -> list[str]:
    """Every finished match shows the registered name and version of each seat (`impostor@1`)."""
    problems: list[str] = []
    with world.store.read() as s:
        labels = {v.id: (v.bot.name, str(v.number)) for v in s.scalars(select(BotVersion))}
        seats = {m.id: (labels[m.version0_id], labels[m.version1_id]) for m in s.scalars(select(Match))}
    with httpx.Client(base_url=base, timeout=60) as c:
        for url in (f"/api/bots/{FAKE_NAME}", f"/bots/{FAKE_NAME}"):
            if c.get(url).status_code != 404:
                problems.append(f"{url} answers: a bot is found by the name it gives itself")
        for mid in done:
            want = seats[mid]
            out = c.get(f"/api/matches/{mid}").json()
            if out.get("versions") != [f"{n}@{v}" for n, v in want]:
                problems.append(f"/api/matches/{mid} shows {out.get('versions')}, registered {want}")
            r = c.get(f"/api/matches/{mid}/record.bin")
            if r.status_code == 200:
                players = [(p.name, p.version) for p in decode_record(r.content).players]
                if players != list(want):
                    problems.append(
                        f"/api/matches/{mid}/record.bin names its seats {players}, registered {want}"
                    )
    return problems


def _twins_apart(world: World) -> list[str]:
    """No two matches dealing the same decks were played at the same time (started_at..finished_at)."""
    problems: list[str] = []
    with world.store.read() as s:
        rows = list(s.scalars(select(Match).where(Match.status == "done")))
    by_seed: dict[int, list[Match]] = defaultdict(list)
    for m in rows:
        by_seed[m.seed].append(m)
    for twins in by_seed.values():
        for a in twins:
            for b in twins:
                if a.id >= b.id:
                    continue
                if a.started_at is None or b.started_at is None:
                    problems.append(f"matches {a.id} and {b.id} (twins) have no start time in the store")
                elif a.started_at < b.finished_at and b.started_at < a.finished_at:
                    problems.append(f"twins {a.id} and {b.id} were played at the same time")
    return problems


def _scanner_finds(crawl: LeakCrawl, base: str, world: World, done: list[int]) -> list[str]:
    """The scanner is shown to find a seed, a deck and hands in the real formats: a revealed match's
    public record and viewer page, scanned as if that match were still hidden, must give them away."""
    snap = snapshot(world.store)
    probe = Scanner(marker=crawl.scanner.marker, fake_names=())
    want = {("seed", "record"), ("deck", "record"), ("deck", "record.bin"), ("hand", "page")}
    with httpx.Client(base_url=base, timeout=60) as c:
        for mid in done:
            found: set[tuple[str, str]] = set()
            for what, url in (
                ("record", f"/api/matches/{mid}/record"),
                ("record.bin", f"/api/matches/{mid}/record.bin"),
                ("page", f"/matches/{mid}"),
            ):
                r = c.get(url)
                if r.status_code == 200:
                    found |= {(f.kind, what) for f in probe.scan(url, "probe", r.content, [snap.rows[mid]])}
            if want <= found:
                return []
    return [f"the scanner found no seed, deck and hands in any revealed match's public pages ({done})"]


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_duplicate_season_in_play_leaks_nothing_to_the_public(world: World, web: str, season_run) -> None:
    from arena.access.owners import add_owner

    api = {bot: add_owner(world.store, owner) for bot, owner in (("impostor", "mallory"), ("random", "rita"))}
    rival = Identity("another-owner", world.owner_tokens["random"])
    owner = Identity("owner", world.owner_tokens["impostor"], sees_private=True)
    grpc_ids = {
        "spectator": SPECTATOR,
        "another-owner": Identity("another-owner", api["random"]),
        "owner": Identity("owner", api["impostor"], sees_private=True),
    }
    with arena_service(world.store, world.admin_token) as address:
        grpc = GrpcCrawl(address)
        try:
            crawl = LeakCrawl(world, web, grpc, grpc_ids)
            _play_and_crawl(world, web, crawl, season_run, (rival, owner), api)
        finally:
            grpc.close()


def _play_and_crawl(
    world: World,
    web: str,
    crawl: LeakCrawl,
    season_run: Callable[[], subprocess.Popen],
    who: tuple[Identity, Identity],
    api: dict[str, str],
) -> None:
    """Crawl before play, while `arena season run` plays, and once more after; then judge everything."""
    rival, owner = who
    identities = [SPECTATOR, rival, SPECTATOR, owner]
    started = time.monotonic()
    crawl.round(SPECTATOR)  # before play: every match is queued
    runner = season_run()
    rounds = 1
    while runner.poll() is None:
        if time.monotonic() - started > PLAY_DEADLINE:
            pytest.fail(f"the season did not finish in {PLAY_DEADLINE:.0f}s:\n{world.output('season-run')}")
        crawl.round(identities[(rounds - 1) % len(identities)])  # the spectator first, while play starts
        rounds += 1
    assert runner.returncode == 0, world.output("season-run")
    for identity in (SPECTATOR, rival, owner):  # all revealed now: the marker and names still must not show
        crawl.round(identity, final=True, links=identity is SPECTATOR)

    snap = snapshot(world.store)
    done = sorted(i for i, m in snap.rows.items() if m.status == "done")
    with world.store.read() as s:
        impostor = s.scalars(select(BotVersion.id).join(Bot).where(Bot.name == "impostor")).all()
        impostor_matches = sorted(
            m.id for m in s.scalars(select(Match)) if {m.version0_id, m.version1_id} & set(impostor)
        )
    problems = [f.line() for f in crawl.scanner.findings + crawl.errors]
    grouped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for f in crawl.scanner.findings + crawl.errors:
        grouped[(f.kind, f.identity, _route(f.url.split(" ", 1)[1]))].append(f.detail)
    summary = [
        f"{kind:6} as {who}: {route} ({len(details)}x, e.g. {details[0][:120]})"
        for (kind, who, route), details in sorted(grouped.items())
    ]
    for state in ("queued", "running"):
        if not crawl.observed[("spectator", state)]:
            summary.append(
                f"vacuous: the spectator's crawl never read a match page while a match was {state}"
            )
    if not any(ids for (_, state), ids in crawl.observed.items() if state == "embargoed"):
        summary.append("vacuous: the crawl never read a match while it was done and its twin was not")
    summary += _scanner_finds(crawl, web, world, done)
    summary += _positive_controls(world, web, [i for i in impostor_matches if i in done])
    summary += _grpc_controls(crawl.grpc, world, api, [i for i in impostor_matches if i in done])
    summary += _names(world, web, done)
    summary += _twins_apart(world)
    if crawl.unfilled:
        summary.append(f"routes the crawl could not fill: {sorted(crawl.unfilled)}")
    report = (
        f"{len(problems)} findings in {crawl.pages} pages, {rounds} rounds, {len(done)} matches, "
        f"{time.monotonic() - started:.0f}s; observed "
        + ", ".join(f"{who} {st}={len(ids)}" for (who, st), ids in sorted(crawl.observed.items()))
    )
    print(report)
    assert not summary, report + "\n" + "\n".join(summary)
