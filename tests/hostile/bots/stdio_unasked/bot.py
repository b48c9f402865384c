"""A stdio bot that writes moves without being asked, from its start, and never reads its stdin."""

import os

line = b'{"card": "AS", "turn_id": 999}\n'
while True:
    os.write(1, line)
