# The two commands of the quick start are `make demo` and `make test`; each sets up
# everything it needs first. `.ci/run` runs `make lint typecheck test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.ctxrelay-installed
# The Codex CLI the Codex host's tests drive, pinned in scripts/codex/package.json.
CODEX_STAMP := $(VENV)/codex/.installed
# The Gemini CLI the Gemini host's tests drive, pinned in scripts/gemini/package.json.
GEMINI_STAMP := $(VENV)/gemini/.installed
# The OpenCode CLI its tests drive, pinned in scripts/opencode/package.json (and rg).
OPENCODE_STAMP := $(VENV)/opencode/.installed

.PHONY: setup demo test lint typecheck format check bench services clean

$(STAMP): pyproject.toml
	@bash scripts/ensure-python.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q src >/dev/null
	touch $(STAMP)

# ensure-codex.sh writes the stamp only once the pinned CLI runs; without npm it says so
# and the Codex tests skip.
$(CODEX_STAMP): scripts/codex/package.json
	@bash scripts/ensure-codex.sh $(VENV)/codex

# ensure-gemini.sh does the same for the pinned Gemini CLI.
$(GEMINI_STAMP): scripts/gemini/package.json
	@bash scripts/ensure-gemini.sh $(VENV)/gemini

# ensure-opencode.sh likewise; it also installs ripgrep where the system lacks it.
$(OPENCODE_STAMP): scripts/opencode/package.json
	@bash scripts/ensure-opencode.sh $(VENV)/opencode

setup: $(STAMP) $(CODEX_STAMP) $(GEMINI_STAMP) $(OPENCODE_STAMP)

demo: setup
	$(BIN)/ctxrelay demo

# Installs the services the tests use (PostgreSQL) where this user may, then the suite.
services:
	@bash scripts/ensure-services.sh

# Byte-compile first, as installing a wheel does: the hooks Claude Code starts on every
# tool call must not recompile ctxrelay from source each time (PYTHONDONTWRITEBYTECODE).
test: setup services
	$(BIN)/python -m compileall -q src >/dev/null
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

format: setup
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: setup
	$(BIN)/mypy

check: lint typecheck test

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
