"""The lines a build shows live (LiveLines): whole lines only, capped in count and width, bounded
in memory however the output arrives."""

from __future__ import annotations

from arena.sandbox.building import LiveLines


def test_pieces_become_whole_lines_cut_to_the_width_and_capped_in_number() -> None:
    live = LiveLines()
    assert live.feed("par") == [] and live.feed("tial\nnext") == ["partial"]
    assert live.feed("\n" + "x" * 1000 + "\n") == ["next", "x" * LiveLines.WIDTH]
    shown = live.feed("".join(f"{i}\n" for i in range(500)))
    assert shown[: LiveLines.LIMIT - 3] == [str(i) for i in range(LiveLines.LIMIT - 3)]
    assert shown[LiveLines.LIMIT - 3 :] == [None]  # once, then nothing more
    assert live.feed("more\n") == []


def test_a_line_that_never_ends_is_kept_to_the_width() -> None:
    live = LiveLines()
    for _ in range(1000):
        live.feed("y" * 10_000)
    assert len(live.partial) == LiveLines.WIDTH
    assert live.feed("\n") == ["y" * LiveLines.WIDTH]
