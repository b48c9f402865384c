"""SVG card faces, drawn here rather than shipped as images so that both decks of docs/rules.md §1
(French and German suits) come from one small, testable source.

`sprite(deck)` returns one inline `<svg>` of `<symbol>`s: `suit-C..suit-S`, `card-AS`..`card-7C`
(the text codes of docs/engine.md) and `card-back`. Pages inline it once and draw each card with
`<use href="#card-AS">`, so a whole replay costs a few bytes per card.
"""

from __future__ import annotations

from functools import lru_cache

from arena.engine.cards import RANKS, SUITS, code_label

DECKS = ("french", "german")

W, H = 60, 84  # card viewBox; the 5:7 shape of a real card

# Suit glyphs, each drawn in a 20x20 box centred on (0, 0).
_FRENCH_SUITS = {
    "S": ("#111", "M0,-9 C4,-4 9,-1 9,3 C9,7 4,8 1,5 L3,9 L-3,9 L-1,5 C-4,8 -9,7 -9,3 C-9,-1 -4,-4 0,-9 Z"),
    "H": (
        "#c8102e",
        "M0,9 C-5,4 -9,1 -9,-3.5 C-9,-7 -6,-9 -3.5,-9 C-1.5,-9 0,-7.5 0,-6 C0,-7.5 1.5,-9 3.5,-9 "
        "C6,-9 9,-7 9,-3.5 C9,1 5,4 0,9 Z",
    ),
    "D": (
        "#c8102e",
        "M0,-9.5 C2.5,-5.5 5,-2.5 7.5,0 C5,2.5 2.5,5.5 0,9.5 C-2.5,5.5 -5,2.5 -7.5,0 "
        "C-5,-2.5 -2.5,-5.5 0,-9.5 Z",
    ),
    "C": ("#111", "M-1.4,2.5 C-3,6 -4,8 -4.5,9 L4.5,9 C4,8 3,6 1.4,2.5 Z"),
}
_CLUB_LOBES = ((0, -4.6, 4.1), (-4.6, 1.4, 4.1), (4.6, 1.4, 4.1))

_GERMAN_COLOURS = {"C": "#7a4a1d", "D": "#d9a21b", "H": "#c8102e", "S": "#2e8b3a"}
_GERMAN_INK = {"D": "#9a6a00"}  # the bell's gold is too pale for text
_INDEX_FRENCH = {"T": "10"}
_INDEX_GERMAN = {"T": "10", "J": "U", "Q": "O", "K": "K", "A": "D"}

# Pip centres for the number cards, inside the card's middle field.
_PIPS = {
    "7": [(20, 22), (40, 22), (30, 32), (20, 42), (40, 42), (20, 62), (40, 62)],
    "8": [(20, 22), (40, 22), (30, 32), (20, 42), (40, 42), (30, 52), (20, 62), (40, 62)],
    "9": [(20, 20), (40, 20), (20, 34), (40, 34), (30, 42), (20, 50), (40, 50), (20, 64), (40, 64)],
    "T": [(20, 20), (40, 20), (30, 27), (20, 34), (40, 34), (20, 50), (40, 50), (30, 57), (20, 64), (40, 64)],
}


def _suit_symbol(suit: str, deck: str) -> str:
    """One suit glyph as a `<symbol>`; the German glyphs are acorn, bell, heart and leaf."""
    head = f'<symbol id="suit-{suit}" viewBox="-10 -10 20 20">'
    if deck == "french":
        colour, path = _FRENCH_SUITS[suit]
        body = f'<path d="{path}" fill="{colour}"/>'
        if suit == "C":
            body += "".join(f'<circle cx="{x}" cy="{y}" r="{r}" fill="{colour}"/>' for x, y, r in _CLUB_LOBES)
        return head + body + "</symbol>"
    colour = _GERMAN_COLOURS[suit]
    if suit == "H":
        body = f'<path d="{_FRENCH_SUITS["H"][1]}" fill="{colour}" stroke="#7a0b1c" stroke-width=".8"/>'
    elif suit == "D":  # Schellen: a round bell with a band and a slot
        body = (
            f'<circle cx="0" cy="0.5" r="8" fill="{colour}" stroke="#6b4b00" stroke-width=".8"/>'
            '<rect x="-8" y="-1.6" width="16" height="2.6" fill="#b22222"/>'
            '<circle cx="0" cy="4.6" r="1.6" fill="#3a2a00"/>'
            '<path d="M0,6.2 L0,8.4" stroke="#3a2a00" stroke-width="1"/>'
            '<circle cx="0" cy="-8.4" r="1.3" fill="none" stroke="#6b4b00" stroke-width=".8"/>'
        )
    elif suit == "S":  # Grün: a leaf with its midrib and stalk
        body = (
            f'<path d="M0,-9.5 C6,-5 7.5,1 3,6 C2,7 1,7.5 0,8 C-1,7.5 -2,7 -3,6 C-7.5,1 -6,-5 0,-9.5 Z" '
            f'fill="{colour}" stroke="#17501f" stroke-width=".7"/>'
            '<path d="M0,-7 L0,10" stroke="#17501f" stroke-width=".9"/>'
            '<path d="M0,-2 L3.5,-4.5 M0,1.5 L4,-0.5 M0,-2 L-3.5,-4.5 M0,1.5 L-4,-0.5" '
            'stroke="#17501f" stroke-width=".6"/>'
        )
    else:  # Eichel: an acorn, nut below a cross-hatched cup, on a stalk
        body = (
            f'<ellipse cx="0" cy="3" rx="4.8" ry="6" fill="{colour}" stroke="#3d2308" stroke-width=".7"/>'
            '<path d="M-6,-1.5 C-6,-6 6,-6 6,-1.5 Z" fill="#c9a25f" stroke="#3d2308" stroke-width=".7"/>'
            '<path d="M-3,-4.5 L-1,-1.5 M0,-5 L2,-1.5 M3,-4.5 L4.5,-2.2" stroke="#3d2308" stroke-width=".5"/>'
            '<path d="M0,-5.3 C0,-8 1,-9 2.5,-9.8" stroke="#3d2308" stroke-width="1" fill="none"/>'
        )
    return head + body + "</symbol>"


