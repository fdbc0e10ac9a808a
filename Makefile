# The two commands of the quick start are `make demo` and `make test`; each sets up
# everything it needs first. `.ci/run` runs `make lint typecheck test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.ctxrelay-installed

.PHONY: setup demo test lint typecheck format check bench services clean

$(STAMP): pyproject.toml hatch_build.py src/ctxrelay/transcripts/_native.c
	@bash scripts/ensure-python.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q src >/dev/null
	@$(BIN)/python -c "from ctxrelay.transcripts._pass import has_c_pass as c; import sys; c() or \
	  sys.stderr.write('WARNING: ctxrelay was installed without its C reader (no C compiler?):' \
	  ' ctxrelay analyze reads in pure Python, 1.5 to 2 times as slow. Install gcc or clang and' \
	  ' run make setup again.\\n')"
	touch $(STAMP)

setup: $(STAMP)

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
	$(BIN)/ruff check src tests bench hatch_build.py
	$(BIN)/ruff format --check src tests bench hatch_build.py

format: setup
	$(BIN)/ruff format src tests bench hatch_build.py
	$(BIN)/ruff check --fix src tests bench hatch_build.py

typecheck: setup
	$(BIN)/mypy

check: lint typecheck test

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache src/ctxrelay/transcripts/_native.*.so
