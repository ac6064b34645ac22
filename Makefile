# One command runs what CI runs. Needs GNU make and Python >= 3.11; everything else is installed
# into .venv by `bootstrap`, which every target below depends on.
#
#   make dev [ARGS="--port 9000 --executor my_pkg.agent:MyAgent"]   the local stack
#   make test                                                       ruff + mypy + pytest (CI)

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV ?= .venv
BIN := $(VENV)/bin
ARGS ?=
PYTEST_ARGS ?=

# The stamp's name carries pyproject.toml's checksum: editing the dependencies reinstalls, and
# nothing else does.
STAMP := $(VENV)/.installed-$(firstword $(shell cksum < pyproject.toml))

.PHONY: help bootstrap dev test lint typecheck pytest clean distclean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

bootstrap: $(STAMP) ## create .venv and install the project with its test extras (once per pyproject.toml)

$(STAMP):
	@if [ -z "$(PYTHON)" ]; then echo "make: no python3.11 or python3 on PATH" >&2; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "make: $(PYTHON) is older than Python 3.11 (set PYTHON=...)" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "==> installing a2a-serverless[test] into $(VENV)"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --editable '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

dev: bootstrap ## run the local stack (moto + uvicorn + worker pollers); flags via ARGS="..."
	$(BIN)/a2a-serverless dev $(ARGS)

test: bootstrap ## what CI runs: lint, type check, the whole suite (all three run; any failure fails)
	@$(MAKE) --no-print-directory --keep-going lint typecheck pytest

lint: bootstrap ## ruff
	@echo "==> ruff check"
	@$(BIN)/ruff check --output-format=concise .

typecheck: bootstrap ## mypy, configured in pyproject.toml
	@echo "==> mypy"
	@$(BIN)/mypy

pytest: bootstrap ## the test suite; extra options via PYTEST_ARGS="..."
	@echo "==> pytest"
	@$(BIN)/pytest -q $(PYTEST_ARGS)

clean: ## remove caches and build output (keeps .venv)
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage htmlcov build dist .aws-sam
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +

distclean: clean ## clean, and remove .venv too
	rm -rf $(VENV)
