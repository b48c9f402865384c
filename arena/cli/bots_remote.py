"""The remote halves of `arena bots` (arena/cli/bots.py): submit by streaming an archive, list, show
and logs over the management API, printed in the same shapes as the local commands."""

from __future__ import annotations

import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from arena.cli.errors import UserError
from arena.cli.remote import SUBMIT_DEADLINE, LocalClient, Remote, client_for, progress

CHUNK = 64 * 1024  # bytes per SubmitBotChunk
PROGRESS_FROM = 1024 * 1024  # uploads from this size print their progress
MANIFEST = "bot.toml"


def bundle_files(root: Path) -> list[Path]:
    """Regular files and symlinks under `root`, sorted, links not followed, the SKIP folders left out:
    the entries a local submission of the same folder hashes (arena.bundlehash.tree_hash)."""
    from arena.bundlehash import tree_entries

    return [path for path, _ in tree_entries(root)]


def pack(path: Path) -> tuple[IO[bytes], str, int]:
    """An open archive of the bundle at `path`, its format ("tar.gz" or "zip") and its size in bytes.

    A folder is packed into a temporary .tar.gz holding the entries a local submission hashes
    (symlinks as links; __pycache__, .git, node_modules, ... left out), so both give the same version.
    """
    if path.is_file():
        low = path.name.lower()
        if not low.endswith((".tar.gz", ".tgz", ".zip")):
            raise UserError(
                f"{path}: not a bot bundle; give a folder with {MANIFEST}, a .tar.gz, .tgz or .zip"
            )
        fh = path.open("rb")
        return fh, "zip" if low.endswith(".zip") else "tar.gz", path.stat().st_size
    if not (path / MANIFEST).is_file():
        raise UserError(f"{path}: no {MANIFEST} found; create one with name, language and run = [...]")
    out = tempfile.TemporaryFile(prefix="arena-bundle-")
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for entry in bundle_files(path):
            tar.add(entry, arcname=entry.relative_to(path).as_posix(), recursive=False)
    size = out.tell()
    out.seek(0)
    return out, "tar.gz", size


def _chunks(header: Any, fh: IO[bytes], size: int, label: str) -> Iterator[Any]:
    from arena.proto import arena_pb2 as pb

    yield pb.SubmitBotChunk(header=header)
    sent, shown = 0, -1
    loud = size >= PROGRESS_FROM
    while block := fh.read(CHUNK):
        yield pb.SubmitBotChunk(data=block)
        sent += len(block)
        tenth = sent * 10 // max(size, 1)
        if loud and tenth != shown:
            shown = tenth
            progress(
                f"uploading {label}: {sent / 2**20:.1f} of {size / 2**20:.1f} MiB ({sent * 100 // size}%)"
            )
    if loud:
        progress("uploaded; the server is building the bundle in its sandbox…")


def submit_remote(remote: Remote, path_text: str, name: str, owner: str | None) -> None:
    """Stream the bundle to SubmitBotLive; print what `arena bots submit` prints locally, the build's
    output live included."""
    from arena.proto import arena_pb2 as pb

    path = Path(path_text)
    fh, fmt, size = pack(path)
    with fh:
        header = pb.SubmitBotHeader(name=name, format=fmt, size=size, owner=owner or "")
        label = f"{path.name} ({fmt})"
        done = _submit_live(remote, _chunks(header, fh, size, label))
        if done is None:  # a server without SubmitBotLive: the same upload, its build shown at the end
            fh.seek(0)
            done = remote.call("SubmitBot", _chunks(header, fh, size, label), SUBMIT_DEADLINE)
    v = done.version
    if not done.new:
        click.echo(f"{name}@{v.number} unchanged (same content {v.content_hash[:12]}); nothing new submitted")
        return
    click.echo(
        f"submitted {name}@{v.number} ({v.language}, content {v.content_hash[:12]}) to {remote.where.given}"
    )
    if not v.build_ok:
        from arena.cli.bots import failed_build

        raise UserError(
            f"{name}@{v.number}: build FAILED; it will not play. {failed_build(name, done.build_log)}"
        )


def _submit_live(remote: Remote, chunks: Iterator[Any]) -> Any:
    """Stream the upload to SubmitBotLive, showing the build's output as it arrives the way a local
    submit shows it (`build | ...`); the SubmitBotResponse, or None from a server without the call."""
    import grpc

    from arena.cli.bots import BuildEcho

    done = None
    for event in remote.stream(
        "SubmitBotLive", chunks, SUBMIT_DEADLINE, allow=(grpc.StatusCode.UNIMPLEMENTED,)
    ):
        kind = event.WhichOneof("event")
        if kind == "output":
            for line in event.output.splitlines():
                BuildEcho.line(line)
        elif kind == "truncated":
            BuildEcho.line(None)
        elif kind == "running_seconds":
            BuildEcho.beat(event.running_seconds)
        elif kind == "done":
            done = event.done  # the last message; the stream is read to its end
    return done


