"""The referee's socket, private to the one bot it serves: directory 0700 and socket 0600, owned by
the bot's uid. The referee runs as root (or, unprivileged, as the bots' own uid), so it still
reaches them; no other local user can list the directory or connect.

Each seat gets its own socket in its own directory (`<match dir>/seat<N>/referee.sock`). A
directory that holds anything besides this socket is shared (the older layout, one socket for both
seats next to the match's own files): its ownership is left alone, and the socket keeps the old
world-connectable mode so that both bots' uids can connect.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def is_dedicated(socket_path: Path) -> bool:
    """Whether the socket's directory holds this socket and nothing else (one seat's own)."""
    try:
        return os.listdir(socket_path.parent) == [socket_path.name]
    except OSError:
        return False


def make_private(socket_path: Path, uid: int | None) -> bool:
    """Give the seat's socket directory (0700) and socket (0600) to `uid` (None: keep the owner).

    Called by a launcher before the bot starts. Returns False for a shared directory, which only
    gets the old behaviour (socket mode 0666, the directory untouched)."""
    if not is_dedicated(socket_path):
        if uid is not None and uid != os.stat(socket_path).st_uid:
            log.info("referee socket %s is shared by several seats; it stays connectable by all", socket_path)
            os.chmod(socket_path, (os.stat(socket_path).st_mode & 0o7777) | 0o666)
        return False
    parent = socket_path.parent
    if uid is not None:
        os.chown(parent, uid, uid)
        os.lchown(socket_path, uid, uid)
    os.chmod(parent, 0o700)
    os.chmod(socket_path, 0o600)
    return True
