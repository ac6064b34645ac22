# One command runs what CI runs. Needs GNU make and Python >= 3.11; everything else is installed
# into .venv by `bootstrap`, which every target below depends on.
#
#   make dev [ARGS="--port 9000 --executor my_pkg.agent:MyAgent"]   the local stack
#   make test                                                       ruff + mypy + docker + pytest + template (CI)

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV ?= .venv
BIN := $(VENV)/bin
ARGS ?=
PYTEST_ARGS ?=
# The suite runs in this many processes (pytest-xdist), a test file's tests in one of them (its
# module-scoped stacks start once). One more than the machine's 2 cores: much of the suite waits
# (stacks starting, streams held open, agents that sleep), and a third process fills those waits
# (the suite took 14 min 53 s with 2 and 11 min 48 s with 3 on 2 cores). PYTEST_WORKERS=0 runs it
# in this process (for pdb, -s).
PYTEST_WORKERS ?= 3

# The template checks use the AWS SAM CLI, in a virtualenv of its own (its pins clash with moto's).
SAM_CLI_VERSION ?= 1.170.0
SAM_VENV ?= .venv-sam
SAM := $(SAM_VENV)/bin/sam
SAM_STAMP := $(SAM_VENV)/.installed-$(SAM_CLI_VERSION)
# The interop tests (tests/e2e/test_interop_matrix.py) drive the local stack with the a2a-sdk 0.3.x
# client too, and tests/e2e/test_interop_chain.py serves an a2a-sdk 0.3.x agent (Starlette, uvicorn);
# it cannot share .venv with the 1.x SDK, so it gets a virtualenv of its own.
A2A03_SDK_VERSION ?= 0.3.26
A2A03_VENV ?= .venv-a2a03
A2A03_STAMP := $(A2A03_VENV)/.installed-$(A2A03_SDK_VERSION)-server
A2A03_PACKAGES := 'a2a-sdk==$(A2A03_SDK_VERSION)' 'httpx==0.28.1' 'httpx-sse==0.4.3' \
	'starlette==1.10.0' 'sse-starlette==3.7.0' 'uvicorn==0.54.0'
# ... and with the JavaScript client @a2a-js/sdk, pinned (with its dependencies) by the committed
# package-lock.json and installed with `npm ci` into tests/e2e/interop/js/node_modules (git-ignored).
# The stamp's name carries the lock file's checksum: editing the pins reinstalls.
A2A_JS_DIR := tests/e2e/interop/js
A2A_JS_STAMP := $(A2A_JS_DIR)/node_modules/.installed-$(firstword $(shell cksum < $(A2A_JS_DIR)/package-lock.json))
# The console's browser test (tests/browser) drives Debian's chromium through its chromedriver,
# installed with apt-get when missing (as root, or with sudo).
BROWSER_STAMP := $(VENV)/.browser-chromium
BROWSER_NEEDS := make: the console's browser test needs /usr/bin/chromium and /usr/bin/chromedriver: install \
	Chromium and its ChromeDriver yourself (docs/local-stack.md, Local console)
# `sam build` builds the Python 3.13 layer without a container: it needs a python3.13 interpreter
# (pyenv's own install, not its shim, which would resolve to the selected version); the build
# goes to .aws-sam/build.
PY313 ?= $(shell ls -d $$HOME/.pyenv/versions/3.13*/bin/python3.13 2>/dev/null | tail -1 \
	|| true)$(if $(wildcard $(HOME)/.pyenv/versions/3.13*),,$(shell command -v python3.13 2>/dev/null | grep -v /shims/))

# More steps of `make test`, each defined (and appended to TEST_STEPS) by a file of its own in mk/;
# TEST_FINAL_STEPS run after all of them, whether they passed or not (e.g. stopping what they started).
TEST_STEPS :=
TEST_FINAL_STEPS :=

# The stamp's name carries pyproject.toml's checksum: editing the dependencies reinstalls, and
# nothing else does.
STAMP := $(VENV)/.installed-$(firstword $(shell cksum < pyproject.toml))
DEV_STAMP := $(VENV)/.installed-dev-$(firstword $(shell cksum < pyproject.toml))

.PHONY: help bootstrap a2a03 a2a-js browser dev test lint typecheck pytest template clean distclean

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

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

dev: $(DEV_STAMP) ## run the local stack (moto + uvicorn + worker pollers); flags via ARGS="..."
	$(BIN)/a2a-serverless dev $(ARGS)

# `make dev` installs only what the local stack needs (the [dev] extra); `make test` installs it all.
$(DEV_STAMP):
	@if [ -z "$(PYTHON)" ]; then echo "make: no python3.11 or python3 on PATH" >&2; exit 1; fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@if [ -f $(STAMP) ]; then touch $@; else \
		echo "==> installing a2a-serverless[dev] into $(VENV)"; \
		$(BIN)/python -m pip install --quiet --disable-pip-version-check --editable '.[dev]' && touch $@; fi

# `docker` comes before `pytest`: the suite's Lambda runtime tests (tests/lambda_runtime) need the
# engine and the image, and fail without them in CI (CI=true); elsewhere they are skipped.
test: bootstrap ## what CI runs: lint, type check, the Lambda image, the whole suite, the template checks, the install profiles (all run; any failure fails)
	@status=0; SECONDS=0; \
	$(MAKE) --no-print-directory --keep-going lint typecheck docker pytest template $(TEST_STEPS) || status=$$?; \
	$(if $(strip $(TEST_FINAL_STEPS)),$(MAKE) --no-print-directory $(TEST_FINAL_STEPS) || status=$$?;) \
	echo "==> make test: $$([ $$status = 0 ] && echo passed || echo FAILED) in $$((SECONDS / 60)) min $$((SECONDS % 60)) s"; \
	exit $$status

