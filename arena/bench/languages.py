"""`arena bench startup --languages`: each language's start-up until the referee has its `Join`, its
runtime's bare hello-world as the baseline, and each compiled sample's cold build.

Per language, its sample bot (sample_bots/), in one run:

- build: the sample's `build` in the sandbox from a fresh bundle cache (cold), wall time;
- join: real one-deal sandboxed matches of the sample against itself (`arena.bench.startup._one`): the wall
  time from the match's launch until the referee has both Joins (so the later of two launches of the
  same bot, on a machine of two cores), and each seat's CPU until then from its own cgroup; each seat's
  CPU over the whole match, and this process's (the referee's) CPU over it. Under bwrap a stdio bot's
  lines are the referee's own (arena/referee/stdio_seat.py), and its seat joins as it is launched;
  its baseline, in the same rounds, is the same bundle behind the Python stdio bridge started by its
  own run line (`bridged`), as every stdio bot ran before;
- bare: a hello-world in that language run on the host, outside any sandbox (compiled there first
  with the same toolchain), the floor of the runtime's own start.

Hello-worlds and matches are interleaved round by round, so that drifting load hits both alike.
The sandbox is bwrap, or with `sandbox="docker"` the Docker launcher on DOCKER_HOST's engine, whose
language images must be built (scripts/docker_engine.py up --languages).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
#: language -> its sample bundle (one per language).
SAMPLES = {
    "python": "python/random",
    "node": "node",
    "typescript": "typescript",
    "cpp": "cpp",
    "c": "stdio/c",
    "shell": "stdio/shell",
    "go": "stdio/go",
    "rust": "stdio/rust",
    "csharp": "stdio/csharp",
    "java": "stdio/java",
    "ruby": "stdio/ruby",
}
#: language -> (file name, source, compile command or None, run command); {src} {out} {dir} filled in.
HELLO: dict[str, tuple[str, str, list[str] | None, list[str]]] = {
    "python": ("hello.py", 'print("hello")\n', None, ["python3", "{src}"]),
    "node": ("hello.js", 'console.log("hello");\n', None, ["node", "{src}"]),
    "typescript": ("hello.js", 'console.log("hello");\n', None, ["node", "{src}"]),  # tsc's output is JS
    "cpp": (
        "hello.cpp",
        '#include <iostream>\nint main() { std::cout << "hello\\n"; }\n',
        ["g++", "-O2", "-o", "{out}", "{src}"],
        ["{out}"],
    ),
    "c": (
        "hello.c",
        '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n',
        ["gcc", "-O2", "-o", "{out}", "{src}"],
        ["{out}"],
    ),
    "shell": ("hello.sh", "echo hello\n", None, ["/bin/sh", "{src}"]),
    "go": (
        "hello.go",
        'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n',
        ["go", "build", "-o", "{out}", "{src}"],
        ["{out}"],
    ),
    "rust": (
        "hello.rs",
        'fn main() { println!("hello"); }\n',
        ["rustc", "-O", "-C", "linker=gcc", "-o", "{out}", "{src}"],
        ["{out}"],
    ),
    "csharp": (
        "Hello.cs",
        'class Hello { static void Main() { System.Console.WriteLine("hello"); } }\n',
        ["mcs", "-out:{out}.exe", "{src}"],
        ["mono", "{out}.exe"],
    ),
    "java": (
        "Hello.java",
        'class Hello { public static void main(String[] a) { System.out.println("hello"); } }\n',
        ["javac", "-d", "{dir}", "{src}"],
        ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", "{dir}", "Hello"],
    ),
    "ruby": ("hello.rb", 'puts "hello"\n', None, ["ruby", "{src}"]),
}


def _fill(argv: list[str], **values: str) -> list[str]:
    return [a.format(**values) for a in argv]


def _hello(language: str, work: Path, env: dict[str, str]) -> list[str]:
    """The hello-world's run command, compiled first where the language compiles."""
    name, source, compile_cmd, run_cmd = HELLO[language]
    folder = work / f"hello-{language}"
    folder.mkdir()
    src = folder / name
    src.write_text(source)
    values = {"src": str(src), "out": str(folder / "hello"), "dir": str(folder)}
    if compile_cmd is not None:
        done = subprocess.run(
            _fill(compile_cmd, **values), env=env, cwd=folder, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{language}: the hello-world did not compile: {done.stderr.strip()[-300:]}")
    return _fill(run_cmd, **values)


def _environment(language: str, work: Path) -> dict[str, str]:
    """The sandbox's PATH and the language's settings (GOCACHE...), with its caches moved into `work`."""
    from arena.sandbox.languages import runtime

    rt = runtime(language)
    env = {"PATH": rt.path, "HOME": str(work), "TMPDIR": str(work), **dict(rt.env)}
    for key in ("GOCACHE", "GOPATH", "CARGO_HOME"):
        if key in env:
            env[key] = str(work / key.lower())
    return env


def missing(language: str) -> str | None:
    """Why this language cannot be measured here (its tools, or a sample's npm cache), or None."""
    from arena.sandbox.languages import missing_tools

    tools = missing_tools(language)
    extra = {"cpp": ["protoc", "grpc_cpp_plugin", "pkg-config"]}.get(language, [])
    tools += [t for t in extra if shutil.which(t) is None]
    if tools:
        return f"missing {', '.join(tools)}"
    if (
        language in ("node", "typescript")
        and not (REPO / "sample_bots" / SAMPLES[language] / ".npm-cache").is_dir()
    ):
        return f"sample_bots/{SAMPLES[language]}/.npm-cache is empty (make setup fills it)"
    return None


def _launcher(sandbox: str) -> Any:
    """The launcher the matches run under: bwrap, or docker (DOCKER_HOST's engine, with the images)."""
    if sandbox == "docker":
        from arena.sandbox.docker import DockerLauncher

        return DockerLauncher()
    from arena.sandbox.bwrap import BwrapLauncher

    return BwrapLauncher()


def _missing_image(launcher: Any, language: str) -> str | None:
    """For the Docker launcher: why the language's image cannot be used (not built), or None."""
    from arena.sandbox.docker import IMAGES

    if getattr(launcher, "name", "") != "docker":
        return None
    image = IMAGES[language]
    found = subprocess.run([*launcher.docker, "image", "inspect", image], capture_output=True)
    return (
        None if found.returncode == 0 else f"{image} is not built (scripts/docker_engine.py up --languages)"
    )


def run(
    rounds: int = 5,
    languages: tuple[str, ...] = tuple(SAMPLES),
    progress: Callable[[float], None] = lambda f: None,
    sandbox: str = "bwrap",
) -> dict[str, Any]:
    """Per language: medians over `rounds` of the bare hello-world and of the mirror match's joins,
    the matches and builds under `sandbox` (bwrap or docker)."""
    from arena.bench.sandbox import HandleKeeper
    from arena.bench.startup import _one
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.launcher import Limits

    result: dict[str, Any] = {"rounds": rounds, "launcher": sandbox, "languages": {}, "skipped": {}}
    with tempfile.TemporaryDirectory(prefix="arena-bench-lang-") as tmp:
        work = Path(tmp)
        saved = os.environ.get("ARENA_BUNDLE_CACHE")
        os.environ["ARENA_BUNDLE_CACHE"] = str(work / "bundle-cache")  # cold builds, the sources untouched
        try:
            launcher = HandleKeeper(_launcher(sandbox))
            ready: dict[str, tuple[Any, list[str], dict[str, str]]] = {}
            for language in languages:
                why = missing(language) or _missing_image(launcher.inner, language)
                if why is not None:
                    result["skipped"][language] = why
                    continue
                copy = work / "samples" / language
                shutil.copytree(REPO / "sample_bots" / SAMPLES[language], copy, ignore=_build_outputs())
                bundle = load_bundle(copy)
                row: dict[str, Any] = {"sample": f"sample_bots/{SAMPLES[language]}", "build_s": None}
                if bundle.build:
                    start = time.perf_counter()
                    ok, log = launcher.build(bundle, Limits())
                    if not ok:
                        result["skipped"][language] = f"its build failed: {log.strip()[-300:]}"
                        continue
                    row["build_s"] = round(time.perf_counter() - start, 2)
                env = _environment(language, work)
                ready[language] = (bundle, _hello(language, work, env), env)
                result["languages"][language] = row
            bare: dict[str, list[float]] = {n: [] for n in ready}
            joins: dict[str, list[dict[str, float]]] = {n: [] for n in ready}
            bridged: dict[str, list[dict[str, float]]] = {
                n: [] for n, (b, _, _) in ready.items() if b.protocol == "stdio" and launcher.direct_stdio
            }
            for r in range(rounds):
                for i, (language, (bundle, hello, env)) in enumerate(ready.items()):
                    start = time.perf_counter()
                    subprocess.run(
                        hello, env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, check=True
                    )
                    bare[language].append(time.perf_counter() - start)
                    joins[language].append(_one(launcher, bundle, f"lang{r}-{language}", r))
                    if language in bridged:
                        bridged[language].append(
                            _one(launcher, behind_bridge(bundle), f"lang{r}-{language}-b", r)
                        )
                    progress((r * len(ready) + i + 1) / (rounds * max(1, len(ready))))
        finally:
            if saved is None:
                os.environ.pop("ARENA_BUNDLE_CACHE", None)
            else:
                os.environ["ARENA_BUNDLE_CACHE"] = saved
    for language, row in result["languages"].items():
        row["hello_bare_ms"] = round(1000 * statistics.median(bare[language]), 1)
        row.update(_medians(joins[language]))
        if bridged.get(language):
            row["bridged"] = _medians(bridged[language])
    result["loadavg"] = round(os.getloadavg()[0], 1)
    return result


def _medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(s[key] for s in samples), 1) for key in samples[0]}


def behind_bridge(bundle: Any) -> Any:
    """The same stdio bundle behind the SDK's Python bridge, started by its own run line (a gRPC
    bot to the launcher): how every stdio bot ran under bwrap before, the baseline."""
    from dataclasses import replace

    from arena.sandbox.bundle import STDIO_BRIDGE

    return replace(bundle, run=STDIO_BRIDGE + bundle.run, protocol="grpc")


def _build_outputs() -> Callable[[str, list[str]], set[str]]:
    """What a local build or install left in a sample (gitignored), left out as from a fresh checkout."""
    return shutil.ignore_patterns(
        "build", "node_modules", "bot", "bot.exe", "classes", "dist", "target", "__pycache__"
    )