def _state_row(b: Any) -> dict:
    latest = b.versions[-1] if b.versions else None
    return {
        "name": b.name,
        "owner": b.owner,
        "version": latest.number if latest else None,
        "language": latest.language if latest else "",
        "state": b.state,
        "hash": latest.content_hash[:12] if latest else "",
    }


def list_remote(
    client: Remote | LocalClient, include_retired: bool, limit: int, after: str = ""
) -> tuple[list[dict], str]:
    """The rows of `arena bots list` from ListBots: at most `limit` bots after the name `after`, a
    server page (at most 100 bots) at a time; and the name to list on from ("" when none follow)."""
    from arena.proto import arena_pb2 as pb

    rows: list[dict] = []
    token = after
    while len(rows) < limit:
        answer = client.call(
            "ListBots",
            pb.ListBotsRequest(include_retired=include_retired, limit=limit - len(rows), page_token=token),
        )
        rows += [_state_row(b) for b in answer.bots]
        token = answer.next_page_token
        if not token:
            return rows, ""
    return rows, token


def _local_time(iso: str) -> str:
    """The server's `...Z` timestamps as the local commands print them (naive UTC, seconds)."""
    return iso[:-1] if iso.endswith("Z") else iso


def show_remote(remote: Remote, name: str) -> dict:
    """The data of `arena bots show` from GetBot (and GetBotLogs, when the token may read them)."""
    import grpc

    from arena.cli.matches import match_row
    from arena.proto import arena_pb2 as pb

    bot = remote.call("GetBot", pb.GetBotRequest(name=name))
    builds: dict[int, str] = {}
    if remote.token:
        logs = remote.call(
            "GetBotLogs", pb.GetBotLogsRequest(name=name, limit=1), allow=(grpc.StatusCode.PERMISSION_DENIED,)
        )
        builds = {b.version: b.log for b in logs.builds} if logs is not None else {}
    return {
        "name": bot.name,
        "owner": bot.owner,
        "retired": bot.state == "retired",
        "suspended": bot.state == "suspended",
        "suspension_reason": bot.suspension_reason or None,
        "versions": [
            {
                "number": v.number,
                "content_hash": v.content_hash,
                "language": v.language,
                "protocol": v.protocol,
                "build_ok": v.build_ok,
                "build_log": builds.get(v.number),  # None: not yours to read
                "path": None,  # where the server keeps it is the server's business
                "created_at": _local_time(v.created_at),
            }
            for v in bot.versions
        ],
        "notices": [],  # the API has no notices call; the suspension reason above says why
        "verdicts": {c.verdict: c.count for c in bot.verdicts},
        "recent": [match_row(x) for x in bot.recent],
    }


def logs_data(answer: Any) -> dict:
    """`arena bots logs --json`: `bot` as `/api/bots/{name}/logs` names it; the build logs and the match
    logs apart (`builds`, `matches`), where the API's `logs` holds both (a build's `match_id` null)."""
    return {
        "bot": answer.name,
        "builds": [{"version": b.version, "build_ok": b.build_ok, "log": b.log} for b in answer.builds],
        "matches": [
            {"match_id": x.match_id, "seat": x.seat, "verdict": x.verdict, "text": x.text}
            for x in answer.matches
        ],
    }


def logs_via(remote: Remote | None, name: str, last: int, match_id: int | None, as_json: bool) -> None:
    """`arena bots logs` through GetBotLogs: remotely, or in-process over the local store as the admin."""
    import json

    from arena.proto import arena_pb2 as pb

    client: Remote | LocalClient = client_for(remote)
    answer = client.call("GetBotLogs", pb.GetBotLogsRequest(name=name, match_id=match_id or 0, limit=last))
    data = logs_data(answer)
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    for b in data["builds"]:
        if not b["build_ok"]:
            click.echo(f"build of {name}@{b['version']} FAILED:")
            for line in b["log"].strip().splitlines()[-15:]:
                click.echo(f"  | {line}")
    if not data["matches"]:
        click.echo(f"{name} has no recorded match logs yet")
    for x in data["matches"]:
        click.echo(f"match {x['match_id']} ({name}, seat {x['seat']}, {x['verdict'] or 'no verdict'}):")
        for line in (x["text"] or "(no output)").splitlines():
            click.echo(f"  {line}")
