"""A test bot that fails where its seed says: it plays random legal cards from self.rng and, on a
turn its rng picks (about one in 40), a card it does not hold, which is ILLEGAL_MOVE. With the same
match seed it slips at the same deal, trick and card (tests/sample_bots/test_repro.py)."""

from arena.sdk import Bot, run

ALL = [rank + suit for suit in "CDHS" for rank in "789TJQKA"]


class Wobbly(Bot):
    name = "wobbly"
    version = "1"

    def play(self, view):
        if self.rng.random() < 1 / 40:
            card = self.rng.choice([c for c in ALL if c not in view.hand])
            self.log(f"slipping {card}")
            return card
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(Wobbly())
