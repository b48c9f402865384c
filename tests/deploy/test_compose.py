"""docker-compose.yml and the Dockerfiles against the repository and the real CLI (no Docker engine
needed): every `arena` command a service runs parses with the real click command, the services get
the variables the CLI reads, and every COPY source exists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import click
import pytest
from deploy_support import ADMIN_SECRET, COMPOSE, DOCS_ENV, REPO, load_compose

from arena.cli import cli

ARENA_SERVICES = ("server", "worker")


def parse_arena_command(argv: list[str]) -> click.Context:
    """Parse `arena SUB ARGS...` with the real click command, without running it."""
    assert argv[0] == "arena", argv
    sub = cli.get_command(click.Context(cli), argv[1])
    assert sub is not None, f"no `arena {argv[1]}` command"
    return sub.make_context(f"arena {argv[1]}", list(argv[2:]))


def test_services_and_their_dependencies(compose: dict) -> None:
    services = compose["services"]
    assert {n for n, s in services.items() if "profiles" not in s} == {
        "postgres",
        "redis",
        "server",
        "proxy",
        "worker",
    }
    assert {n for n, s in services.items() if "profiles" in s} == {
        "prometheus",
        "grafana",
    }  # `--profile monitoring`
    assert "test" in services["postgres"]["healthcheck"] and "test" in services["redis"]["healthcheck"]
    assert services["server"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["server"]["depends_on"]["redis"]["condition"] == "service_healthy"  # shared state
    assert services["worker"]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["proxy"]["depends_on"] == ["server"]  # it resolves the replicas' names at start
    for name in ("server", "worker"):  # both run as `--scale NAME=N`
        assert "container_name" not in services[name]  # a fixed name would forbid --scale
        assert "ports" not in services[name]  # a fixed host port would clash between replicas
    # The proxy is the arena's only way in; PostgreSQL and Redis listen on the host's loopback only,
    # for the host's CLI (the season runner), nobody else.
    assert [name for name in services if "ports" in services[name]] == [
        "postgres", "redis", "proxy", "prometheus", "grafana"
    ]  # fmt: skip
    for name in ("postgres", "redis", "prometheus", "grafana"):  # the monitoring profile's too
        assert all(str(p).startswith("127.0.0.1:") for p in services[name]["ports"])


def test_commands_parse_with_the_real_cli(compose: dict) -> None:
    server = parse_arena_command(compose["services"]["server"]["command"])
    assert server.params["tcp"] == "0.0.0.0:50051" and server.params["web_addr"] == "0.0.0.0:8000"
    assert server.params["unix_path"] == ""
    assert server.params["admin_token_file"] == ADMIN_SECRET  # 0.0.0.0 needs it (see below)
    assert server.params["workers"] == 1 and server.params["launcher"] == "bwrap"  # it plays challenges
    home = compose["services"]["server"]["environment"]["ARENA_HOME"]
    assert server.params["replay_dir"].startswith(f"{home}/")  # kept in the mounted home, not the container
    worker = parse_arena_command(compose["services"]["worker"]["command"])
    assert worker.params["concurrency"] == 1
    # /metrics on the stack's network, where the monitoring profile's Prometheus scrapes it, never published
    assert server.params["metrics_address"] == worker.params["metrics_address"] == "0.0.0.0:9464"
    scraped = (REPO / "deploy" / "prometheus" / "prometheus.yml").read_text()
    assert scraped.count("port: 9464") == 2 and "names: [server]" in scraped and "names: [worker]" in scraped
    # The proxy publishes the port it binds, on the host's loopback unless ARENA_BIND says otherwise.
    proxy = compose["services"]["proxy"]
    (port,) = proxy["ports"]
    assert (
        port.startswith("127.0.0.1:")
        and port.rsplit(":", 1)[1] == proxy["environment"]["ARENA_PROXY_BIND"].rsplit(":", 1)[1]
    )
    with pytest.raises(click.UsageError):  # the check itself can fail
        parse_arena_command(["arena", "worker", "--concurrency", "0"])


def test_environment_is_what_the_cli_reads(compose: dict) -> None:
    from arena.store.db import arena_home, database_url
    from arena.workers import celery_app

    services = compose["services"]
    pg = services["postgres"]["environment"]
    # The server: its home (shared with the host's CLI), the shared state, and the proxy it trusts.
    extra = {"ARENA_HOME": ..., "ARENA_STATE_URL": ..., "FORWARDED_ALLOW_IPS": ...}
    for name, more in (("server", extra), ("worker", {})):
        env = services[name]["environment"]
        assert set(env) == {"ARENA_DATABASE_URL", "ARENA_BROKER_URL", *more}, name
        assert env["ARENA_DATABASE_URL"] == (
            f"postgresql://{pg['POSTGRES_USER']}:{pg['POSTGRES_PASSWORD']}@postgres:5432/{pg['POSTGRES_DB']}"
        )
        assert env["ARENA_BROKER_URL"].startswith("redis://redis:6379/")
    # The servers' home is mounted at the path it has on the host (the host's CLI submits there too)...
    home = services["server"]["environment"]["ARENA_HOME"]
    assert any(str(v).split(":")[:2] == [home, home] for v in services["server"]["volumes"])
    # ...and the workers mount none of it: each has a scratch volume of its own at its working folder
    # (ARENA_HOME's default "."), where it caches the bundles it fetches from the store.
    assert services["worker"]["volumes"][0] == "/var/lib/arena"
    assert not any(home in str(v) for v in services["worker"]["volumes"])
    assert home not in str(services["worker"]["command"])
    assert "WORKDIR /var/lib/arena" in (REPO / "docker/arena.Dockerfile").read_text()
    # Shared state in another Redis database than the broker's (Celery's keys are not the limits').
    state = services["server"]["environment"]["ARENA_STATE_URL"]
    assert (
        state.startswith("redis://redis:6379/")
        and state != services["server"]["environment"]["ARENA_BROKER_URL"]
    )
    # ... and the CLI really reads those names (what the host's `arena season run` relies on too).
    mp = pytest.MonkeyPatch()
    for name in ARENA_SERVICES:
        env = services[name]["environment"]
        with mp.context() as m:
            m.delenv("ARENA_HOME", raising=False)
            for key, value in env.items():
                m.setenv(key, value)
            assert database_url() == env["ARENA_DATABASE_URL"]
            assert str(arena_home()) == env.get("ARENA_HOME", os.getcwd())
            assert celery_app.broker_url() == env["ARENA_BROKER_URL"]
            if name == "server":
                argv = services[name]["command"]
                assert parse_arena_command(argv).params["state_url"] == state


def test_the_servers_trust_the_proxy_and_only_it(compose: dict) -> None:
    """The proxy has a fixed address on the stack's network, and that address is all the servers'
    FORWARDED_ALLOW_IPS holds: visitors are counted by their own address, not all as the proxy, and
    a worker (on the same network) cannot name a caller of its choosing."""
    import ipaddress

    from arena.access.forwarded import TrustedProxies

    proxy_ip = compose["services"]["proxy"]["networks"]["default"]["ipv4_address"]
    (subnet,) = compose["networks"]["default"]["ipam"]["config"]
    assert ipaddress.ip_address(proxy_ip) in ipaddress.ip_network(subnet["subnet"])
    # Docker gives the other containers addresses in ip_range only: none can take the proxy's.
    dynamic = ipaddress.ip_network(subnet["ip_range"])
    assert dynamic.subnet_of(ipaddress.ip_network(subnet["subnet"]))  # type: ignore[arg-type]
    assert ipaddress.ip_address(proxy_ip) not in dynamic
    trusted = TrustedProxies.parse(compose["services"]["server"]["environment"]["FORWARDED_ALLOW_IPS"])
    assert trusted.trusts(proxy_ip)
    neighbour = str(ipaddress.ip_address(proxy_ip) + 1)
    assert not trusted.trusts(neighbour) and trusted.client(neighbour, ["203.0.113.9"]) == neighbour
    assert trusted.client(proxy_ip, ["203.0.113.9"]) == "203.0.113.9"


def test_the_proxy_runs_the_tested_haproxy_file(compose: dict) -> None:
    """The proxy image holds deploy/haproxy/arena.cfg (the file tests/deploy/test_replicas.py runs), and
    the service gives it every variable it reads with no default: the two replicas by their container
    names, gRPC and web ports as the server command listens."""
    cfg = (REPO / "deploy/haproxy/arena.cfg").read_text()
    dockerfile = (REPO / "docker/proxy.Dockerfile").read_text()
    assert "COPY deploy/haproxy/arena.cfg /etc/haproxy/arena.cfg" in dockerfile
    assert "/etc/haproxy/arena.cfg" in dockerfile.rsplit("CMD", 1)[1]
    env = compose["services"]["proxy"]["environment"]
    required = set(re.findall(r'"\$\{(ARENA_[A-Z0-9_]+)\}"', cfg))
    assert required == {f"ARENA_REPLICA{i}_{kind}" for i in (1, 2) for kind in ("GRPC", "WEB")}
    assert required <= set(env)
    for i in (1, 2):  # docker-compose 1.29's names for `-p elfern-arena --scale server=2`
        assert env[f"ARENA_REPLICA{i}_GRPC"] == f"elfern-arena_server_{i}:50051"
        assert env[f"ARENA_REPLICA{i}_WEB"] == f"elfern-arena_server_{i}:8000"
    server = parse_arena_command(compose["services"]["server"]["command"])
    assert server.params["tcp"].endswith(":50051") and server.params["web_addr"].endswith(":8000")
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("Debian's haproxy is not installed (scripts/setup.sh installs it)")
    # HAProxy itself accepts the file with the service's variables (names made loopback addresses:
    # `-c` resolves them, and the stack's names resolve only on its network).
    check = {k: re.sub(r"^[^:]+:", "127.0.0.1:", v) for k, v in env.items()}
    out = subprocess.run(
        [haproxy, "-c", "-f", str(REPO / "deploy/haproxy/arena.cfg")],
        env={"PATH": "/usr/sbin:/usr/bin:/bin", **check, "ARENA_PROXY_ADMIN": "/nonexistent/arena.sock"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr


def test_arena_home_must_be_given() -> None:
    with pytest.raises(KeyError, match="ARENA_HOME"):
        load_compose({})


def test_the_admin_token_comes_from_a_secret_file(compose: dict) -> None:
    """The server reads the token from Compose's secret mount; only the server gets it; the file must
    be named (no default token, no token in the environment or on the command line)."""
    services = compose["services"]
    name = ADMIN_SECRET.rsplit("/", 1)[1]
    assert services["server"]["secrets"] == [name]
    assert compose["secrets"] == {name: {"file": DOCS_ENV["ARENA_ADMIN_TOKEN_FILE"]}}
    assert "secrets" not in services["worker"]  # workers only play; they never need the token
    text = COMPOSE.read_text()
    assert "ARENA_ADMIN_TOKEN:" not in text and "ARENA_ADMIN_TOKEN=" not in text
    with pytest.raises(KeyError, match="ARENA_ADMIN_TOKEN_FILE"):
        load_compose({"ARENA_HOME": "/srv/arena-home"})


def _server_argv(compose: dict, token_file: str | None) -> list[str]:
    """The server's command with its ports at 0 and the secret at `token_file` (None: dropped)."""
    argv = [
        a.replace(":50051", ":0").replace(":8000", ":0") for a in compose["services"]["server"]["command"]
    ]
    i = argv.index("--admin-token-file")
    if token_file is None:
        del argv[i : i + 2]
    else:
        argv[i + 1] = token_file
    return argv


