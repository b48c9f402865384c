"""Receiving a bundle upload over HTTP: a multipart body parsed as it arrives, the file part streamed
to a temporary file through `ops_bots.receive_upload`, so the size cap is enforced while it arrives.

Starlette's own `request.form()` would spool the whole file (to memory, then disk) before the route
runs; this reader instead refuses at once a declared Content-Length over the cap (413 without reading
the body) and stops reading an undeclared (chunked) or lying body as soon as it passes the cap. The
body is never held whole: memory holds one chunk (uvicorn stops reading the socket while the app does
not ask for more), the disk at most the cap. The other form fields are small text fields only.

Every upload route first takes an admission (`admit`: an upload slot, room in the owner's disk
quota, the upload budget charged), before it reads the body, and builds on the server's build slots
(`build`), as gRPC's SubmitBot does (`arena.service.quota`, `arena.service.builds`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import HTTPException, Request
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect

from arena.access.roles import Principal
from arena.proto import arena_pb2 as pb
from arena.service import ops_bots
from arena.service.errors import InvalidArgument, ResourceExhausted
from arena.service.quota import Admission
from arena.web.calls import http_error, run, service_of

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "bundle"
OVERHEAD = 64 * 1024  # bytes of multipart framing and text fields allowed on top of the cap
MAX_FIELD = 4096  # bytes of one text field
MAX_FIELDS = 16
SUFFIXES = ((".tar.gz", "tar.gz"), (".tgz", "tar.gz"), (".zip", "zip"))


@dataclass
class Upload:
    fields: dict[str, str] = field(default_factory=dict)
    filename: str = ""
    size: int = 0  # bytes of the file part
    received: int = 0  # bytes of the whole body read from the socket
    path: Path | None = None  # the archive, named upload.tar.gz or upload.zip

    def get(self, name: str) -> str:
        return self.fields.get(name, "")


def too_large(cap: int, admission: Admission | None = None) -> HTTPException:
    """413 for a body over the cap, or over the room left in its owner's disk quota."""
    message = (
        f"the upload is over the {cap / (1024 * 1024):g} MiB cap; make the bundle smaller (leave out build output)"
        if admission is None or admission.room >= cap
        else str(admission.refusal(cap))
    )
    # Connection: close, so the server stops reading (uvicorn would drain the rest)
    return HTTPException(413, message, headers={"Connection": "close"})


def refuse_declared(request: Request, cap: int, admission: Admission | None = None) -> None:
    """413 before reading a byte when the declared Content-Length is already over the cap (or the
    room the upload's admission reserved)."""
    limit = cap if admission is None else min(cap, admission.room)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + OVERHEAD:
        raise too_large(cap, admission)


async def admit(request: Request, principal: Principal, name: str = "") -> Admission:
    """`ops_bots.admit` for a web upload (before its body is read): its errors as HTTP statuses."""
    return await run(ops_bots.admit, service_of(request), principal, name)


async def build(
    request: Request,
    admission: Admission,
    principal: Principal,
    name: str,
    path: Path | None,
    owner: str = "",
) -> pb.SubmitBotResponse:
    """`ops_bots.submit` of `read_upload`'s file (on the server's build slots, as gRPC's uploads):
    its errors as HTTP statuses."""
    assert path is not None  # read_upload sets it or raises
    try:
        return await ops_bots.submit(service_of(request), admission, principal, name, path, owner)
    except Exception as exc:
        mapped = http_error(exc)
        if mapped is None:
            raise
        raise mapped from None


def _boundary(request: Request) -> bytes:
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary or len(boundary) > 200:
        raise HTTPException(
            415, f"send the bundle as multipart/form-data with the archive in the field {FILE_FIELD!r}"
        )
    return boundary


