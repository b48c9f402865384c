"""The CLI as a client of a remote `arena serve`: one channel, one bearer token, one error mapper.

Every command that works remotely takes `--server ADDR` (or ARENA_SERVER) and `--api-token T` (or
ARENA_API_TOKEN; never ARENA_TOKEN, which is the seat token a bot reads). Without a server the
command works on the local store as before. A local user has a shell on the machine that holds the
store, so where a command runs a management operation locally (`arena matches`, `arena challenge`,
`arena bots logs --json`) it runs it in-process as the admin (`LocalClient`).

Errors are one line with exit code 2 (`UserError`), never a traceback: an unreachable server names
the address, a refused token shows only its first characters.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import click

from arena.access.display import shown
from arena.cli.errors import UserError

DEADLINE = 30.0  # seconds for every unary call
SUBMIT_DEADLINE = 900.0  # a submission returns only after the bundle has built on the server

REMOTE_HELP = (
    "With --server (or ARENA_SERVER) this asks a remote `arena serve` over gRPC instead of the local "
    "store, authenticated by --api-token (or ARENA_API_TOKEN); see docs/remote.md."
)


def with_remote(help_text: str | None, extra: str = "") -> str:
    """A command's help with the paragraph on remote mode appended (click's docstring, dedented)."""
    import inspect

    return inspect.cleandoc(help_text or "") + "\n\n" + REMOTE_HELP + (" " + extra if extra else "")


@dataclass(frozen=True)
class Target:
    """Where to connect: the gRPC target, whether to use TLS, and the address as the user wrote it."""

    target: str
    tls: bool
    given: str


def parse_address(address: str, tls_ca: str | None = None) -> Target:
    """`host:port`, `https://host[:port]` (TLS, port 443 by default), `http://host:port`, `unix:/path`."""
    text = address.strip()
    if not text:
        raise UserError("--server is empty; give HOST:PORT, e.g. --server arena.example.org:50051")
    tls = tls_ca is not None
    if text.startswith("https://"):
        text, tls = text[len("https://") :], True
        if ":" not in text.rsplit("]", 1)[-1]:
            text += ":443"
    elif text.startswith("http://"):
        text = text[len("http://") :]
    text = text.rstrip("/")
    if not text.startswith("unix:") and ":" not in text.rsplit("]", 1)[-1]:
        raise UserError(f"--server {address!r}: give HOST:PORT, e.g. {address}:50051 (or https://{address})")
    return Target(text, tls, address.strip())


def _is_loopback(target: str) -> bool:
    if target.startswith("unix:"):
        return True
    host = target.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Remote:
    """A channel to one `arena serve` and the caller's token; every call goes through `call`."""

    def __init__(self, address: str, token: str | None = None, tls_ca: str | None = None) -> None:
        # gRPC's C core logs connection and TLS failures to stderr; the one-line error says it all
        # (GRPC_VERBOSITY=ERROR brings them back for debugging)
        os.environ.setdefault("GRPC_VERBOSITY", "NONE")
        import grpc

        from arena.proto import arena_pb2_grpc

        self.where = parse_address(address, tls_ca)
        self.token = (token or "").strip() or None
        if self.where.tls:
            roots = None
            if tls_ca:
                try:
                    with open(tls_ca, "rb") as fh:
                        roots = fh.read()
                except OSError as exc:
                    raise UserError(f"--tls-ca {tls_ca}: cannot read it ({exc.strerror})") from None
            self.channel = grpc.secure_channel(self.where.target, grpc.ssl_channel_credentials(roots))
        else:
            if self.token and not _is_loopback(self.where.target):
                click.echo(
                    f"warning: sending the API token unencrypted to {self.where.given}; "
                    "use https://HOST or --tls-ca FILE when the server has TLS",
                    err=True,
                )
            self.channel = grpc.insecure_channel(self.where.target)
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.token}")] if self.token else []

    def call(self, method: str, request: Any, timeout: float = DEADLINE, allow: tuple = ()) -> Any:
        """A unary call (or a client-streamed one: pass an iterator) with a deadline; errors mapped.

        A status in `allow` answers None instead of an error (e.g. PERMISSION_DENIED for optional parts).
        """
        import grpc

        try:
            return getattr(self.stub, method)(request, metadata=self.metadata, timeout=timeout)
        except grpc.RpcError as err:
            if err.code() in allow:
                return None
            raise self.error(err, method, timeout) from None

    def pages(self, method: str, request: Any, field: str) -> list[Any]:
        """Every item of `field` over every page of a paged list call (ListBots, ListSeasons,
        ListOwners): each next request carries the answer's `next_page_token`."""
        items: list[Any] = []
        while True:
            answer = self.call(method, request)
            items += getattr(answer, field)
            if not answer.next_page_token:
                return items
            request.page_token = answer.next_page_token

    def stream(
        self, method: str, request: Any, timeout: float | None = None, allow: tuple = ()
    ) -> Iterator[Any]:
        """A server-streamed call (by default no overall deadline: a live match lasts as long as it
        lasts). A status in `allow` ends the stream quietly instead of an error."""
        import grpc

        try:
            yield from getattr(self.stub, method)(request, metadata=self.metadata, timeout=timeout)
        except grpc.RpcError as err:
            if err.code() in allow:
                return
            raise self.error(err, method, timeout) from None

    def error(self, err: Any, method: str, timeout: float | None) -> UserError:
        return UserError(explain(err, self.where.given, self.token, method, timeout))

    def close(self) -> None:
        self.channel.close()


