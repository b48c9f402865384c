"""Without the `rl` extra (a Python that refuses its packages, as if they were not installed), the
commands that need it print one line naming the extra and its pip command, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RL = ["gymnasium", "pettingzoo", "pyspiel", "open_spiel", "pyarrow"]
ABSENT = f"""
import sys

class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {RL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _Absent())
"""


@pytest.mark.parametrize(
    "args", [["bench", "env", "--seconds", "1"], ["export", "dataset", "s1", "--format", "parquet"]]
)
def test_a_command_of_the_rl_extra_names_it(tmp_path: Path, args: list[str]) -> None:
    prelude = tmp_path / "absent"
    prelude.mkdir()
    (prelude / "sitecustomize.py").write_text(ABSENT)
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "ARENA_HOME": str(tmp_path / "home"), "PYTHONPATH": f"{prelude}:{REPO}"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "[rl] extra" in proc.stderr and "pip install 'elfern-arena[rl]'" in proc.stderr
    assert "Traceback" not in proc.stderr
