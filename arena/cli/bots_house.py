"""`arena bots house`: give a fresh arena opponents in one command, the sample bots filed as the house's.

A new `arena serve` (or a new local store) has no bots, so a bot author's first `arena challenge`
has nobody to play. This submits the arena's Python sample bots (sample_bots/python/) under the
house (docs/security.md, "The organiser's own bots are the house's"): locally into the store, or
with --server and the admin token to a remote arena, which builds them in its own sandbox. A bot
already there with the same content stays as it is, so running it again is harmless.

`house_bot` also lets `arena play` take a house bot's name (`arena play . random`) wherever the
author's folder is (arena/cli/play.py).
"""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import SANDBOX_HELP
from arena.cli.remote import Remote, remote_options, with_remote
from arena.store.identity import HOUSE

PYTHON_SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
DEFAULT = ("random", "greedy", "tactician")  # quick to play; pimc and ismcts search, so are slower


def house_names() -> list[str]:
    """The sample bots this checkout holds, by name."""
    if not PYTHON_SAMPLES.is_dir():
        return []
    return sorted(p.name for p in PYTHON_SAMPLES.iterdir() if (p / "bot.toml").is_file())


def house_bot(name: str) -> Path | None:
    """The folder of the sample bot called `name` (`random` -> sample_bots/python/random), or None."""
    folder = PYTHON_SAMPLES / name
    return folder if name in house_names() else None


@click.command("house")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--all", "every", is_flag=True, help="Every sample bot, the searching ones (pimc, ismcts) too.")
@click.option("--sandbox", "launcher", default="bwrap", show_default=True,
              help="Where the builds run (local store only). " + SANDBOX_HELP)  # fmt: skip
@remote_options
def house(names: tuple[str, ...], every: bool, launcher: str, remote: Remote | None) -> None:
    """Submit the sample bots as the house's, so a fresh arena has opponents: random, greedy and
    tactician by default, NAMEs to choose, --all for every one.

    \b
      arena bots house                       # into the local store
      arena bots house --server HOST:PORT    # to a server, with the admin token (ARENA_API_TOKEN)
    """
    from arena.cli.bots import submit_one

    available = house_names()
    if not available:
        raise UserError(
            f"{PYTHON_SAMPLES}: no sample bots here; `arena bots house` runs from the arena's checkout"
        )
    chosen = list(names) or (available if every else [n for n in DEFAULT if n in available])
    unknown = [n for n in chosen if n not in available]
    if unknown:
        raise UserError(
            f"no sample bot named {', '.join(unknown)}; the house bots are {', '.join(available)}"
        )
    if remote is not None and not remote.token:
        raise UserError("house bots go in with the admin token: set --api-token or ARENA_API_TOKEN")
    for name in chosen:
        submit_one(str(PYTHON_SAMPLES / name), name, HOUSE, launcher, remote)
    click.echo(f"house bots: {', '.join(chosen)}; `arena challenge MYBOT {chosen[-1]}` plays one")


house.help = with_remote(house.help, "Remotely only the admin token may file bots under the house.")
