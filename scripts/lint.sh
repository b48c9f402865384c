#!/usr/bin/env bash
# `make lint`, and the first step of `make test`: ruff's checks and format, then mypy over arena/
# ([tool.mypy] in pyproject.toml: strict for the engine, analysis and SDK). Every step runs; the
# script fails when any of them does, naming each failed step on one line.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
failed=()
"$BIN/ruff" check . || failed+=("ruff check .")
"$BIN/ruff" format --check . || failed+=("ruff format --check . (run: .venv/bin/ruff format .)")
"$BIN/mypy" arena || failed+=("mypy arena")
if [ "${#failed[@]}" -ne 0 ]; then
  for step in "${failed[@]}"; do echo "lint: FAILED: $step" >&2; done
  exit 1
fi
echo "lint: ruff and mypy clean"
