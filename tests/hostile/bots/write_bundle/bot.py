"""Tries to rewrite its own bundle (inside the sandbox, and at its host path)."""

import json
import os

from arena.sdk import Bot, run

TARGETS = json.load(open("targets.json"))


class WriteBundle(Bot):
    def play(self, view):
        for path in [os.path.join(TARGETS["self"], "bot.py"), "bot.py", "planted.txt"]:
            with open(path, "w") as fh:
                fh.write("pwned")
        return view.legal[0]


run(WriteBundle())
