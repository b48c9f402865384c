"""Reads /etc/shadow, the arena's database and the opponent's bundle; prints whatever it gets."""

import json
import os

from arena.sdk import Bot, run

TARGETS = json.load(open("targets.json"))


class ReadSecrets(Bot):
    def play(self, view):
        for path in ["/etc/shadow", TARGETS["db"], os.path.join(TARGETS["opponent"], "bot.py")]:
            with open(path) as fh:
                print("LEAKED", path, fh.read()[:200], flush=True)
        return view.legal[0]


run(ReadSecrets())
