"""Write a season's stored replays out as files (the framed record bytes, as `arena play` writes them)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from arena.store import Store
from arena.store.models import BotVersion, Match, Replay

SUFFIX = ".replay"


def export_replays(store: Store, name: str, out_dir: Path | None = None) -> tuple[Path, int]:
    """Write every recorded match of season `name`; returns the folder and how many files it holds."""
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
        for m, data in rows:
            v0, v1 = s.get_one(BotVersion, m.version0_id), s.get_one(BotVersion, m.version1_id)
            path = out / f"{m.kind}-{m.id:05d}-{v0.bot.name}-vs-{v1.bot.name}{SUFFIX}"
            if not path.exists():
                path.write_bytes(data)
            count += 1
    return out, count
