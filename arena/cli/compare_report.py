"""What `arena compare` prints when the test ends: every figure with a short phrase saying what it is.

The same figures go to `--json` under stable keys (`report_json`); the text (`report_lines`) never
prints a negative "saving" (pairing that cost precision says so in words) and labels the
pentanomial counts by A's points in the pair's two games.
"""

from __future__ import annotations

import math

from arena.ladder.sprt import Sprt

PAIR_POINTS = ("0", "0.5", "1", "1.5", "2")  # A's points over a pair's two games, one per pentanomial bin


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _signed(x: float) -> str:
    return ("+inf" if x > 0 else "-inf") if math.isinf(x) else f"{x:+.1f}"


def pairs_after_verdict(sprt: Sprt) -> int:
    """Pairs that were still running when the verdict froze (counted, but unable to change it)."""
    st = sprt.state()
    return st.n - st.decided_at if st.decided_at is not None else 0


def report_lines(sprt: Sprt, a_label: str, b_label: str, voided_pairs: int = 0) -> list[str]:
    """The end-of-test report, one figure (or one closely tied group) a line, each explained."""
    st = sprt.corrected()
    later = pairs_after_verdict(sprt)
    verdict = {
        "H1": f"H1 accepted: {a_label} is stronger (by at least ~{sprt.elo1:g} Elo)",
        "H0": f"H0 accepted: {a_label} is not {sprt.elo1:g} Elo stronger",
        None: f"inconclusive after {_plural(st.n, 'pair', 'pairs')}: neither bound of the LLR was reached",
    }[st.verdict]
    if st.decided_at is not None:
        verdict += f" at pair {st.decided_at}"
    if later:
        verdict += (
            f"; {_plural(later, 'pair', 'pairs')} still running then "
            f"{'was' if later == 1 else 'were'} counted below but cannot change it"
        )
    if sprt.correctable:
        how = f"corrected for the stopping rule; uncorrected {_signed(st.plain_elo)}"
    elif st.decided_at is not None:
        how = "plain: too few or too uniform pairs before the verdict to correct for the stopping rule"
    else:
        how = "plain mean of the pairs"
    lower, upper = st.lower, st.upper
    lines = [
        f"compared {a_label} (A) vs {b_label} (B)",
        verdict,
        f"Elo difference {_signed(st.elo)}: how much stronger A is than B "
        f"(95% interval {_signed(st.elo_low)} .. {_signed(st.elo_high)}, {how})",
        f"pairs counted {st.n}: each pair is two games on the same decks with the seats swapped"
        + (
            f"; {_plural(voided_pairs, 'void pair', 'void pairs')} (a game without a result) not counted"
            if voided_pairs
            else ""
        ),
        f"pairs scoring {' / '.join(PAIR_POINTS)}: {' '.join(str(c) for c in sprt.counts)}"
        " (A's points over the pair's two games)",
        f"LLR {st.llr:.2f}: the evidence for H1 (A {sprt.elo1:g} Elo better) over H0 "
        f"(A {sprt.elo0:g} Elo better); the test stops at {lower:+.2f} (H0) or {upper:+.2f} (H1)",
    ]
    reduction = sprt.variance_reduction()
    if reduction is not None:
        ratio, saved = reduction["ratio"], reduction["pairs_saved"]
        spread = (
            f"pairing: a pair's score varies {ratio:.2f}x as much as two independent games' would "
            "(below 1: the swapped seats cancel the decks' luck)"
        )
        if saved >= 0.5:
            lines.append(
                f"{spread}; unpaired games would have needed ~{saved:.0f} more pairs for this precision"
            )
        else:
            lines.append(f"{spread}; here pairing saved no games (the two games of a pair went alike)")
    return lines


def report_json(sprt: Sprt, versions: dict[str, str], max_pairs: int, voided_pairs: int) -> dict:
    """The `--json` form: the text's figures under stable keys (keys are only ever added). `versions`:
    a, b (labels) and a_content, b_content (content hashes)."""
    st = sprt.corrected()
    reduction = sprt.variance_reduction()
    return {
        **{k: versions[k] for k in ("a", "b", "a_content", "b_content")},
        "verdict": st.verdict,
        "decided_at": st.decided_at,  # pairs when the verdict froze (later ones do not count)
        "pairs_after_verdict": pairs_after_verdict(sprt),
        "llr": st.llr,
        "bounds": [st.lower, st.upper],
        "pairs": st.n,
        "max_pairs": max_pairs,
        "voided_pairs": voided_pairs,
        "pentanomial": sprt.counts,
        "pentanomial_points": [float(p) for p in PAIR_POINTS],  # A's points over the pair, per count
        "elo": st.elo,  # corrected for the stopping rule when decided
        "elo_ci95": [None if math.isinf(x) else x for x in (st.elo_low, st.elo_high)],
        "elo_corrected": sprt.correctable,
        "elo_plain": None if math.isinf(st.plain_elo) else st.plain_elo,
        "variance_ratio": None if reduction is None else reduction["ratio"],
        # more pairs an unpaired test would have needed; negative: pairing cost pairs here
        "pairs_saved": None if reduction is None else reduction["pairs_saved"],
    }
