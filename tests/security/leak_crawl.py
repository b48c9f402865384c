"""A small crawler over the real web app on a loopback port: it finds routes in /api/openapi.json,
follows every same-origin link and form of the HTML pages it fetches, and fetches each page as one
identity (spectator, an owner, the admin).

It only reads; the one POST it sends is the logs form, which only reads too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx

_MATCH_IN_PATH = re.compile(r"/matches/(\d+)(?:/|$)")


@dataclass(frozen=True)
class Identity:
    """Who is asking. `token` goes in `Authorization: Bearer` and into a form's `token` field."""

    name: str
    token: str | None = None
    sees_private: bool = False  # may see the marker bot's output and self-reported name

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


@dataclass
class Page:
    method: str
    url: str
    status: int
    body: bytes  # the headers as text, then the body (so a header that leaks is caught too)
    content_type: str
    links: list[str] = field(default_factory=list)
    forms: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)  # method, url, fields

    def about(self) -> frozenset[int]:
        """The match ids this URL names (path or match_id parameter)."""
        ids = {int(x) for x in _MATCH_IN_PATH.findall(urlsplit(self.url).path)}
        ids |= {int(v) for k, v in parse_qsl(urlsplit(self.url).query) if "match" in k and v.isdigit()}
        return frozenset(ids)


Fetch = Callable[[], Page]  # one request, made when called


class _Links(HTMLParser):
    """hrefs, srcs and forms (with every option of their selects) of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.forms: list[tuple[str, str, dict[str, list[str]]]] = []
        self._form: tuple[str, str, dict[str, list[str]]] | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key])
        if tag == "form":
            self._form = (a.get("method", "get").lower(), a.get("action", ""), {})
            self.forms.append(self._form)
        elif self._form is not None and tag in ("input", "select", "textarea", "button") and a.get("name"):
            values = self._form[2].setdefault(a["name"], [])
            if tag == "select":
                self._select = a["name"]
            elif a.get("type") not in ("submit", "button") or a.get("value"):
                values.append(a.get("value", ""))
        elif tag == "option" and self._form is not None and self._select:
            self._form[2][self._select].append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None


STREAM_SECONDS = 1.5  # how long the crawl listens to one server-sent event stream


def _read_for(resp: httpx.Response) -> bytes:
    """What a streaming answer sends until it pauses for STREAM_SECONDS (or ends)."""
    out = bytearray()
    try:
        for chunk in resp.iter_raw():
            out += chunk
            if len(out) > 1 << 20:
                break
    except httpx.ReadTimeout:
        pass
    return bytes(out)


class Crawler:
    """Fetches pages of one origin and keeps what they link to."""

    def __init__(self, base_url: str) -> None:
        self.base = base_url.rstrip("/")
        self.origin = urlsplit(self.base).netloc
        self.client = httpx.Client(base_url=self.base, timeout=60.0, follow_redirects=False)
        self.fetches = 0

    def close(self) -> None:
        self.client.close()

    def normalise(self, link: str, page_url: str) -> str | None:
        """A same-origin link as a path with its query, or None (other origin, mailto:, a fragment)."""
        if link.startswith(("mailto:", "javascript:", "data:", "#")):
            return None
        full = urlsplit(urljoin(self.base + page_url, link))
        if full.scheme not in ("http", "https") or full.netloc != self.origin:
            return None
        return urlunsplit(("", "", full.path or "/", full.query, ""))

    def fetch(self, url: str, identity: Identity, *, data: dict[str, str] | None = None) -> Page:
        method = "POST" if data is not None else "GET"
        # a live stream (server-sent events) stays open for minutes: read what it says for a moment,
        # then hang up, and scan that like any other answer
        live = urlsplit(url).path.endswith("/events")
        timeout = httpx.Timeout(60.0, read=STREAM_SECONDS) if live else None
        with self.client.stream(
            method, url, headers=identity.headers(), data=data, **({"timeout": timeout} if live else {})
        ) as resp:
            kind = resp.headers.get("content-type", "")
            body = _read_for(resp) if live else resp.read()
        self.fetches += 1
        head = "".join(f"{k}: {v}\n" for k, v in resp.headers.items()).encode()
        page = Page(method, url, resp.status_code, head + b"\n" + body, kind)
        if "html" in kind:
            parser = _Links()
            parser.feed(resp.text)
            for link in parser.links:
                norm = self.normalise(link, url)
                if norm:
                    page.links.append(norm)
            for method_, action, fields_ in parser.forms:
                norm = self.normalise(action or url, url)
                if norm:
                    page.forms.append((method_, norm, fields_))
        return page


def form_requests(
    method: str, action: str, fields_: dict[str, list[str]], identity: Identity
) -> list[tuple[str, dict[str, str] | None]]:
    """The requests a form can send: GET forms once per option of each field (others empty); POST forms
    once, with the identity's token in a `token` field."""
    if method == "post":
        data = {
            k: (identity.token or "") if k == "token" else (v[0] if v else "") for k, v in fields_.items()
        }
        return [(action, data)]
    out: list[tuple[str, dict[str, str] | None]] = []
    for name, values in fields_.items():
        for value in dict.fromkeys(values):
            if value:
                sep = "&" if "?" in action else "?"
                out.append((f"{action}{sep}{urlencode({name: value})}", None))
    return out or [(action, None)]


def _enum(schema: dict[str, Any]) -> list[str]:
    if "enum" in schema:
        return [str(v) for v in schema["enum"]]
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            values = _enum(sub)
            if values:
                return values
    return []


def _candidates(name: str, schema: dict[str, Any], values: dict[str, list[str]]) -> list[str] | None:
    """Values to try for a parameter, from what the store holds; None when the test cannot fill it."""
    enum = _enum(schema)
    low = name.lower()
    if enum:
        return enum
    if "match" in low:
        return values["match"]
    if low in ("name", "bot", "bot_name"):
        return values["bot"]
    if "season" in low:
        return values["season"]
    if "verdict" in low:
        return values["verdict"]
    if low in ("download", "private", "raw", "full"):
        return ["true"]
    if low in ("view", "seat", "perspective"):
        return ["omni", "0", "1"]
    if low in ("deal", "step", "offset", "page"):
        return ["1"] if low in ("deal", "page") else ["0"]
    if schema.get("type") == "integer" and "maximum" in schema:
        return [str(schema["maximum"])]
    return None


def openapi_requests(spec: dict[str, Any], values: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """Every GET route of the OpenAPI document with its path parameters filled from the store's ids,
    plus one URL per query parameter value; and the routes the test could not fill."""
    urls: list[str] = []
    unfilled: list[str] = []
    for path, item in spec.get("paths", {}).items():
        op = item.get("get")
        if op is None:
            continue
        params = op.get("parameters", []) + item.get("parameters", [])
        path_params = [p for p in params if p.get("in") == "path"]
        query_params = [p for p in params if p.get("in") == "query"]
        bases = [path]
        for p in path_params:
            cands = _candidates(p["name"], p.get("schema", {}), values)
            if cands is None:
                unfilled.append(f"{path} (path parameter {p['name']})")
                bases = []
                break
            bases = [b.replace("{" + p["name"] + "}", str(v)) for b in bases for v in cands]
        for base in bases:
            urls.append(base)
            for p in query_params:
                for v in _candidates(p["name"], p.get("schema", {}), values) or []:
                    urls.append(f"{base}?{urlencode({p['name']: v})}")
    return list(dict.fromkeys(urls)), unfilled
