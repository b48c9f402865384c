"""A stdio bot that closes its stdout on its first turn and stays alive, reading nothing more."""

import os
import sys
import time

sys.stdin.readline()  # the welcome
sys.stdin.readline()  # its first turn
os.close(1)
time.sleep(3600)
