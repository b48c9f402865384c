"""Every sample bot of every language plays a whole match against the Python random bot on the Docker
launcher: one container per bot, from its language's runtime image (docker/bot-*.Dockerfile, built
offline by the private engine: tests/conftest.py docker_language_images), its build step run once in
that image's container from a clean copy of the bundle, without network, with a bundle cache of its
own (a build made by bwrap on the host is not reused). A fault verdict of either seat fails the test.
The bwrap twin of these matches is test_languages.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import bundle_cache_dir, cached_build_log, load_bundle, staged_for_build
from arena.sandbox.docker import IMAGES
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "sample_bots"
#: Every sample bundle, with the deals its match plays (the search bots think for longer per move).
SAMPLES = {
    "python/random": 2,
    "python/greedy": 2,
    "python/tactician": 2,
    "python/pimc": 1,
    "python/ismcts": 1,
    "node": 2,
    "typescript": 1,
    "cpp": 2,
    "stdio/c": 2,
    "stdio/shell": 1,
    "stdio/ruby": 1,
    "stdio/java": 1,
    "stdio/go": 1,
    "stdio/rust": 1,
    "stdio/csharp": 1,
}


def test_every_sample_bundle_is_played_here() -> None:
    found = sorted(
        str(p.parent.relative_to(BOTS)) for p in BOTS.rglob("bot.toml") if "node_modules" not in p.parts
    )
    assert found == sorted(SAMPLES), (
        "a sample bot is missing from SAMPLES (or SAMPLES names one that is gone)"
    )


@pytest.fixture(scope="module")
def docker_launcher(docker_language_images, tmp_path_factory):
    """The Docker launcher on the private engine, with a fresh bundle cache for this module."""
    from arena.sandbox.docker import DockerLauncher

    mp = pytest.MonkeyPatch()
    mp.setenv("ARENA_BUNDLE_CACHE", str(tmp_path_factory.mktemp("docker-bundle-cache")))
    try:
        yield DockerLauncher(
            docker=docker_engine_client(),
            host=docker_language_images.host,
            state_dir=tmp_path_factory.mktemp("docker-st"),
        )
    finally:
        mp.undo()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(2400)  # the first run on a machine debootstraps the toolchains base
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_a_sample_bot_plays_a_whole_match_in_its_languages_image(
    sample, docker_launcher, docker_language_images, clean_copy
) -> None:
    if sample in ("node", "typescript") and not (BOTS / sample / ".npm-cache").is_dir():
        pytest.skip(f"sample_bots/{sample}/.npm-cache is empty: run `make setup` (it fills it with npm ci)")
    bundle = load_bundle(clean_copy(sample))
    image = IMAGES[bundle.language.lower()]
    assert docker_language_images.has_image(image), f"{image} was not built"
    deals = SAMPLES[sample]
    out = play_match(
        (bundle, load_bundle(BOTS / "python" / "random")), rules=Rules(max_deals=deals), seed=21,
        time_control=TimeControl(startup=60.0), launcher=docker_launcher, pause_idle=True,
        match_id=f"docker-{sample.replace('/', '-')}",
    )  # fmt: skip
    output = "\n".join(log.text for log in out.record.logs if log.seat == 0 and log.source == "output")
    assert out.verdicts == ("OK", "OK"), f"{out.verdict_details}\n{output[-1500:]}"
    assert out.end_reason == "COMPLETED" and out.deals_played == deals
    plays = [p for d in out.record.deals for p in d.plays if p.seat == 0]
    assert len(plays) == 16 * deals, "the sample bot answered every turn"
    if bundle.build:  # built once, in its container: the success is recorded in this module's cache
        staged = staged_for_build(bundle)
        assert cached_build_log(staged) is not None
        assert bundle_cache_dir() in staged.build_record.parents


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(2400)
def test_the_start_up_bench_measures_a_language_on_the_docker_launcher(
    docker_language_images, monkeypatch
) -> None:
    """`arena bench startup --languages --sandbox docker` (its CLI's form: tests/cli): the C sample is
    built in its image's container and its mirror match joins in containers, beside its bare
    hello-world."""
    from arena.bench.languages import run

    monkeypatch.setenv("DOCKER_HOST", docker_language_images.host)
    monkeypatch.setenv("PATH", f"{os.path.dirname(docker_engine_client())}:{os.environ['PATH']}")
    r = run(1, ("c",), sandbox="docker")
    assert r["launcher"] == "docker" and r["skipped"] == {}
    c = r["languages"]["c"]
    assert c["build_s"] > 0 and c["hello_bare_ms"] > 0 and c["join_wall_ms"] > 0 and c["join_cpu_ms"] > 0


def docker_engine_client() -> str:
    return "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"
