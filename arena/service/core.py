"""What every operation of the management API shares: the store, who is asking, and the limits.

`Service` is built once per server process (`arena serve`) and handed to both transports: the
gRPC servicer (`arena.service.grpc_servicer`) and the web app. `caller()` turns a presented token
and the caller's address into a `Principal` and charges the call to its rate-limit bucket.
With `state` (a Redis every replica shares: `arena serve --shared-state`), the rate limits, upload
slots and build slots are counted there instead of in this process (`arena.access.shared_state`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from arena.access.admin import AdminToken
from arena.access.forwarded import TrustedProxies
from arena.access.ratelimit import RateLimiter
from arena.access.roles import Principal, resolve
from arena.access.shared_state import SharedState
from arena.access.slots import peer_host as _host
from arena.sandbox.archive import MAX_BUNDLE_BYTES
from arena.service.builds import BuildSlots
from arena.service.errors import PermissionDenied
from arena.service.quota import UploadGate
from arena.store import Store
from arena.store.identity import HOUSE

log = logging.getLogger("arena.service")


@dataclass
class Service:
    store: Store
    admin: AdminToken | None = None
    limiter: RateLimiter = field(default_factory=RateLimiter)
    launcher: str = "bwrap"  # where submitted bundles build
    upload_cap: int = MAX_BUNDLE_BYTES  # bytes of one uploaded archive
    builds: BuildSlots = field(default_factory=BuildSlots)  # where submitted bundles build
    uploads: UploadGate = field(default_factory=UploadGate)  # upload slots and disk quotas per owner
    state: SharedState | None = None  # the replicas' shared counters; None: this process's memory
    # whose X-Forwarded-For names a gRPC caller's address; `arena serve` reads FORWARDED_ALLOW_IPS,
    # the variable uvicorn reads for the web (arena.access.forwarded)
    proxies: TrustedProxies = field(default_factory=TrustedProxies.loopback)

    def __post_init__(self) -> None:
        if self.state is not None:  # every replica then spends the same budgets
            self.limiter.shared = self.state
            self.uploads.share(self.state)
            self.builds.share(self.state)

    def caller(self, token: str | None, address: str) -> Principal:
        """The principal behind `token` (a spectator without one), charged one call; raises on a bad token."""
        if not token:
            self.limiter.hit("anonymous", f"addr:{_host(address)}")
            return resolve(self.store, self.admin, None)
        try:
            principal = resolve(self.store, self.admin, token)
        except Exception:
            self.limiter.hit(
                "anonymous", f"addr:{_host(address)}"
            )  # token guessing costs like anonymous calls
            raise
        self.limiter.hit("call", principal.key)
        return principal


# What a person uses for each organiser's call: errors name these, never the gRPC method (a bot
# author or organiser reads them in the CLI; tests/service/test_error_words.py checks every message).
COMMANDS = {
    "CreateSeason": "`arena season create`",
    "StartSeason": "`arena season start`",
    "FreezeSeason": "`arena season freeze`",
    "CloseSeason": "`arena season close`",
    "SuspendBot": "suspending a bot (`POST /api/bots/NAME/suspend`, the web's admin pages)",
    "ReinstateBot": "reinstating a bot (`POST /api/bots/NAME/reinstate`, the web's admin pages)",
    "ListOwners": "`arena owners list`",
    "AddOwner": "`arena owners add`",
    "RotateOwner": "`arena owners rotate`",
    "RevokeOwner": "`arena owners revoke`",
    "PauseSeason": "`arena season pause`",
    "ResumeSeason": "`arena season resume`",
    "RequeueFailed": "`arena season requeue`",
    "VoidMatch": "`arena season void`",
    "RecomputeRatings": "`arena season recompute`",
    "SuspendOwner": "`arena owners suspend`",
    "ReinstateOwner": "`arena owners reinstate`",
    "ListWorkers": "`arena workers list`",
    "DrainWorker": "`arena workers drain`",
    "UndrainWorker": "`arena workers undrain`",
    "ListAdminActions": "`arena admin log`",
}


def require_admin(principal: Principal, call: str) -> None:
    """PERMISSION_DENIED naming the command (COMMANDS[call]) unless the caller is the admin."""
    if not principal.is_admin:
        raise PermissionDenied(f"{COMMANDS[call]} is for the organiser: it needs the admin token")


def require_owner(principal: Principal, what: str) -> str:
    """The owner a bot of this principal is filed under: an owner's own name, or for the admin the
    house (`HOUSE`, a reserved name no owner token resolves to) unless told otherwise. Spectators are
    refused."""
    if principal.role == "spectator":
        raise PermissionDenied(
            f"{what} needs an owner's API token (ARENA_API_TOKEN); ask the organiser for one"
        )
    return principal.owner or HOUSE