class _Parts:
    """python-multipart callbacks: text fields into `upload.fields`, the file's bytes into `pending`."""

    def __init__(self, upload: Upload) -> None:
        self.upload = upload
        self.pending: list[bytes] = []
        self.headers: dict[bytes, bytes] = {}
        self._name = b""
        self._value = b""
        self.field: str | None = None  # the text field being read
        self.in_file = False
        self.files = 0
        self.file_done = False
        self.text = bytearray()

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self.part_begin,
            "on_header_field": lambda d, s, e: setattr(self, "_name", self._name + d[s:e]),
            "on_header_value": lambda d, s, e: setattr(self, "_value", self._value + d[s:e]),
            "on_header_end": self.header_end,
            "on_headers_finished": self.headers_finished,
            "on_part_data": self.part_data,
            "on_part_end": self.part_end,
        }

    def part_begin(self) -> None:
        self.headers, self.field, self.in_file, self.text = {}, None, False, bytearray()

    def header_end(self) -> None:
        self.headers[self._name.lower()] = self._value
        self._name = self._value = b""

    def headers_finished(self) -> None:
        _, options = parse_options_header(self.headers.get(b"content-disposition", b""))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in options:
            if name != FILE_FIELD or self.files:
                raise InvalidArgument(
                    f"{FILE_FIELD}: send exactly one file, in the form field {FILE_FIELD!r}"
                )
            self.files, self.in_file = 1, True
            self.upload.filename = options[b"filename"].decode("utf-8", "replace")[:300]
        else:
            if len(self.upload.fields) >= MAX_FIELDS:
                raise InvalidArgument(f"the form has more than {MAX_FIELDS} fields")
            self.field = name[:100]

    def part_data(self, data: bytes, start: int, end: int) -> None:
        if self.in_file:
            self.pending.append(bytes(data[start:end]))
        else:
            self.text += data[start:end]
            if len(self.text) > MAX_FIELD:
                raise InvalidArgument(f"{self.field}: at most {MAX_FIELD} bytes")

    def part_end(self) -> None:
        if self.in_file:
            self.file_done, self.in_file = True, False
        elif self.field is not None:
            self.upload.fields[self.field] = self.text.decode("utf-8", "replace")


async def read_upload(request: Request, cap: int, admission: Admission) -> Upload:
    """Parse the multipart body into the admission's folder, at most its room; raises HTTPException
    (413, 415, 422) or a ServiceError."""
    refuse_declared(request, cap, admission)
    folder = admission.folder
    limit = min(cap, admission.room)
    upload = Upload()
    parts = _Parts(upload)
    parser = MultipartParser(_boundary(request), parts.callbacks(), max_header_count=8)

    async def file_chunks() -> AsyncIterator[bytes]:
        try:
            async for body in request.stream():
                upload.received += len(body)
                if upload.received > limit + OVERHEAD:
                    raise too_large(cap, admission)
                parser.write(body)
                while parts.pending:
                    yield parts.pending.pop(0)
            parser.finalize()
        except MultipartParseError as exc:
            raise InvalidArgument(f"the multipart body is malformed: {str(exc)[:120]}") from None
        except ClientDisconnect:
            raise HTTPException(400, "the client went away during the upload") from None
        while parts.pending:
            yield parts.pending.pop(0)

    raw = Path(folder) / "upload.bin"
    try:
        upload.size = await ops_bots.receive_upload(file_chunks(), cap, raw, admission)
    except ResourceExhausted:
        raise too_large(cap, admission) from None
    except InvalidArgument as exc:
        if "empty" in str(exc):
            raise InvalidArgument(
                f"{FILE_FIELD}: no archive arrived; choose a .tar.gz or .zip file for the field {FILE_FIELD!r}"
            ) from None
        raise
    if not parts.file_done:
        raise InvalidArgument(f"{FILE_FIELD}: the file part ended early (the body was cut off)")
    fmt = archive_format(upload.get("format"), upload.filename, raw)
    upload.path = ops_bots.upload_path(folder, fmt)
    raw.rename(upload.path)
    return upload


def archive_format(given: str, filename: str, path: Path) -> str:
    """The archive's format: as given, else from the file name, else from its first bytes."""
    if given:
        return ops_bots.check_format(given)
    lower = filename.lower()
    for suffix, fmt in SUFFIXES:
        if lower.endswith(suffix):
            return fmt
    with path.open("rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    raise InvalidArgument(
        f"{FILE_FIELD}: {filename[:80]!r} is neither a .tar.gz nor a .zip archive; pack the bot's folder as one"
    )
