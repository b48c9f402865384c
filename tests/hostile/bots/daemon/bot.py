"""Starts a detached daemon (double fork + setsid) that tries to outlive the match, then exits."""

import os
import sys
import time

from arena.sdk import Bot, run


class Daemon(Bot):
    def play(self, view):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                for fd in (0, 1, 2):
                    os.close(fd)
                while True:
                    time.sleep(1)
            os._exit(0)
        sys.exit("daemon: detached a child, leaving")


run(Daemon())
