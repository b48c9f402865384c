"""User-facing errors: one line that names the bad input and the fix, never a traceback.

`UserError` is a mistake the user can fix (exit 2). `MatchesFailed` is a run whose matches failed
to play and were given up (exit 4). `NotSettled` is an `--until-stable` run that reached its
cap first (exit 5). `ServiceLost` is a service the command needs
(the database, the Redis broker) that cannot be reached or went away during the run (exit 3): the
line names the service and its address. `lost_service` recognises those exceptions wherever they
come from, so that the `arena` group (arena/cli/__init__.py) turns them into that one line.
`missing_extra` does the same for an optional extra that is not installed (arena/extras.py): a
`UserError` naming the extra and its pip command.
"""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """Raise for any mistake the user can fix; click prints `Error: <message>` and exits 2."""

    exit_code = 2


class MatchesFailed(click.ClickException):
    """Matches a run had to give up (each failed MAX_ATTEMPTS times without a result); `Error:
    <message>`, exit 4: the run did its work but not all of it, and the line says why and where."""

    exit_code = 4


class NotSettled(click.ClickException):
    """`--until-stable` reached its --max-matches cap before the season settled; `Error: <message>`,
    exit 5: every match played is kept, the line names who is unsettled and how to continue."""

    exit_code = 5


class ServiceLost(click.ClickException):
    """A service this command needs is unreachable or went away; `Error: <message>`, exit 3."""

    exit_code = 3


def missing_extra(exc: ImportError) -> UserError | None:
    """The one line for an ImportError that means a missing extra (web, postgres, celery), else None."""
    from arena.extras import extra_of

    missing = extra_of(exc)
    return UserError(str(missing)) if missing is not None else None


def _first_line(exc: BaseException) -> str:
    lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def _log_unraisable(unraisable: object) -> None:
    import logging

    logging.getLogger("arena.cli").debug("after a lost broker: %r", getattr(unraisable, "exc_value", None))


def lost_service(exc: BaseException) -> ServiceLost | None:
    """The one line for an exception that means a lost database or broker, else None (a bug: its
    traceback is worth showing). Only modules already imported are consulted: nothing is loaded here."""
    import sys

    store_db = sys.modules.get("arena.store.db")
    if store_db is not None and isinstance(exc, store_db.StoreUnavailable):
        return ServiceLost(str(exc))
    sa_exc = sys.modules.get("sqlalchemy.exc")
    if sa_exc is not None and isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        where = store_db.OPENED[-1] if store_db is not None and store_db.OPENED else "the database"
        return ServiceLost(
            f"lost the database {where} during the run ({_first_line(exc)}); matches in flight were "
            "released where the database still answered; start it again and rerun the same command"
        )
    redis_exc = sys.modules.get("redis.exceptions")
    kombu_exc = sys.modules.get("kombu.exceptions")
    broker = ((redis_exc.ConnectionError, redis_exc.TimeoutError) if redis_exc is not None else ()) + (
        (kombu_exc.OperationalError,) if kombu_exc is not None else ()
    )
    pool = sys.modules.get("arena.workers.pool")
    if (broker and isinstance(exc, broker)) or (pool is not None and isinstance(exc, pool.ServiceLost)):
        celery = sys.modules.get("arena.workers.celery_app")
        where = celery.broker_url_shown() if celery is not None else "the broker"
        # Celery's result objects try the lost broker again when they are collected at exit; their
        # errors would follow the one line as "Exception ignored ..." tracebacks: log them instead.
        sys.unraisablehook = _log_unraisable
        return ServiceLost(
            f"lost the Redis broker {where} ({_first_line(exc)}); matches in flight were released; "
            "start Redis again (ARENA_BROKER_URL) and rerun the same command"
        )
    return None
