# Elfern Arena. `make demo` and `make test` are all a newcomer needs.
VENV   := .venv
STAMP  := $(VENV)/.setup-done
ARENA  := $(VENV)/bin/arena
PYTEST := $(VENV)/bin/python -m pytest

.PHONY: setup demo test test-fast test-cgroup2 lint protos bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock scripts/setup.sh arena/analysis/_core.c arena/analysis/_playout.c arena/analysis/_ismcts.c arena/sandbox/_launch.c arena/ladder/_fit.c
	@bash scripts/setup.sh
	@touch $(STAMP)

demo: setup
	@$(ARENA) demo

test: setup
	@bash scripts/services.sh
	@bash scripts/test.sh

test-fast: setup
	$(PYTEST) -m "not slow and not browser and not hostile and not fuzz and not cgroup2_vm and not docker and not callgrind and not hosts and not postgres and not redis"

# The sandbox on a pure cgroup v2 kernel, in a VM (`make test` runs it too, as a lane beside the
# suite: tests/sandbox/test_cgroup2_vm.py, scripts/test.sh).
test-cgroup2: setup
	@bash scripts/test-cgroup2.sh

# ruff check, ruff format --check and mypy arena (scripts/lint.sh); `make test` runs it first
lint: setup
	@bash scripts/lint.sh

protos: setup
	$(VENV)/bin/python scripts/gen_protos.py
	@# the Node, TypeScript and C++ sample bundles carry a copy: a sandboxed bot sees only its own folder
	cp protos/elfern/arena/v1/referee.proto sample_bots/node/proto/referee.proto
	cp protos/elfern/arena/v1/referee.proto sample_bots/typescript/proto/referee.proto
	cp protos/elfern/arena/v1/referee.proto sample_bots/cpp/proto/referee.proto

bench: setup
	$(ARENA) bench engine

clean:
	rm -rf $(VENV) build *.egg-info