def test_the_server_refuses_to_start_without_its_secret(compose: dict, tmp_path) -> None:
    """`--tcp 0.0.0.0:50051` hands out seat tokens and admin calls: without the secret the server exits
    in one line before it opens the store or listens (with it, tests/deploy/test_topology.py runs it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"PYTHONPATH": str(REPO), "ARENA_HOME": str(tmp_path / "home")}
    for token_file, message in (
        (None, "--tcp 0.0.0.0:0 listens beyond this machine"),
        (str(tmp_path / "missing"), f"cannot read the admin token file {tmp_path / 'missing'}"),
    ):
        argv = _server_argv(compose, token_file)
        out = subprocess.run(
            [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", *argv[1:]],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 2, out.stderr
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "home").exists()  # nothing opened


@pytest.mark.parametrize("service", ARENA_SERVICES)
def test_sandbox_settings(compose: dict, service: str) -> None:
    """The workers play in bwrap; so does the server (it builds submitted bundles and its --workers
    play challenges), with the same privileges and the same uid pool."""
    worker = compose["services"][service]
    assert not worker.get("privileged")
    assert sorted(worker["cap_add"]) == ["NET_ADMIN", "SYS_ADMIN"]  # tests/deploy/test_topology.py shows why
    assert "apparmor=unconfined" in worker["security_opt"]
    # Docker's default profile refuses pivot_root, which bwrap needs; the bots keep the sandbox's filter
    assert "seccomp=unconfined" in worker["security_opt"]
    # One uid pool for all replicas, at the directory the root launcher leases uids from.
    from arena.sandbox.bwrap import BwrapLauncher

    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("the uid pool's directory is the root launcher's; needs root and bwrap")
    pool = str(BwrapLauncher().state_dir / "uids")
    assert any(str(v).endswith(f":{pool}") for v in worker["volumes"])


def _copy_sources(dockerfile: str) -> list[str]:
    sources = []
    for line in dockerfile.splitlines():
        m = re.match(r"\s*(COPY|ADD)\s+(?!--from)(.*)", line)
        if m:
            sources += m.group(2).split()[:-1]
    return sources


@pytest.mark.parametrize("path", sorted((REPO / "docker").glob("*.Dockerfile")), ids=lambda p: p.name)
def test_dockerfile_copy_sources_exist(path) -> None:
    text = path.read_text()
    sources = _copy_sources(text)
    # a runtime image built on another of the project's images (bot-go on bot-python) inherits its files
    parents = re.findall(r"^ARG \w+_IMAGE=elfern-arena/([\w-]+)", text, re.M)
    for parent in parents:
        assert (REPO / "docker" / f"{parent}.Dockerfile").is_file(), (
            f"{path.name}: no Dockerfile for {parent}"
        )
    assert sources or parents or path.name == "redis.Dockerfile", f"{path.name} copies nothing?"
    for src in sources:
        assert (REPO / src).exists(), f"{path.name}: COPY source {src} is not in the repository"
    ignored = [
        ln.strip()
        for ln in (REPO / ".dockerignore").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert not set(sources) & set(ignored), "a COPY source is excluded by .dockerignore"


def test_compose_builds_the_arena_image(compose: dict) -> None:
    build = compose["services"]["worker"]["build"]
    assert (REPO / build["context"] / build["dockerfile"]).is_file()
    assert compose["services"]["server"]["image"] == compose["services"]["worker"]["image"]


@pytest.mark.parametrize("tool", ["docker-compose", "docker compose"])
def test_compose_config_validates(tool: str) -> None:
    """`config` validates the file against the Compose schema, with no engine: Debian's docker-compose
    1.29 (what the stack test runs) and, where installed, the Compose v2 plugin."""
    argv = tool.split()
    if shutil.which(argv[0]) is None or subprocess.run([*argv, "version"], capture_output=True).returncode:
        pytest.skip(f"`{tool}` is not installed here (scripts/setup.sh installs Debian's docker-compose)")
    env = {**DOCS_ENV, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    out = subprocess.run(
        [*argv, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    # ...and refuses to go on without ARENA_HOME, naming it
    env.pop("ARENA_HOME")
    out = subprocess.run(
        [*argv, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True, env=env
    )
    assert out.returncode != 0 and "ARENA_HOME" in out.stderr


@pytest.mark.parametrize("rewrite", ["loopback_stack", "network_stack"])
def test_the_docker_tests_rewrites_validate(rewrite: str, tmp_path) -> None:
    """The files the Docker tests run (deploy_support's rewrites of this one) pass `docker-compose
    config` too: the loopback one without the proxy and networks, the network one `internal`."""
    import deploy_support
    import yaml

    if shutil.which("docker-compose") is None:
        pytest.skip("Debian's docker-compose is not installed here (scripts/setup.sh installs it)")
    made = getattr(deploy_support, rewrite)(
        *(["elfern-local/base:latest"] if rewrite == "loopback_stack" else [])
    )
    path = tmp_path / "docker-compose.yml"
    path.write_text(yaml.safe_dump(made, sort_keys=False))
    env = {**DOCS_ENV, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    out = subprocess.run(
        ["docker-compose", "-f", str(path), "config"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    assert all("ports" not in s for s in services.values())
    if rewrite == "loopback_stack":
        assert "proxy" not in services and "networks" not in yaml.safe_load(out.stdout)
    else:
        assert "proxy" in services and yaml.safe_load(out.stdout)["networks"]["default"]["internal"] is True


def test_the_images_install_holds_every_arena_file(tmp_path) -> None:
    """docker/arena.Dockerfile installs the package non-editably: every tracked file under arena/
    (templates, migrations, bench bundles...) must be in the wheel, not only the Python modules."""
    import zipfile

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout to list the tracked files")
    tracked = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "arena", "pyproject.toml", "README.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    src = tmp_path / "src"
    for name in tracked:  # what the Dockerfile's COPY lines bring in
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "wheel"),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    packaged = set(zipfile.ZipFile(wheel).namelist())
    assert [n for n in tracked if n.startswith("arena/") and n not in packaged] == []


def test_the_test_engine_builds_every_image_the_stack_tests_use_offline() -> None:
    """The private engine (scripts/docker_engine.py) builds the proxy image with the others, and every
    Debian package their Dockerfiles install is in its debootstrap base: the builds have no network."""
    import docker_engine

    built = {dockerfile for dockerfile, _ in docker_engine.IMAGES.values()}
    assert "docker/proxy.Dockerfile" in built and "elfern-arena/proxy:latest" in docker_engine.IMAGES
    for dockerfile in built:
        text = (REPO / dockerfile).read_text().replace("\\\n", " ")
        for m in re.finditer(r"apt-get install -y --no-install-recommends([^&\n]*)", text):
            wanted = [w for w in m.group(1).split() if not w.startswith("$")]
            missing = set(wanted) - set(docker_engine.BASE_PACKAGES)
            assert wanted and not missing, f"{dockerfile}: {sorted(missing)} not in BASE_PACKAGES"


def test_the_monitoring_profile_mounts_files_that_exist(compose: dict) -> None:
    """Prometheus gets the tested rules and scrape file, Grafana the dashboard and its provisioning."""
    for name in ("prometheus", "grafana"):
        for volume in compose["services"][name]["volumes"]:
            source = str(volume).split(":")[0]
            if source.startswith("./"):
                assert (REPO / source).exists(), (name, source)
    mounts = " ".join(compose["services"]["prometheus"]["volumes"])
    assert "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml" in mounts
    assert "alerts.yml" in (REPO / "deploy" / "prometheus" / "prometheus.yml").read_text()
