"""A stdio bot that answers its first turn with a 10 MiB line that has no newline, then waits."""

import os
import sys
import time

sys.stdin.readline()  # the welcome
sys.stdin.readline()  # its first turn
chunk = b"A" * (1024 * 1024)
for _ in range(10):
    os.write(1, chunk)
time.sleep(3600)