lint: bootstrap ## ruff: the rules and the formatting
	@echo "==> ruff check"
	@$(BIN)/ruff check --output-format=concise .
	@echo "==> ruff format --check"
	@$(BIN)/ruff format --check .

typecheck: bootstrap ## mypy, configured in pyproject.toml
	@echo "==> mypy"
	@$(BIN)/mypy

a2a03: $(A2A03_STAMP) ## create .venv-a2a03 with the a2a-sdk 0.3.x client the interop tests drive

$(A2A03_STAMP):
	@test -x $(A2A03_VENV)/bin/python || $(PYTHON) -m venv $(A2A03_VENV)
	@echo "==> installing a2a-sdk $(A2A03_SDK_VERSION) into $(A2A03_VENV)"
	@$(A2A03_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(A2A03_PACKAGES)
	@rm -f $(A2A03_VENV)/.installed-*
	@touch $@

a2a-js: $(A2A_JS_STAMP) ## npm ci the JS client @a2a-js/sdk (pinned by its package-lock.json) the interop tests drive

$(A2A_JS_STAMP): $(A2A_JS_DIR)/package.json $(A2A_JS_DIR)/package-lock.json
	@command -v npm > /dev/null || { echo "make: npm is missing: the interop tests need node >= 20 and npm" >&2; exit 1; }
	@echo "==> npm ci @a2a-js/sdk into $(A2A_JS_DIR)/node_modules"
	@cd $(A2A_JS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

browser: $(BROWSER_STAMP) ## install Debian's chromium and chromium-driver (apt-get) for the console's browser test

$(BROWSER_STAMP): | $(STAMP)
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		infra/apt-install.sh "$(BROWSER_NEEDS)" chromium chromium-driver; fi
	@touch $@

pytest: bootstrap $(A2A03_STAMP) $(A2A_JS_STAMP) $(BROWSER_STAMP) ## the test suite; extra options via PYTEST_ARGS="..."
	@echo "==> pytest"
	@$(BIN)/pytest -q $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

$(SAM_STAMP):
	@test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	@echo "==> installing aws-sam-cli $(SAM_CLI_VERSION) into $(SAM_VENV)"
	@$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'aws-sam-cli==$(SAM_CLI_VERSION)'
	@rm -f $(SAM_VENV)/.installed-*
	@touch $@

# The checkout's build is for this machine's architecture, so that its handlers can be imported here
# (tests/template/test_built_layer.py); the agent project's is for the template's default, arm64.
# Not from SAM's cache: the layer's dependencies come from pyproject.toml, which its cache key omits.
TEMPLATE_ARCH ?= $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64)

template: bootstrap $(SAM_STAMP) ## sam validate --lint, then sam build (no container) and a check of the built tree
	@echo "==> sam validate --lint"
	@SAM_CLI_TELEMETRY=0 $(SAM) validate --lint --region us-east-1
	@if [ -z "$(PY313)" ]; then echo "make: no python3.13 for sam build (set PY313=...)" >&2; exit 1; fi
	@echo "==> sam build (python3.13 $(TEMPLATE_ARCH), no container), the check of the built tree, its imports"
	@PATH="$(dir $(PY313)):$$PATH" SAM_CLI_TELEMETRY=0 $(SAM) build --region us-east-1 --build-dir .aws-sam/build \
		--no-cached --parameter-overrides Architecture=$(TEMPLATE_ARCH) \
		> .aws-sam-build.log 2>&1 || { cat .aws-sam-build.log; exit 1; }
	@$(BIN)/python -m a2a_serverless_dev.build_check .aws-sam/build --python $(PY313) \
		--json .aws-sam/package-sizes.json
	@A2A_BUILD_DIR=.aws-sam/build $(BIN)/pytest -q -p no:cacheprovider tests/template/test_built_layer.py
	@echo "==> an agent project from a2a-serverless init: sam validate --lint, sam build (arm64), its test"
	@rm -rf .aws-sam/init-check && $(BIN)/a2a-serverless init .aws-sam/init-check/agent > /dev/null
	@cd .aws-sam/init-check/agent && SAM_CLI_TELEMETRY=0 $(CURDIR)/$(SAM) validate --lint --region us-east-1
	@cd .aws-sam/init-check/agent && PATH="$(dir $(PY313)):$$PATH" SAM_CLI_TELEMETRY=0 $(CURDIR)/$(SAM) build \
		--region us-east-1 > ../build.log 2>&1 || { cat ../build.log; exit 1; }
	@cd .aws-sam/init-check/agent && $(CURDIR)/$(BIN)/python -m a2a_serverless_dev.build_check .aws-sam/build \
		--python $(PY313) --requirements kit/requirements.txt > /dev/null
	@cd .aws-sam/init-check/agent && $(CURDIR)/$(BIN)/python -m pytest -q -p no:cacheprovider -p no:asyncio

clean: ## remove caches and build output (keeps .venv)
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage htmlcov build dist .aws-sam .aws-sam-build.log
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +

distclean: clean ## clean, and remove .venv, .venv-sam, .venv-a2a03 and the JS client's node_modules too
	rm -rf $(VENV) $(SAM_VENV) $(A2A03_VENV) $(A2A_JS_DIR)/node_modules
	rm -f $(BROWSER_STAMP)

# The further checks of `make test` (install profiles, the deployed template's scans, ...).
include $(sort $(wildcard mk/*.mk))
