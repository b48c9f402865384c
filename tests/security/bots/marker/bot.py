"""A leak-test bot (tests/security/test_leaks.py): random legal cards, plus three things the arena
must keep from the public.

- It calls itself "tactician" version 7 (bot.toml and Join), but it is registered under another name.
- Every turn it writes a secret-looking marker (`api_key=...`, read from marker.txt) to stderr and
  into an SDK `Log` line, the latter with its hand and the match id (its owner may read it only once
  the match and its twin, where the opponent holds that hand, are over).
- It thinks THINK seconds per move, so that its matches are seen queued and running.
- In three matches of four it crashes in deal 2 after writing the marker, so that its stderr tail is
  what a careless arena would quote in the verdict details and the suspension reason.
"""

import random
import sys
import time
from pathlib import Path

from arena.sdk import Bot, run

HERE = Path(__file__).resolve().parent
MARKER_FILE = HERE / "marker.txt"
MARKER = MARKER_FILE.read_text().strip() if MARKER_FILE.exists() else "LEAK-unset"
THINK = 0.15  # seconds per move: a match lasts a few seconds, long enough to be seen running


def match_number(match_id: str) -> int:
    digits = "".join(ch for ch in match_id if ch.isdigit())
    return int(digits) if digits else 0


class MarkerBot(Bot):
    name = "tactician"
    version = "7"

    def play(self, view):
        if not hasattr(self, "rng"):
            self.rng = random.Random(f"{self.match_id}/{self.seat}")
        secret = f"api_key={MARKER}"
        print(
            f"{secret} match {self.match_id} deal {view.deal_number} trick {view.trick_number}",
            file=sys.stderr,
        )
        sys.stderr.flush()
        self.log(f"{secret} match {self.match_id} deal {view.deal_number} hand {' '.join(view.hand)}")
        if view.deal_number == 2 and view.trick_number >= 3 and match_number(self.match_id) % 4 != 0:
            print(f"fatal: {secret} cannot go on", file=sys.stderr, flush=True)
            sys.exit(3)
        time.sleep(THINK)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(MarkerBot())
