"""`arena bots submit` never reads a file through a link that leaves the bundle."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli

MANIFEST = 'name = "x"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'


def _arena(tmp_path: Path, monkeypatch, *args: str):
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    return CliRunner().invoke(cli, list(args))


def _stored_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file() and not p.is_symlink())


def test_submit_refuses_a_bot_toml_that_links_out_and_stores_nothing(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.toml").write_text(MANIFEST.replace('"x"', '"leaked-c0ffee"'))
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "bot.py").write_text("print(1)\n")
    (bundle / "a").symlink_to(".")
    (bundle / "bot.toml").symlink_to("a/../outside/secret.toml")  # lexically inside, really outside
    res = _arena(tmp_path, monkeypatch, "bots", "submit", str(bundle), "--name", "x", "--sandbox", "local")
    assert res.exit_code != 0
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "'bot.toml'" in lines[0] and "outside the bundle" in lines[0], res.output
    assert "Traceback" not in res.output and "c0ffee" not in res.output
    listing = _arena(tmp_path, monkeypatch, "bots", "list")
    assert "x" not in listing.output.split()
    assert b"c0ffee" not in _stored_bytes(tmp_path / "home")


def test_submit_refuses_an_archive_whose_link_chain_escapes(tmp_path, monkeypatch):
    path = tmp_path / "chain.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("bot.toml", MANIFEST.encode()), ("bot.py", b"print(1)\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (("a", "."), ("b", "a/.."), ("c", "b/..")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    res = _arena(tmp_path, monkeypatch, "bots", "submit", str(path), "--name", "x", "--sandbox", "local")
    assert res.exit_code != 0 and "'b'" in res.output and "outside the bundle" in res.output, res.output
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) == 1


def test_submit_keeps_a_benign_internal_link(tmp_path, monkeypatch):
    bundle = tmp_path / "b"
    (bundle / "src").mkdir(parents=True)
    (bundle / "bot.toml").write_text(MANIFEST)
    (bundle / "bot.py").write_text("import lib.util\n")
    (bundle / "src" / "util.py").write_text("X = 1\n")
    (bundle / "lib").symlink_to("src")
    res = _arena(tmp_path, monkeypatch, "bots", "submit", str(bundle), "--name", "x", "--sandbox", "local")
    assert res.exit_code == 0 and "submitted x@1" in res.output, res.output
    stored = [p for p in (tmp_path / "home").rglob("lib") if p.is_symlink()]
    assert len(stored) == 1 and os.readlink(stored[0]) == "src"
    assert (stored[0] / "util.py").read_text() == "X = 1\n"
