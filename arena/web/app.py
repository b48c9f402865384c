"""The FastAPI application: server-rendered pages (Jinja2) and the JSON API under /api.

`create_app()` is the one entry point: `arena web` serves it with uvicorn, and `arena serve --web`
may mount or serve it too. It reads the same store as the rest of the arena (ARENA_DATABASE_URL,
or `$ARENA_HOME/arena.db`). The admin token, if any, is loaded once here: given, or read from
`admin_token_file`, else from ARENA_ADMIN_TOKEN (`arena.access.admin.AdminToken.load`). The
management operations run on `service` (`arena serve` passes the one its gRPC API uses, so both
share rate limits); without one the app makes its own over its store (`app.state.service`), with
the shared state of $ARENA_STATE_URL if set. With shared state (Redis), the web's sessions and live
stream slots are kept there too, so that every replica behind a proxy knows them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.access.admin import AdminToken
from arena.access.ratelimit import RateLimiter
from arena.access.shared_state import SharedState
from arena.service import ops_watch
from arena.service.core import Service
from arena.store.health import Health
from arena.web import analysis, api, live, manage, pages
from arena.web.access import PrivateAnswers
from arena.web.charts import sparkline
from arena.web.data import WebData
from arena.web.metrics_mw import RequestMetrics
from arena.web.request_ids import RequestIds
from arena.web.sessions import SharedSessions
from arena.web.tokens import OwnerTokens

HERE = Path(__file__).resolve().parent


def create_app(
    url: str | None = None,
    home: str | Path | None = None,
    *,
    data: WebData | None = None,
    tokens: OwnerTokens | None = None,
    admin_token: AdminToken | None = None,
    admin_token_file: str | Path | None = None,
    service: Service | None = None,
    health: Health | None = None,
) -> FastAPI:
    """Build the web app over the store at `url` (or the default store of `home`).

    `health` (default thresholds if None) says what `/healthz` reports (`arena.store.health`).

    Raises AdminTokenError (one line naming the source) for an unreadable or too short admin token."""
    if admin_token is None and admin_token_file is None and service is not None:
        admin_token = service.admin  # the server's Service knows the organiser's token already
    admin = admin_token or AdminToken.load(admin_token_file)  # before the store: a bad token fails fast
    app = FastAPI(
        title="Elfern Arena",
        summary="Standings, bots, matches and replays of the Elfern Arena.",
        description="The JSON API behind the arena's web pages. Every page has an `/api` twin here.",
        version="1",
        docs_url=None,  # served below from local assets: the arena may run without internet
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.data = data or WebData(url, home)
    app.state.tokens = tokens or OwnerTokens.for_home(home)
    app.state.admin_token = admin
    # the management operations (accounts, uploads, challenges, the JSON management API); one per app
    app.state.service = service or Service(
        store=app.state.data.store, admin=admin, limiter=RateLimiter(), state=SharedState.open()
    )
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["sparkline"] = lambda values: Markup(sparkline(values))
    pages.register_template_helpers(templates)
    app.state.templates = templates
    app.add_middleware(GZipMiddleware, minimum_size=2000)  # a viewer page is ~70 kB of SVG and JSON
    app.add_middleware(PrivateAnswers)  # Cache-Control: private, no-store on access.PRIVATE_ROUTES
    app.add_middleware(RequestMetrics)  # every answer counts, by route template and status
    app.add_middleware(RequestIds)  # outermost (added last): every line of the request carries its id
    app.state.health = health or Health(app.state.data.store)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(analysis.router)  # the solver's annotations: POST /matches/{id}/analyse
    live.install(app)  # live pages, SSE, "now playing"
    manage.install(app)  # log in, My bots, uploads, challenges, /api management calls
    state = app.state.service.state
    if state is not None:  # the replicas' sessions and live stream slots, in their Redis
        app.state.sessions = SharedSessions(state)
        live_slots = app.state.live_streams
        app.state.live_streams = ops_watch.Slots(live_slots.per_address, live_slots.total, state, "watch-web")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        return templates.TemplateResponse(
            request,
            "error.html",
            {"status": exc.status_code, "detail": exc.detail},
            status_code=exc.status_code,
            headers=exc.headers,  # Retry-After on a 429, WWW-Authenticate on a 401, Connection: close on a 413
        )

    docs_assets = resources.files("fastapi_offline") / "static"
    app.mount("/api/docs-assets", StaticFiles(directory=str(docs_assets)), name="docs-assets")

    @app.get("/api/docs", include_in_schema=False)
    def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/api/openapi.json",
            title="Elfern Arena API",
            swagger_js_url="/api/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/api/docs-assets/swagger-ui.css",
            swagger_favicon_url="/cards/french/AH.svg",
        )

    @app.get("/healthz", include_in_schema=False)
    def _health(strict: bool = False) -> Response:
        """`ok`, or one line per alert raised (`arena.store.health`); 200 while the web serves, so a
        proxy keeps a replica whose queue is stuck (not its fault). `?strict=1`: 503 on an alert."""
        raised = app.state.health.alerts(wait=False)  # the last reading: never waits for the store
        if not raised:
            return HTMLResponse("ok")
        text = "".join(f"alert {alert.value}: {why}\n" for alert, why in raised)
        return PlainTextResponse(text, status_code=503 if strict else 200)

    return app
