"""`arena new LANG DIR` as an author runs it: a starter for every language that then plays a clean
sandboxed match with no edits, and one-line refusals for a bad language, name or folder."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.new import STARTERS
from arena.sandbox.bundle import load_bundle
from arena.sandbox.languages import missing_tools


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_list_names_every_language_and_its_transport() -> None:
    rows = json.loads(invoke("new", "--list", "--json").output)
    assert (
        [r["language"] for r in rows]
        == list(STARTERS)
        == ["python", "node", "typescript", "cpp", "c", "shell", "ruby", "java", "go", "rust", "csharp"]
    )
    assert all(r["transport"] and r["doc"].startswith("docs/") for r in rows)
    text = invoke("new", "--list").output
    assert all(lang in text for lang in STARTERS)


@pytest.mark.slow
@pytest.mark.parametrize("language", list(STARTERS))
def test_a_new_starter_plays_a_clean_sandboxed_match(language, tmp_path, monkeypatch, repo_root) -> None:
    if missing := missing_tools(language):
        pytest.skip(
            f"{language} toolchain missing: {', '.join(missing)} (see DEB_PACKAGES in scripts/setup.sh)"
        )
    sample = repo_root / "sample_bots" / STARTERS[language].folder
    if (sample / "package.json").is_file() and not (sample / ".npm-cache").is_dir():
        pytest.skip(f"sample_bots/{STARTERS[language].folder}/.npm-cache is empty: run `make setup` (npm ci)")
    monkeypatch.chdir(tmp_path)
    made = invoke("new", language, "starter")
    assert made.exit_code == 0, made.output
    assert "next: arena play starter " in made.output
    manifest = tomllib.loads((tmp_path / "starter" / "bot.toml").read_text())
    assert manifest["name"] == "starter"
    readme = (tmp_path / "starter" / "README.md").read_text()
    assert "arena play . random" in readme and "arena replay show last" in readme
    assert "arena bots submit . --name starter" in readme and "checkout" not in readme
    assert not {"node_modules", "build", "classes", "dist", "target", "__pycache__"} & {
        p.name for p in (tmp_path / "starter").iterdir()
    }
    assert load_bundle(tmp_path / "starter").name == "starter"
    played = invoke("play", "starter", str(repo_root / "sample_bots" / "python" / "random"),
                    "--seed", "3", "--deals", "2", "--json", "--sandbox", "bwrap")  # fmt: skip
    assert played.exit_code == 0, played.output
    result = json.loads(played.output)
    assert result["verdicts"] == ["OK", "OK"], result


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ("new", "cobol", "x"),
            "language 'cobol': expected one of python, node, typescript, cpp, c, shell, ruby, java, go, rust, csharp",
        ),
        (("new", "python", "bad name!"), "bot name 'bad name!': use 1-64 letters"),
        (("new", "python"), "give LANG and DIR"),
    ],
)
def test_bad_input_is_one_line(args, says, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2 and says in result.output and "Traceback" not in result.output


def test_a_folder_in_use_is_refused_and_left_alone(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["new", "python", "mine"])
    assert result.exit_code == 2 and "mine: the folder is not empty; give a new folder" in result.output
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_the_readme_works_from_the_bots_own_folder(tmp_path, monkeypatch) -> None:
    """The README's commands run as written from the new bot's folder, far from the arena's checkout:
    `arena play . random` finds the house's random bot by name."""
    import shlex

    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert invoke("new", "python", "far/away/mybot").exit_code == 0
    monkeypatch.chdir(tmp_path / "far" / "away" / "mybot")
    readme = Path("README.md").read_text()
    plays = [
        line.split("#")[0].split() for line in readme.splitlines() if line.strip().startswith("arena play")
    ]
    assert plays and all(p[1:3] == ["play", "."] for p in plays)
    first = plays[0][1:] + ["--deals", "1", "--seed", "2", "--sandbox", "local", "--json"]
    played = invoke(*first)
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["players"] == ["mybot", "random"]
    shown = invoke(*shlex.split("replay show last"))
    assert shown.exit_code == 0 and "seat 1: random" in shown.output
    missing = invoke("play", ".", "randomm", "--sandbox", "local")
    assert missing.exit_code == 2 and "randomm" in missing.output