def _one_line(text: str, token: str | None) -> str:
    out = " ".join((text or "").split())
    if token:  # a server must never echo the token; if one does, the user's terminal does not either
        out = out.replace(token, shown(token))
    return out[:500]


def _reason(details: str) -> str:
    low = details.lower()
    for known in ("connection refused", "name or service not known", "no route to host", "timed out"):
        if known in low:
            return known
    if "dns resolution failed" in low or "could not resolve" in low:
        return "unknown host name"
    if "ssl" in low or "handshake" in low or "certificate" in low:
        return (
            "the TLS handshake failed (a self-signed server needs its CA as --tls-ca FILE; "
            "a plain-text server needs HOST:PORT without https://)"
        )
    if "socket closed" in low:
        return "the connection was closed (a TLS server needs https://HOST:PORT or --tls-ca FILE)"
    return details or "no answer"


def _command(method: str) -> str:
    """The command being run, as the user typed it (`arena season create`), for the error line: a
    person knows the command, not the gRPC method behind it (`method`, the fallback outside click)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return method
    path = ctx.command_path.split(" ", 1)
    return f"`arena {path[1]}`" if len(path) == 2 else "`arena`"


def explain(err: Any, address: str, token: str | None, method: str, timeout: float | None) -> str:
    """One line for a failed call: what happened, with which address or token, and what to do."""
    import grpc

    code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
    details = _one_line(err.details() if callable(getattr(err, "details", None)) else str(err), token)
    name = code.name if code is not None else "UNKNOWN"
    if code == grpc.StatusCode.UNAVAILABLE:
        return f"cannot reach arena server {address}: {_reason(details)}; check --server / ARENA_SERVER"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return (
            f"arena server {address} did not answer {_command(method)} within {timeout or DEADLINE:.0f} s; "
            "check --server / ARENA_SERVER, or try again later"
        )
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return (
            f"the server refused the API token {shown(token)} (UNAUTHENTICATED): {details}; "
            "check --api-token / ARENA_API_TOKEN"
        )
    if code == grpc.StatusCode.PERMISSION_DENIED:
        hint = "" if token else "; no API token was sent: set --api-token or ARENA_API_TOKEN"
        return f"permission denied (PERMISSION_DENIED): {details}{hint}"
    if code == grpc.StatusCode.NOT_FOUND:
        return f"not found (NOT_FOUND): {details}"
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return f"the server refused the request (INVALID_ARGUMENT): {details}"
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return f"not now (FAILED_PRECONDITION): {details}"
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        wait = _retry_after(err)
        again = f"; retry after {wait} s" if wait and "retry" not in details.lower() else ""
        return f"over the limit (RESOURCE_EXHAUSTED): {details}{again}"
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return (
            f"the server at {address} does not offer {_command(method)} (UNIMPLEMENTED): {details}; "
            "it may run an older arena"
        )
    return f"the arena server failed {_command(method)} ({name}): {details}"


def _retry_after(err: Any) -> str | None:
    try:
        for key, value in err.trailing_metadata() or ():
            if key == "retry-after":
                return str(value)
    except Exception:  # a call object without trailers
        return None
    return None


# ---- the options every remote-capable command takes ----

_OPTIONS = (
    click.option(
        "--server",
        envvar="ARENA_SERVER",
        default=None,
        metavar="ADDR",
        help="A remote `arena serve` (HOST:PORT, or https://HOST for TLS); env ARENA_SERVER. "
        "Without it the command uses the local store.",
    ),
    click.option(
        "--api-token",
        envvar="ARENA_API_TOKEN",
        default=None,
        metavar="TOKEN",
        help="Your API token (elf_..., from the organiser) or the admin token; env ARENA_API_TOKEN. "
        "Only sent with --server.",
    ),
    click.option(
        "--tls-ca",
        envvar="ARENA_TLS_CA",
        default=None,
        metavar="FILE",
        type=click.Path(dir_okay=False),
        help="Use TLS, trusting the CA certificate(s) in FILE (a self-signed server); env ARENA_TLS_CA.",
    ),
)


def remote_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add --server/--api-token/--tls-ca; the command receives `remote` (a Remote, or None: local)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, server: str | None, api_token: str | None, tls_ca: str | None, **kw: Any) -> Any:
        ctx = click.get_current_context()
        if not server:
            if api_token and ctx.get_parameter_source("api_token") == click.core.ParameterSource.COMMANDLINE:
                raise UserError("--api-token is only used with --server ADDR (or ARENA_SERVER)")
            return fn(*args, remote=None, **kw)
        remote = Remote(server, api_token, tls_ca)
        try:
            return fn(*args, remote=remote, **kw)
        finally:
            remote.close()

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def local_only(remote: Remote | None, what: str) -> None:
    """Refuse an option that has no meaning against a server, in one line."""
    if remote is not None:
        raise UserError(f"{what} works only on the local store; leave out --server (and ARENA_SERVER)")


def store_only(command: str) -> None:
    """Refuse a local-store-only command while ARENA_SERVER names a server: acting on a local store
    the user did not mean (e.g. `owners add` on a laptop) would hand out a token the server rejects."""
    server = os.environ.get("ARENA_SERVER", "").strip()
    if server:
        raise UserError(
            f"`arena {command}` works on the local store only, but ARENA_SERVER is set ({server}); "
            "run it on the server's machine with ARENA_SERVER unset"
        )


def need_remote(remote: Remote | None, command: str) -> Remote:
    if remote is None:
        raise UserError(
            f"`arena {command}` talks to a running `arena serve`: give --server HOST:PORT (or ARENA_SERVER)"
        )
    return remote


# ---- the same operations in-process, over the local store, as the admin ----


class LocalClient:
    """Runs a management call's operation in this process over the local store, as the admin.

    It answers `call(method, request)` with the same messages as `Remote`, so a command renders both
    the same way; the operation's errors become the same one-line errors.
    """

    def __init__(self) -> None:
        from arena.access.roles import ADMIN
        from arena.cli.ladder_common import open_store
        from arena.service.core import Service

        self.service = Service(store=open_store(), launcher="bwrap")
        self.principal = ADMIN

    def call(self, method: str, request: Any, timeout: float = DEADLINE) -> Any:
        from arena.service import ops_bots, ops_challenge, ops_results
        from arena.service.errors import status_of

        ops: dict[str, Callable[[Any], Any]] = {
            "ListMatches": lambda r: ops_results.list_matches(self.service, r),
            "ListBots": lambda r: ops_bots.list_bots(
                self.service, r.owner, r.include_retired, r.limit, r.page_token
            ),
            "Challenge": lambda r: ops_challenge.challenge(self.service, self.principal, r),
            "GetBotLogs": lambda r: ops_bots.bot_logs(
                self.service, self.principal, r.name, r.match_id, r.limit
            ),
        }
        try:
            return ops[method](request)
        except Exception as exc:
            status = status_of(exc)
            if status is None:
                raise
            raise UserError(f"{status.message} ({status.code.name})") from None


def client_for(remote: Remote | None) -> Remote | LocalClient:
    return remote if remote is not None else LocalClient()


def progress(text: str) -> None:
    """A progress line on stderr (kept off stdout so `--json` output stays parseable)."""
    click.echo(text, err=True)


def is_tty() -> bool:
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
