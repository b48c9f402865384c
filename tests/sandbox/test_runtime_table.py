"""The runtime table (arena/sandbox/languages.py) as the launchers use it: a JVM gets its real folder
and its /etc configuration in the bwrap sandbox (and fails without them: the positive control), the
build limits rise only where the table says, the Docker command carries the language's image and
environment, `arena sandbox check` lists the languages, and a failed build is shown by its first
error lines (arena/sandbox/buildlog.py)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.sandbox import check_languages, languages
from arena.sandbox.buildlog import excerpt, summary
from arena.sandbox.bundle import Bundle
from arena.sandbox.docker import docker_command
from arena.sandbox.launcher import Limits


def _run(launcher, folder: Path, language: str, argv: list[str]) -> tuple[int | None, str]:
    folder.chmod(0o755)
    bundle = Bundle(path=folder, name="t", language=language, run=tuple(argv))
    proc = launcher.start(bundle, argv, {}, Limits(), socket_path=None, label="lang-test")
    deadline = time.monotonic() + 60
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    status = proc.exit_status()
    proc.kill()
    return status, proc.output()


def test_the_jvm_runs_in_the_sandbox_only_with_its_real_folder_and_etc_configuration(
    bwrap, tmp_path, monkeypatch
) -> None:
    if languages.missing_tools("java"):
        pytest.skip("no JDK here (Debian package openjdk-17-jdk-headless)")
    runtime = languages.runtime("java")
    assert any(str(p).startswith("/etc/java-") for p in runtime.ro_binds), runtime.ro_binds
    assert runtime.path.split(":")[0].startswith("/usr/lib/jvm/"), "the JDK's bin, not /etc/alternatives"
    status, out = _run(bwrap, tmp_path, "java", ["javac", "-version"])  # javac reads java.security
    assert status == 0 and out.startswith("javac 1"), out
    # Positive control: the same launch without the JDK's /etc folder fails as the issue found it.
    monkeypatch.setattr(languages, "_etc_links", lambda home: set())
    languages.runtime.cache_clear()
    try:
        status, out = _run(bwrap, tmp_path, "java", ["javac", "-version"])
    finally:
        monkeypatch.undo()
        languages.runtime.cache_clear()
    assert status != 0 and "java.security" in out, out


def test_build_limits_rise_only_for_the_languages_that_need_it() -> None:
    base = Limits()
    assert languages.build_limits("python", base) == base == languages.build_limits("cobol", base)
    java = languages.build_limits("java", base)
    assert java.pids == 256 and java.memory == 768 * 1024 * 1024 and java.tmp_size >= base.tmp_size
    generous = dataclasses.replace(base, memory=2 * 1024**3, build_seconds=900)
    assert languages.build_limits("go", generous).memory == 2 * 1024**3  # never lowered
    assert languages.build_limits("go", generous).build_seconds == 900


def test_the_docker_command_takes_the_languages_image_and_environment(tmp_path) -> None:
    bundle = Bundle(path=tmp_path, name="g", language="go", run=("./bot",))
    cmd = docker_command(
        "docker", bundle, ["./bot"], {"ARENA_TOKEN": "secret"}, Limits(), 20001, "n", "o", None
    )
    assert "GOCACHE=/tmp/go-cache" in cmd and "GOPROXY=off" in cmd
    assert "elfern-arena/bot-go:latest" in cmd and "secret" not in " ".join(cmd)
    assert "elfern-arena/bot-java:latest" in docker_command(
        "docker", dataclasses.replace(bundle, language="Java"), ["java"], {}, Limits(), 20001, "n", "o", None
    )


def test_sandbox_check_lists_each_language_with_its_version_or_why_not(bwrap, monkeypatch) -> None:
    absent = languages.Language("cobol", ("cobc-not-installed",), "gnucobol4", ("cobc", "-V"), "none")
    monkeypatch.setattr(check_languages, "LANGUAGES", (*languages.LANGUAGES, absent))
    data = json.loads(CliRunner().invoke(cli, ["sandbox", "check", "--json", "--allow-weak-limits"]).stdout)
    rows = {r["language"]: r for r in data["languages"]}
    assert list(rows) == [lang.name for lang in languages.LANGUAGES] + ["cobol"]
    assert rows["python"]["ok"] and rows["python"]["version"].startswith("Python 3.")
    assert (
        not rows["cobol"]["ok"]
        and "not installed: cobc-not-installed (Debian: gnucobol4" in rows["cobol"]["detail"]
    )
    for name in ("java", "go", "ruby", "rust", "csharp", "typescript"):
        if not languages.missing_tools(name):  # installed here: its version ran in the sandbox
            assert rows[name]["ok"] and rows[name]["version"], rows[name]


def test_a_build_log_is_shown_from_its_first_error_line() -> None:
    log = "compiling\nmain.go:3:2: undefined: x\n" + "".join(
        f"main.go:{i}:2: undefined: y{i}\n" for i in range(40)
    )
    log += "[arena] build exited with status 1\n"
    found, lines = excerpt(log, 5)
    assert found and lines[0] == "main.go:3:2: undefined: x" and len(lines) == 6
    assert lines[-1] == "[arena] build exited with status 1"
    quiet = "".join(f"step {i}\n" for i in range(30))
    assert excerpt(quiet, 3) == (False, ["step 27", "step 28", "step 29"])
    assert summary(quiet, "there", 3).startswith("the end of its build log (30 lines; the whole log: there):")


def test_mcs_compiles_in_the_sandbox_only_with_etc_mono(bwrap, tmp_path, monkeypatch) -> None:
    if languages.missing_tools("csharp"):
        pytest.skip("no Mono here (Debian packages mono-runtime, mono-mcs)")
    (tmp_path / "A.cs").write_text("public static class A { public static void Main() {} }\n")
    (tmp_path / "A.cs").chmod(0o644)
    assert Path("/etc/mono") in languages.runtime("csharp").ro_binds
    status, out = _run(bwrap, tmp_path, "csharp", ["mcs", "-out:/tmp/a.exe", "A.cs"])
    assert status == 0, out
    # Positive control: without Mono's /etc folder the same compile fails (it cannot find the source).
    entry = languages.language("csharp")
    assert entry is not None
    monkeypatch.setitem(languages._BY_NAME, "csharp", dataclasses.replace(entry, etc=()))
    languages.runtime.cache_clear()
    try:
        status, out = _run(bwrap, tmp_path, "csharp", ["mcs", "-out:/tmp/a.exe", "A.cs"])
    finally:
        monkeypatch.undo()
        languages.runtime.cache_clear()
    assert status != 0 and "error CS" in out, out
