"""Server-side SVG charts: a bot's rating history and the standings' trend sparklines. Drawn in
Python so they show without JavaScript and scale to any width (the SVG has a viewBox only)."""

from __future__ import annotations

from html import escape

from arena.web.schemas import RatingPoint

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    """Round tick values covering lo..hi."""
    span = max(hi - lo, 1.0)
    raw = span / count
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 10**9) if s >= raw)
    first = int(lo // step) * step
    ticks = []
    value = first
    while value <= hi + 1e-9:
        if value >= lo - 1e-9:
            ticks.append(float(value))
        value += step
    return ticks


def rating_chart(history: list[RatingPoint], width: int = 640, height: int = 220) -> str:
    """A line per season of the bot's rating after each rated match, with a labelled y axis."""
    if not history:
        return '<p class="muted">No rated matches yet.</p>'
    left, right, top, bottom = 44, 10, 10, 26
    series: dict[str, list[RatingPoint]] = {}
    for point in history:
        series.setdefault(point.season, []).append(point)
    values = [p.rating for p in history]
    lo, hi = min(values) - 10, max(values) + 10
    n = max(len(pts) for pts in series.values())
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Rating history: {len(history)} rated matches">'
    ]
    for tick in _ticks(lo, hi):
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
            f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" class="axis">{tick:g}</text>'
        )
    out.append(
        f'<text x="{left}" y="{height - 6}" class="axis">match 1</text>'
        f'<text x="{width - right}" y="{height - 6}" text-anchor="end" class="axis">match {n}</text>'
    )
    for k, (season, pts) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        coords = " ".join(f"{x(i):.1f},{y(p.rating):.1f}" for i, p in enumerate(pts))
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        last = pts[-1]
        out.append(
            f'<circle cx="{x(len(pts) - 1):.1f}" cy="{y(last.rating):.1f}" r="3" fill="{colour}">'
            f"<title>{escape(season)}: {last.rating:g} after match {last.match_id}</title></circle>"
        )
        out.append(
            f'<text x="{left + 6}" y="{top + 14 + 14 * k}" fill="{colour}" class="legend">'
            f"{escape(season)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def sparkline(values: list[float], width: int = 80, height: int = 20) -> str:
    """A tiny trend line; green when the last value is above the first, red when below."""
    if len(values) < 2:
        return ""
    lo, hi = min(values), max(values)
    span = hi - lo or 1.0
    step = (width - 2) / (len(values) - 1)
    coords = " ".join(
        f"{1 + i * step:.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}" for i, v in enumerate(values)
    )
    colour = "#2e8b3a" if values[-1] > values[0] else "#c8102e" if values[-1] < values[0] else "#777"
    return (
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-hidden="true">'
        f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="1.5"/></svg>'
    )
