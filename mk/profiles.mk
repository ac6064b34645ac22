# The install profiles users run, each in a virtualenv made only as the docs make it (issue 39):
# `make dev`'s [dev] extra with the README's commands against its own stack, an `init` project and
# `init --framework X` for each framework with what the project declares, and the base install (the
# Lambda layer's) answering a recorded event per function. infra/profiles/run.py drives them; their
# virtualenvs live in .venv-profiles/, reused while what they were installed from is unchanged.

# Two at a time: most of a profile is `pip install`, which keeps one core busy.
PROFILE_JOBS ?= 2
PROFILES_RUN = $(BIN)/python infra/profiles/run.py --python "$(PYTHON)" --python313 "$(PY313)" --jobs $(PROFILE_JOBS)

TEST_STEPS += profiles

.PHONY: profiles profile-dev profile-init profile-frameworks profile-base

profiles: bootstrap ## the install profiles users run, each in a venv of its own (.venv-profiles/): dev, init, frameworks, base
	@echo "==> install profiles (.venv-profiles/)"
	@$(PROFILES_RUN) dev init frameworks base

profile-dev: bootstrap ## make dev's [dev]-only venv: the README's commands against a stack started from it
	@$(PROFILES_RUN) dev

profile-init: bootstrap ## an init project in its own venv (pip install --find-links kit -e .): its test, one message through its stack
	@$(PROFILES_RUN) init

profile-frameworks: bootstrap ## init --framework X for each of the five frameworks, in its own venv: its test
	@$(PROFILES_RUN) frameworks

profile-base: bootstrap ## the layer's install (pip install ., Python 3.13): every handler answers one recorded event (moto)
	@if [ -z "$(PY313)" ]; then echo "make: no python3.13 for the base profile (set PY313=...)" >&2; exit 1; fi
	@$(PROFILES_RUN) base

# `make distclean` removes the profiles' virtualenvs too.
.PHONY: distclean-profiles
distclean: distclean-profiles

distclean-profiles:
	rm -rf .venv-profiles
