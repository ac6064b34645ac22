# The layers' build for `sam build` (template.yaml's CoreLayer and TracingLayer, BuildMethod
# makefile): SAM runs `make build-CoreLayer` (and `make build-TracingLayer`) with ARTIFACTS_DIR set. It runs it through the Makefile of the layer's
# architecture (<architecture>/Makefile, chosen by the layer's Metadata ContextPath), which sets
# ARCHITECTURE and includes this file: SAM tells a Makefile nothing of the architecture.
# build.py says what the build does.

LAYER_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# What the layer installs: an agent project's kit/requirements.txt (the kit, as a pip requirement),
# or else the kit's own checkout, two levels up (its pyproject.toml), with the extras LAYER_EXTRAS
# names, if any (SAM passes its environment on: `LAYER_EXTRAS=a2a-sdk sam build`).
KIT := $(if $(wildcard $(LAYER_DIR)/../requirements.txt),-r $(LAYER_DIR)/../requirements.txt,\
	--checkout $(abspath $(LAYER_DIR)/../..) $(if $(LAYER_EXTRAS),--extras $(LAYER_EXTRAS)))

# Python 3.13, the functions' runtime: python3.13 on PATH if it is one, else pyenv's own install (a
# pyenv shim of that name runs whichever version pyenv selected). PYTHON313=... overrides both.
ifndef PYTHON313
PYTHON313 := $(firstword $(foreach python,$(shell command -v python3.13) $(sort $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13)),\
	$(if $(filter True,$(shell $(python) -c 'import sys; print(sys.version_info[:2] == (3, 13))' 2>/dev/null)),$(python))))
endif

.PHONY: build-CoreLayer build-TracingLayer python313
build-CoreLayer: python313
	$(PYTHON313) $(LAYER_DIR)/build.py --architecture $(ARCHITECTURE) --target "$(ARTIFACTS_DIR)/python" $(KIT)

# The tracing extra's packages, only what they add to the core layer (the template attaches this
# layer only when its Tracing parameter is on).
build-TracingLayer: python313
	$(PYTHON313) $(LAYER_DIR)/build.py --architecture $(ARCHITECTURE) --target "$(ARTIFACTS_DIR)/python" $(KIT) \
		--adds tracing

python313:
	@if [ -z "$(PYTHON313)" ]; then \
		echo "layer build: no Python 3.13 (the functions' runtime): put python3.13 on PATH or set PYTHON313=..." >&2; \
		exit 1; fi
