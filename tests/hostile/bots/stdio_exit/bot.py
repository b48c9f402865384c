"""A stdio bot that exits on its first turn without answering."""

import sys

sys.stdin.readline()  # the welcome
sys.stdin.readline()  # its first turn
sys.exit(3)
