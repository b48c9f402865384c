"""Every non-Python sample bot plays a short match against the Python random bot through the same
referee and the same bwrap sandbox as the Python bots, its build step included (run in the
sandbox, without network, from a clean copy of the bundle; the `sandbox` fixture's bundle cache is
fresh in every session, see conftest.py). A test is skipped, with the reason,
only where the toolchain is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.languages import missing_tools
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "sample_bots"
PROTO = REPO / "protos" / "elfern" / "arena" / "v1" / "referee.proto"


def _missing(*tools: str) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]


def _match(bundle: Path, launcher, deals: int = 2):
    out = play_match(
        (load_bundle(bundle), load_bundle(BOTS / "python" / "random")), rules=Rules(max_deals=deals), seed=21,
        time_control=TimeControl(startup=20.0), launcher=launcher, match_id=f"lang-{bundle.name}",
    )  # fmt: skip
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    assert out.end_reason == "COMPLETED" and out.deals_played == deals
    plays = [p for d in out.record.deals for p in d.plays if p.seat == 0]
    assert len(plays) == 16 * deals, "the sample bot answered every turn"
    return out


@pytest.mark.parametrize("bundle", ["node", "typescript", "cpp"])
def test_bundled_proto_is_the_projects(bundle: str) -> None:
    # A bundle sees only its own folder in the sandbox, so it carries a copy of the contract.
    assert (BOTS / bundle / "proto" / "referee.proto").read_text() == PROTO.read_text(), (
        f"sample_bots/{bundle}/proto/referee.proto is stale: run `make protos` (it copies {PROTO.relative_to(REPO)})"
    )


@pytest.mark.slow
def test_node_bot_plays_in_the_sandbox(sandbox, clean_copy) -> None:
    if missing := _missing("node", "npm"):
        pytest.skip(f"Node.js toolchain missing: {', '.join(missing)} (Debian packages nodejs, npm)")
    if not (BOTS / "node" / ".npm-cache").is_dir():
        pytest.skip("sample_bots/node/.npm-cache is empty: run `make setup` (it fills it with npm ci)")
    _match(clean_copy("node"), sandbox)


@pytest.mark.slow
def test_typescript_bot_compiles_with_tsc_and_plays_in_the_sandbox(sandbox, clean_copy) -> None:
    if missing := missing_tools("typescript"):
        pytest.skip(
            f"TypeScript toolchain missing: {', '.join(missing)} (Debian packages nodejs, npm, node-typescript)"
        )
    if not (BOTS / "typescript" / ".npm-cache").is_dir():
        pytest.skip("sample_bots/typescript/.npm-cache is empty: run `make setup` (it fills it with npm ci)")
    bundle = clean_copy("typescript")
    assert not (bundle / "dist").exists()
    _match(bundle, sandbox, deals=1)


@pytest.mark.slow
def test_cpp_bot_builds_and_plays_in_the_sandbox(sandbox, clean_copy) -> None:
    if missing := _missing("g++", "make", "protoc", "grpc_cpp_plugin", "pkg-config"):
        pytest.skip(
            f"C++ gRPC toolchain missing: {', '.join(missing)} (see DEB_PACKAGES in scripts/setup.sh)"
        )
    if subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        pytest.skip("libgrpc++-dev / libprotobuf-dev missing (see DEB_PACKAGES in scripts/setup.sh)")
    bundle = clean_copy("cpp")
    assert not (bundle / "build").exists()
    _match(bundle, sandbox)


@pytest.mark.slow
def test_c_stdio_bot_builds_and_plays_behind_the_bridge(sandbox, clean_copy) -> None:
    if missing := _missing("gcc"):
        pytest.skip(f"C compiler missing: {', '.join(missing)} (Debian package gcc)")
    _match(clean_copy("stdio/c"), sandbox)


def test_shell_stdio_bot_plays_behind_the_bridge(sandbox, clean_copy) -> None:
    _match(clean_copy("stdio/shell"), sandbox, deals=1)


@pytest.mark.slow
@pytest.mark.parametrize("sample", ["stdio/ruby", "stdio/java", "stdio/go", "stdio/rust", "stdio/csharp"])
def test_a_stdio_port_of_greedy_builds_and_plays_in_the_sandbox(sample, sandbox, clean_copy) -> None:
    # The runtime table (arena/sandbox/languages.py) gives each its toolchain: the JDK's own folder
    # past /etc/alternatives and its /etc/java-17-openjdk, Go's GOCACHE in the tmpfs, offline.
    bundle = clean_copy(sample)
    language = load_bundle(bundle).language
    if missing := missing_tools(language):
        pytest.skip(
            f"{language} toolchain missing: {', '.join(missing)} (see DEB_PACKAGES in scripts/setup.sh)"
        )
    _match(bundle, sandbox, deals=1)


@pytest.mark.slow
def test_a_failed_build_shows_the_compilers_first_error_and_where_the_whole_log_is(
    tmp_path, repo_root
) -> None:
    """`arena play` of a C bot with a mistake followed by thirty more: what it prints is the first
    error (which the log's last lines no longer hold), and the whole log is where it says."""
    if missing := _missing("gcc"):
        pytest.skip(f"C compiler missing: {', '.join(missing)} (Debian package gcc)")
    bad = tmp_path / "bad"
    shutil.copytree(BOTS / "stdio" / "c", bad, ignore=shutil.ignore_patterns("bot"))
    later = "".join(f"static int later{i}(void) {{ return later_mistake_{i}; }}\n" for i in range(30))
    source = (bad / "bot.c").read_text()
    (bad / "bot.c").write_text(
        source.replace(
            "int main(void) {",
            f"static int first(void) {{ return first_mistake; }}\n{later}int main(void) {{",
        )
    )
    from click.testing import CliRunner

    from arena.cli import cli

    played = CliRunner().invoke(
        cli, ["play", str(bad), str(BOTS / "python" / "random"), "--deals", "1", "--seed", "4", "--sandbox", "bwrap"],
        env={"ARENA_BUNDLE_CACHE": str(tmp_path / "cache")}, catch_exceptions=False,
    )  # fmt: skip
    text = played.output
    assert played.exit_code == 1 and "BUILD_FAILED for c-stdio-greedy (seat 0)" in text, text
    assert "the first error lines of its build log" in text
    assert "first_mistake" in text and "undeclared" in text, text
    assert "later_mistake_29" not in text  # the end of the log is not what is shown
    where = re.search(r"the whole log: (\S+build-failed\.log)\)", text)
    assert where, text
    whole = Path(where.group(1)).read_text()
    assert "first_mistake" in whole and "later_mistake_29" in whole
