"""`arena new LANG DIR`: a ready starter bundle, copied from the language's sample bot.

The starter is the sample bot itself (every one plays at least as well as `greedy`), renamed after
DIR, with a README that gives the three commands to play, replay and submit it. What a sample
folder holds only because it was built here (node_modules, build/, a compiled binary) is left out:
the sandbox builds the bundle again from its sources (Java's classes/, Go's bot, Rust's target/, C#'s bot.exe). The Node starter keeps its offline npm
cache, since its build (`npm ci --offline`) has no network.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import click

from arena.cli.errors import UserError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # the ladder's bot-name rule (arena.store.repo)


@dataclass(frozen=True)
class Starter:
    folder: str  # under sample_bots/
    transport: str
    doc: str
    skip: frozenset[str] = frozenset()  # what a build here left in the sample folder


STARTERS: dict[str, Starter] = {
    "python": Starter(
        "python/greedy",
        "stdio lines or gRPC, through the arena's Python SDK (arena.sdk)",
        "docs/starter-python.md",
    ),
    "node": Starter(
        "node",
        "gRPC, from referee.proto (@grpc/grpc-js)",
        "docs/starter-node.md",
        frozenset({"node_modules"}),
    ),  # fmt: skip
    "typescript": Starter(
        "typescript",
        "gRPC, from referee.proto (@grpc/grpc-js; compiled by tsc in the sandbox)",
        "docs/starter-typescript.md",
        frozenset({"node_modules", "dist"}),
    ),  # fmt: skip
    "cpp": Starter(
        "cpp",
        "gRPC, from referee.proto (built with make in the sandbox)",
        "docs/starter-cpp.md",
        frozenset({"build"}),
    ),  # fmt: skip
    "c": Starter(
        "stdio/c",
        "the stdio protocol, one JSON line each way (built with gcc in the sandbox)",
        "docs/stdio.md",
        frozenset({"bot"}),
    ),  # fmt: skip
    "shell": Starter("stdio/shell", "the stdio protocol, one JSON line each way", "docs/stdio.md"),
    "ruby": Starter("stdio/ruby", "the stdio protocol, one JSON line each way", "docs/starter-ruby.md"),
    "java": Starter(
        "stdio/java",
        "the stdio protocol, one JSON line each way (built with javac in the sandbox)",
        "docs/starter-java.md",
        frozenset({"classes"}),
    ),  # fmt: skip
    "go": Starter(
        "stdio/go",
        "the stdio protocol, one JSON line each way (built with go build in the sandbox, offline)",
        "docs/starter-go.md",
        frozenset({"bot"}),
    ),  # fmt: skip
    "rust": Starter(
        "stdio/rust",
        "the stdio protocol, one JSON line each way (built with cargo in the sandbox, offline)",
        "docs/starter-rust.md",
        frozenset({"target"}),
    ),  # fmt: skip
    "csharp": Starter(
        "stdio/csharp",
        "the stdio protocol, one JSON line each way (built with Mono's mcs in the sandbox)",
        "docs/starter-csharp.md",
        frozenset({"bot.exe"}),
    ),  # fmt: skip
}
ALWAYS_SKIP = {"__pycache__", ".pytest_cache"}

README = """# {name}: an Elfern Arena bot in {language}

Made by `arena new {language} {folder}` from the sample bot `{sample}`. It speaks {transport};
{doc} (in the arena's repository) explains the protocol and what to change. Edit the bot, then,
from this folder (wherever it lives; `arena` is on your PATH):

    arena play . random                    # one sandboxed match against the house's random bot
    arena play . tactician --deals 50      # a stronger opponent, a longer match
    arena replay show last                 # the match, deal by deal
    arena bots submit . --name {name}      # onto the ladder

For a remote arena, set its address and your token first (the organiser hands them out):

    export ARENA_SERVER=arena.example.org:50051 ARENA_API_TOKEN=elf_...
    arena bots submit . --name {name}
    arena challenge {name} tactician --deals 50
"""


def _list(as_json: bool) -> None:
    rows = [
        {"language": lang, "transport": s.transport, "sample": f"sample_bots/{s.folder}", "doc": s.doc}
        for lang, s in STARTERS.items()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['language']:10} {row['transport']} ({row['doc']})")


def _copy(src: Path, dest: Path, skip: frozenset[str]) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder) == src
        return {n for n in names if n in ALWAYS_SKIP or (here and n in skip)}

    shutil.copytree(src, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)


def _rename(manifest: Path, name: str) -> None:
    """Give the copied bot.toml the new bot's name (the sample's comments and other keys stay)."""
    text = manifest.read_text(encoding="utf-8")
    renamed, n = re.subn(r'(?m)^name\s*=\s*"[^"\n]*"', f'name = "{name}"', text, count=1)
    if n != 1:  # pragma: no cover - every sample's bot.toml has a name line (tests/cli/test_new.py)
        raise UserError(f"{manifest}: the sample has no `name = ...` line to rename")
    manifest.write_text(renamed, encoding="utf-8")


@click.command()
@click.argument("language", required=False, metavar="LANG")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path), metavar="DIR")
@click.option("--name", default=None, help="The bot's name in bot.toml (default: DIR's last part).")
@click.option("--list", "show", is_flag=True, help="List the languages (with --json: as JSON).")
@click.option("--json", "as_json", is_flag=True, help="With --list: one JSON array.")
def new(language: str | None, folder: Path | None, name: str | None, show: bool, as_json: bool) -> None:
    """Write a ready starter bot for LANG into DIR (a new or empty folder).

    The bot plays a clean sandboxed match with no edits:

      arena new python mybot && arena play mybot random

    `arena new --list` shows the languages and the transport each one uses.
    """
    if show:
        _list(as_json)
        return
    if language is None or folder is None:
        raise click.UsageError("give LANG and DIR (e.g. `arena new python mybot`), or --list")
    starter = STARTERS.get(language.lower())
    if starter is None:
        raise UserError(f"language {language!r}: expected one of {', '.join(STARTERS)} (`arena new --list`)")
    src = SAMPLES / starter.folder
    if not (src / "bot.toml").is_file():
        raise UserError(
            f"{src}: the {language} sample bot is missing; `arena new` runs from the arena's checkout"
        )
    name = name or folder.resolve().name
    if not NAME.match(name):
        raise UserError(
            f"bot name {name!r}: use 1-64 letters, digits, _ . - (starting with a letter or digit); "
            "pass --name NAME"
        )
    if folder.exists() and any(folder.iterdir()):
        raise UserError(f"{folder}: the folder is not empty; give a new folder")
    try:
        _copy(src, folder, starter.skip)
        _rename(folder / "bot.toml", name)
        (folder / "README.md").write_text(
            README.format(
                name=name,
                language=language.lower(),
                folder=folder,
                sample=f"sample_bots/{starter.folder}",
                transport=starter.transport,
                doc=starter.doc,
            ),  # fmt: skip
            encoding="utf-8",
        )
    except OSError as exc:
        raise UserError(f"{folder}: {exc.strerror or exc}; give a folder you can write") from None
    click.echo(f"wrote a {language.lower()} bot named {name} into {folder} ({starter.transport})")
    click.echo(f"next: arena play {folder} random   (or, in {folder}: arena play . random)")
