"""Write a season's stored replays out as files (the framed record bytes, as `arena play` writes them).

Only revealed matches are written (`arena.ladder.visibility`): a finished match whose twin is still
queued or running holds that twin's decks, and files on disk outlive who may read them. Run the
export again later to add them."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from arena.ladder.visibility import unrevealed_ids
from arena.store import Store
from arena.store.models import BotVersion, Match, Replay

SUFFIX = ".replay"


def export_replays(store: Store, name: str, out_dir: Path | None = None) -> tuple[Path, int]:
    """Write every revealed match of season `name`; returns the folder and how many files it holds."""
    season = store.season(name)
    out = Path(out_dir) if out_dir else store.home / "replays" / name
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with store.tx() as s:
        rows = s.execute(
            select(Match, Replay.data)
            .join(Replay, Replay.match_id == Match.id)
            .where(Match.season_id == season.id)
            .order_by(Match.record_seq)
        ).all()
        hidden = unrevealed_ids(s, [m for m, _ in rows])
        for m, data in rows:
            if m.id in hidden:
                continue
            v0, v1 = s.get_one(BotVersion, m.version0_id), s.get_one(BotVersion, m.version1_id)
            path = out / f"{m.kind}-{m.id:05d}-{v0.bot.name}-vs-{v1.bot.name}{SUFFIX}"
            if not path.exists():
                path.write_bytes(data)
            count += 1
    return out, count
