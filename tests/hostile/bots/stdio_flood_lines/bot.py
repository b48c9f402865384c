"""A stdio bot that, on its first turn, writes Log lines without end and never answers."""

import os
import sys

sys.stdin.readline()  # the welcome
sys.stdin.readline()  # its first turn
line = b'{"log": "flood"}\n' * 1000
while True:
    os.write(1, line)
