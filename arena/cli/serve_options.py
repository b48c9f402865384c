"""The options of `arena serve`, one decorator: where it listens, what it plays, and the bounds it
puts on its callers (builds, disk, open matches, shared state, calls and connections)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from arena.cli.ladder_common import SANDBOX_HELP, warm_option
from arena.cli.web import web_limit_options

F = TypeVar("F", bound=Callable[..., object])


OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--unix",
        "unix_path",
        default="var/run/referee.sock",
        show_default=True,
        metavar="PATH",
        help="Unix socket to listen on ('' for none).",
    ),
    click.option(
        "--tcp", default=None, metavar="HOST:PORT", help="Also (or only) listen on TCP, e.g. 127.0.0.1:50051."
    ),
    click.option("--create", is_flag=True, help="Create one match at start and print its two seat tokens."),
    click.option(
        "--seed",
        type=click.IntRange(0, 2**64 - 1),
        default=0,
        show_default=True,
        help="Seed of --create's match.",
    ),
    click.option(
        "--rules", "rule_pairs", multiple=True, metavar="KEY=VALUE", help="Rules of --create's match."
    ),
    click.option(
        "--time",
        "time_text",
        default="move=1s,bank=10s,startup=600s",
        show_default=True,
        metavar="SPEC",
        help="Clocks of --create's match.",
    ),
    click.option(
        "--replays",
        "replay_dir",
        default="var/replays",
        show_default=True,
        metavar="DIR",
        help="Where finished matches' replays are written.",
    ),
    click.option(
        "--admin-token-file",
        "admin_token_file",
        default=None,
        metavar="PATH",
        help="File holding the admin token the management calls need (else $ARENA_ADMIN_TOKEN).",
    ),
    click.option(
        "--web",
        "web_addr",
        default=None,
        metavar="HOST:PORT",
        is_flag=False,
        flag_value="127.0.0.1:8000",
        help="Also serve the web pages and API (`arena web`) from this process; bare --web means 127.0.0.1:8000.",
    ),
    click.option(
        "--db",
        "db_url",
        default=None,
        metavar="URL",
        help="The store the API, the web and the workers use (default: ARENA_DATABASE_URL, else "
        "$ARENA_HOME/arena.db, as every other command).",
    ),
    click.option(
        "--workers",
        type=click.IntRange(0, 256),
        default=0,
        show_default=True,
        help="Ladder matches this server plays at once, plus a quarter as many places (at least one) "
        "for challenges (0: none; then `arena season run` or `arena worker` must play them).",
    ),
    click.option(
        "--players-nice",
        "players_nice",
        type=click.IntRange(0, 19),
        default=10,
        show_default=True,
        help="Added to the server's niceness in the --workers process, its matches and their bots: "
        "the ladder yields the CPU to the server's calls (0: the same priority as the server).",
    ),
    click.option(
        "--stable-ci",
        "stable_ci",
        type=click.FloatRange(min=0, min_open=True),
        default=100.0,  # arena.ladder.settle.STABLE_CI, as `arena season run --stable-ci`
        show_default=True,
        help="With --workers: each running season is played until settled, as `arena season run "
        "--until-stable` settles it (every bot's place among its neighbours known, or its gap or "
        "interval within this many Elo). A bench that needs the ladder busy throughout asks for a "
        "target no season reaches in its time.",
    ),
    click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP),
    warm_option,
    click.option(
        "--tls-cert",
        "tls_cert",
        default=None,
        metavar="FILE",
        help="PEM certificate (chain) for TLS on --tcp and --web; needs --tls-key.",
    ),
    click.option(
        "--tls-key", "tls_key", default=None, metavar="FILE", help="The PEM private key of --tls-cert."
    ),
    click.option(
        "--max-open-matches",
        "max_open",
        type=click.IntRange(1, 100_000),
        default=1000,
        show_default=True,
        help="Matches created (CreateMatch, --create) and not yet over; more get RESOURCE_EXHAUSTED.",
    ),
    click.option(
        "--build-slots",
        "build_slots",
        type=click.IntRange(1, 64),
        default=2,
        show_default=True,
        help="Submitted bundles built at once, at most one per owner, on threads of their own; the "
        "others wait for a slot (SubmitBotLive says so).",
    ),
    click.option(
        "--disk-quota",
        "disk_quota",
        type=click.IntRange(1, 1_000_000),
        default=512,
        show_default=True,
        metavar="MIB",
        help="Disk per owner for stored bundles, build outputs and uploads in flight, in MiB; an upload "
        "that would pass it is refused before (or while) its body is written.",
    ),
    click.option(
        "--shared-state",
        "state_url",
        default=None,
        envvar="ARENA_STATE_URL",
        metavar="URL",
        help="Redis (redis://HOST:PORT/DB) for the counters every replica must share: rate limits, web "
        "sessions, upload, build and live-stream slots (default: ARENA_STATE_URL; none: this process only).",
    ),
    click.option(
        "--max-calls",
        "max_calls",
        type=click.IntRange(1, 100_000),
        default=None,
        help="gRPC calls in flight at once, a bot's Play aside; more get RESOURCE_EXHAUSTED with "
        "retry-after  [default: the calls' threads, 192]",
    ),
    click.option(
        "--max-calls-per-address",
        "max_calls_per_address",
        type=click.IntRange(1, 100_000),
        default=32,
        show_default=True,
        help="gRPC calls in flight at once from one address (streams included); more get "
        "RESOURCE_EXHAUSTED with retry-after.",
    ),
    click.option(
        "--max-joining",
        "max_joining",
        type=click.IntRange(1, 100_000),
        default=512,
        show_default=True,
        help="Bots' Play streams open over TCP and not yet joined, in all; more get RESOURCE_EXHAUSTED "
        "with retry-after. A stream gives its place back once its Join is accepted, and is dropped "
        "after 10 s without a message (the Unix socket's streams are not counted).",
    ),
    click.option(
        "--max-joining-per-address",
        "max_joining_per_address",
        type=click.IntRange(1, 100_000),
        default=32,
        show_default=True,
        help="Bots' Play streams not yet joined from one address (none for a trusted proxy); more get "
        "RESOURCE_EXHAUSTED with retry-after.",
    ),
    click.option(
        "--max-connections",
        "max_connections",
        type=click.IntRange(1, 1_000_000),
        default=None,
        help="gRPC connections open at once on each listener (--tcp, --unix); one more is closed as it "
        "is accepted. Per address is the proxy's bound (docs/deploy.md)  [default: a quarter of "
        "`ulimit -n`, at most 4096]",
    ),
    click.option(
        "--connection-idle",
        "connection_idle",
        type=click.FloatRange(0.1, 86_400),
        default=60.0,
        show_default=True,
        metavar="SECONDS",
        help="A gRPC connection with no call open for this long is closed (clients reconnect at their "
        "next call); one carrying a stream never is.",
    ),
    web_limit_options,
]


def serve_options(fn: F) -> F:
    """Every option of `arena serve`, in the order `--help` lists them."""
    for option in reversed(OPTIONS):
        fn = option(fn)
    return fn
