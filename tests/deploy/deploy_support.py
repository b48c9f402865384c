"""The compose file as Docker Compose would see it: YAML, `${VAR}`, `${VAR:-default}` and `${VAR:?error}`
interpolated from a given environment, merge keys resolved (PyYAML does that)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
#: The capabilities Docker gives a container by default (moby's oci/caps defaults).
DOCKER_DEFAULT_CAPS = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FSETID",
    "FOWNER",
    "MKNOD",
    "NET_RAW",
    "SETGID",
    "SETUID",
    "SETFCAP",
    "SETPCAP",
    "NET_BIND_SERVICE",
    "SYS_CHROOT",
    "KILL",
    "AUDIT_WRITE",
)
#: The variables docs/deploy.md tells the organiser to set.
DOCS_ENV = {"ARENA_HOME": "/srv/arena-home", "ARENA_ADMIN_TOKEN_FILE": "/srv/arena-admin-token"}
#: Where Compose mounts the server's secret (and where its command reads the admin token).
ADMIN_SECRET = "/run/secrets/arena_admin_token"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}")


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's variable syntax as used in docker-compose.yml; a missing `:?` variable raises."""

    def sub(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = env.get(name, "")
        if op == ":?" and not value:
            raise KeyError(f"{name}: {arg}")
        return value or (arg if op == ":-" else "")

    return _VAR.sub(sub, text)


def load_compose(env: dict[str, str]) -> dict:
    return yaml.safe_load(interpolate(COMPOSE.read_text(), env))


def loopback_stack(base_image: str) -> dict:
    """docker-compose.yml as the tests run it on an engine that makes no network (no bridge, no
    iptables): Compose still interpolates it, but every service shares the network namespace of one
    extra `netns` container that has `--network none` (loopback only), so the services reach each other
    on 127.0.0.1, and `ports:` (which needs a bridge), `networks:`, the `proxy`, the optional monitoring
    services and the `--metrics` listeners (whose one port every replica would take) are dropped.
    Everything else is the file as is.
    The test reaches the web and the APIs by entering that namespace (`nsenter --net`)."""
    raw = yaml.safe_load(COMPOSE.read_text())
    services = raw["services"]
    # One server, reached directly: the proxy finds replicas by name on a network, and two replicas
    # would take the same ports of one namespace (test_compose_replicas.py runs them on a network).
    del services["proxy"]
    raw.pop("networks", None)
    for name in [n for n, svc in services.items() if "profiles" in svc]:  # the optional monitoring
        del services[name]
    for svc in services.values():
        command = svc.get("command")
        if isinstance(command, list) and "--metrics" in command:  # every replica's 9464 in one namespace
            at = command.index("--metrics")
            del command[at : at + 2]
        svc.pop("ports", None)
        svc.pop("networks", None)
        svc["network_mode"] = "service:netns"
        if "build" in svc:
            svc["build"]["context"] = str(REPO / svc["build"]["context"])
        env = svc.get("environment") or {}
        for key, value in list(env.items()):  # service names resolve on a bridge only: loopback here
            env[key] = str(value).replace("@postgres:", "@127.0.0.1:").replace("//redis:", "//127.0.0.1:")
    services["netns"] = {
        "image": base_image,
        "command": ["sleep", "infinity"],
        "network_mode": "none",
        "init": True,
    }
    return raw


def network_stack() -> dict:
    """docker-compose.yml as the replicas test runs it: the file as is, on its own network (the
    private bridge Compose makes from the file's `networks:`, which the test's ARENA_SUBNET places),
    made `internal` (no route beyond it) and with `ports:` dropped (the engine publishes nothing: no
    iptables); the test reaches the proxy, PostgreSQL and Redis at their addresses on that bridge."""
    raw = yaml.safe_load(COMPOSE.read_text())
    for svc in raw["services"].values():
        svc.pop("ports", None)
        if "build" in svc:
            svc["build"]["context"] = str(REPO / svc["build"]["context"])
    raw["networks"]["default"]["internal"] = True
    return raw
