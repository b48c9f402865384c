"""A stdio bot that answers its first turn with binary garbage (invalid UTF-8, NULs, newlines)."""

import os
import random
import sys
import time

sys.stdin.readline()  # the welcome
sys.stdin.readline()  # its first turn
rng = random.Random(7)
os.write(1, b"\xff\xfe\x00" + bytes(rng.randrange(256) for _ in range(256 * 1024)))
time.sleep(3600)
