#!/usr/bin/env python3
"""Generate the Python code of protos/elfern/arena/v1/*.proto into arena/proto/ (`make protos`).

The generated modules are committed, so that installing the arena needs no protoc. protoc writes
imports as `from elfern.arena.v1 import x_pb2`; we flatten the output into arena/proto/ and
rewrite those imports to `from arena.proto import x_pb2`.

`--check` regenerates into a temporary directory and exits 1 when arena/proto/ differs (the test
suite runs this, so stale generated code fails a test).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PROTO_DIR = PROTO_ROOT / "elfern" / "arena" / "v1"
OUT_DIR = ROOT / "arena" / "proto"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
IMPORT_RE = re.compile(r"^from elfern\.arena\.v1 import (\w+_pb2)", re.MULTILINE)


def generate(out: Path) -> list[Path]:
    """Run protoc (grpc_tools) for every .proto and return the flattened files written to `out`."""
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(PROTO_DIR.glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        include = Path(grpc_tools.__file__).parent / "_proto"
        args = [
            "protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *[str(p.relative_to(PROTO_ROOT)) for p in protos],
        ]
        if protoc.main(args) != 0:
            raise SystemExit("gen_protos: protoc failed")
        written = []
        for src in sorted((Path(tmp) / "elfern" / "arena" / "v1").iterdir()):
            if not src.name.endswith(GENERATED_SUFFIXES):
                continue
            text = IMPORT_RE.sub(r"from arena.proto import \1", src.read_text(encoding="utf-8"))
            dst = out / src.name
            dst.write_text(text, encoding="utf-8")
            written.append(dst)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if arena/proto/ is stale")
    opts = parser.parse_args()
    if not opts.check:
        for old in OUT_DIR.iterdir():
            if old.name.endswith(GENERATED_SUFFIXES):
                old.unlink()
        for path in generate(OUT_DIR):
            print(f"gen_protos: wrote {path.relative_to(ROOT)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {p.name: p.read_text(encoding="utf-8") for p in generate(Path(tmp))}
    current = {
        p.name: p.read_text(encoding="utf-8")
        for p in OUT_DIR.iterdir()
        if p.name.endswith(GENERATED_SUFFIXES)
    }
    stale = sorted(n for n in fresh.keys() | current.keys() if fresh.get(n) != current.get(n))
    if stale:
        print(f"gen_protos: stale generated code: {', '.join(stale)}; run `make protos`", file=sys.stderr)
        return 1
    print("gen_protos: arena/proto/ is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
