# A security scan of what is deployed (issue 39): checkov over SAM's translation of template.yaml
# (what CloudFormation creates), in the modes that between them deploy every resource
# (tests/template/modes.py, SCANNED). Any failed check fails it: a check the template does not pass
# is fixed, or waived on its resource in template.yaml with a one-line reason (Metadata: checkov:
# skip:, docs/operations.md, "Security scan"). checkov's pins clash with .venv's, so it gets a
# virtualenv of its own, .venv-checkov, made once per CHECKOV_VERSION.

CHECKOV_VERSION ?= 3.3.30
CHECKOV_VENV ?= .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION)
CHECKOV_DIR := .aws-sam/checkov

TEST_STEPS += checkov

.PHONY: checkov distclean-checkov

$(CHECKOV_STAMP):
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	@echo "==> installing checkov $(CHECKOV_VERSION) into $(CHECKOV_VENV)"
	@$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'checkov==$(CHECKOV_VERSION)'
	@rm -f $(CHECKOV_VENV)/.installed-*
	@touch $@

checkov: bootstrap $(CHECKOV_STAMP) ## checkov over the SAM-translated template (.aws-sam/checkov/); fails on any failed check
	@echo "==> checkov $(CHECKOV_VERSION) over the translated template"
	@PYTHONPATH=tests $(BIN)/python tests/template/modes.py $(CHECKOV_DIR)
	@$(CHECKOV_VENV)/bin/checkov --directory $(CHECKOV_DIR) --framework cloudformation --compact --quiet \
		--skip-download --output cli
	@echo "checkov: no failed check (waivers: Metadata checkov skip in template.yaml)"

# `make distclean` removes the scan's virtualenv too.
distclean: distclean-checkov

distclean-checkov:
	rm -rf $(CHECKOV_VENV)