def index_text(code: str, deck: str) -> str:
    """The corner index of a card: `10`, `Q`, or for German cards `U`, `O`, `K`, `D`."""
    rank = code[0]
    table = _INDEX_GERMAN if deck == "german" else _INDEX_FRENCH
    return table.get(rank, rank)


def card_name(code: str, deck: str) -> str:
    """A readable name for a card (its tooltip and accessible label): the engine's `♠10` or `Grün Unter`."""
    return code_label(code, deck)


def _use(suit: str, x: float, y: float, size: float, flip: bool = False) -> str:
    transform = f' transform="rotate(180 {x} {y})"' if flip else ""
    half = size / 2
    return (
        f'<use href="#suit-{suit}" x="{x - half:g}" y="{y - half:g}" width="{size:g}" '
        f'height="{size:g}"{transform}/>'
    )


def _card_symbol(code: str, deck: str) -> str:
    rank, suit = code[0], code[1]
    ink = (_GERMAN_INK.get(suit, _GERMAN_COLOURS[suit])) if deck == "german" else _FRENCH_SUITS[suit][0]
    idx = index_text(code, deck)
    font = 10 if len(idx) > 1 else 12
    parts = [
        f'<symbol id="card-{code}" viewBox="0 0 {W} {H}">',
        f'<rect x="0.5" y="0.5" width="{W - 1}" height="{H - 1}" rx="5" fill="#fff" stroke="#555"/>',
    ]
    corner = (
        f'<text x="6.5" y="13" font-size="{font}" font-family="Georgia,serif" font-weight="bold" '
        f'text-anchor="middle" fill="{ink}">{idx}</text>{_use(suit, 6.5, 20, 8)}'
    )
    parts.append(f'<g>{corner}</g><g transform="rotate(180 {W / 2} {H / 2})">{corner}</g>')
    if rank in _PIPS:
        parts.extend(_use(suit, x, y, 10, flip=y > 42) for x, y in _PIPS[rank])
    elif rank == "A":
        parts.append(_use(suit, 30, 42, 30))
    else:  # court cards: a framed figure field with a big rank letter; Ober's suit sits high, Unter's low
        parts.append('<rect x="14" y="14" width="32" height="56" rx="2" fill="#f7f1e1" stroke="#999"/>')
        letter = idx if deck == "german" else rank
        suit_y, letter_y = (28, 60) if rank == "Q" else (56, 38) if rank == "J" else (30, 58)
        parts.append(_use(suit, 30, suit_y, 16))
        parts.append(
            f'<text x="30" y="{letter_y}" font-size="18" font-family="Georgia,serif" '
            f'font-weight="bold" text-anchor="middle" fill="{ink}">{letter}</text>'
        )
    parts.append("</symbol>")
    return "".join(parts)


_BACK = (
    f'<symbol id="card-back" viewBox="0 0 {W} {H}">'
    '<defs><pattern id="lattice" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="6" height="6" fill="#1f4e8c"/>'
    '<path d="M0,0 L0,6 M0,0 L6,0" stroke="#9db8e0" stroke-width="1"/></pattern></defs>'
    f'<rect x="0.5" y="0.5" width="{W - 1}" height="{H - 1}" rx="5" fill="#fff" stroke="#555"/>'
    f'<rect x="4" y="4" width="{W - 8}" height="{H - 8}" rx="3" fill="url(#lattice)"/></symbol>'
)


def all_codes() -> list[str]:
    """The 32 card codes in engine order (card int = suit * 8 + rank)."""
    return [r + s for s in SUITS for r in RANKS]


@lru_cache(maxsize=2)
def sprite(deck: str = "french") -> str:
    """The inline SVG sprite of one deck: suit glyphs, 32 faces and a back."""
    if deck not in DECKS:
        raise ValueError(f"deck must be one of {', '.join(DECKS)}, not {deck!r}")
    symbols = [_suit_symbol(s, deck) for s in SUITS] + [_card_symbol(c, deck) for c in all_codes()] + [_BACK]
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" class="sprite" aria-hidden="true" '
        'style="position:absolute;width:0;height:0;overflow:hidden">' + "".join(symbols) + "</svg>"
    )


def card_svg(code: str | None, deck: str = "french", css: str = "card") -> str:
    """One card as markup for a page that already holds the sprite; `None` draws the back."""
    if code is None:
        return f'<svg class="{css} back" viewBox="0 0 {W} {H}" role="img" aria-label="hidden card"><use href="#card-back"/></svg>'
    name = card_name(code, deck)
    return (
        f'<svg class="{css}" viewBox="0 0 {W} {H}" data-card="{code}" role="img" aria-label="{name}">'
        f'<title>{name}</title><use href="#card-{code}"/></svg>'
    )


def standalone(code: str, deck: str = "french") -> str:
    """One card as a complete SVG document (served at /cards/{deck}/{code}.svg)."""
    defs = _suit_symbol(code[1], deck) + _card_symbol(code, deck)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W * 2}" height="{H * 2}">'
        f'<defs>{defs}</defs><use href="#card-{code}"/></svg>'
    )
