"""`arena sandbox check`, languages: which `language` values can run here, with their versions.

Each language of the runtime table (languages.py) whose tools are on the sandbox's PATH runs its
version command inside the real sandbox, with its runtime's binds and environment, as its bots
would. A version printed means the runtime starts in the sandbox (a JVM without its /etc
configuration would fail here); a missing tool names the Debian packages to install.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.sandbox.bundle import Bundle
from arena.sandbox.languages import LANGUAGES, missing
from arena.sandbox.launcher import Limits


@dataclass
class LanguageRow:
    language: str
    ok: bool  # its version command ran in the sandbox
    version: str  # the first line it printed, "" when it did not run
    detail: str  # why not, when not


def language_rows(launcher: Any, timeout: float = 30.0) -> list[LanguageRow]:
    """One row per language of the table, in the table's order; the version commands run at once."""
    rows: dict[str, LanguageRow] = {}
    started = []
    with tempfile.TemporaryDirectory(prefix="arena-check-lang-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)
        try:
            for lang in LANGUAGES:
                if absent := missing(lang):
                    why = f"not installed: {', '.join(absent)} (Debian: {lang.packages}; run `make setup`)"
                    rows[lang.name] = LanguageRow(lang.name, False, "", why)
                    continue
                bundle = Bundle(
                    path=folder, name=f"version-{lang.name}", language=lang.name, run=lang.version
                )
                proc = launcher.start(bundle, list(lang.version), {}, Limits(), socket_path=None,
                                      label=f"lang-{lang.name}")  # fmt: skip
                started.append((lang.name, proc))
            deadline = time.monotonic() + timeout
            while any(p.exit_status() is None for _, p in started) and time.monotonic() < deadline:
                time.sleep(0.02)
            for name, proc in started:
                status = proc.exit_status()
                lines = [line.strip() for line in proc.output().splitlines() if line.strip()]
                if status == 0 and lines:
                    rows[name] = LanguageRow(name, True, lines[0][:120], "")
                else:
                    said = " | ".join(lines[-3:])[:300]
                    how = "did not finish" if status is None else f"exited with status {status}"
                    rows[name] = LanguageRow(
                        name, False, "", f"its version command {how} in the sandbox: {said}"
                    )
        finally:
            for _, proc in started:
                proc.kill()
    return [rows[lang.name] for lang in LANGUAGES]
