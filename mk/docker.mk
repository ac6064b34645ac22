# The Docker tests (tests/lambda_runtime, tests/docs/test_lambda_runtime_doc.py) and
# bench/lambda_import_times.py run the functions in a Lambda-compatible Python 3.13 image built from
# package registries (infra/lambda-image, docs/lambda-runtime.md), tagged with the kit's own name,
# a2a-serverless/lambda-python:3.13-ARCH, which sam local runs with --invoke-image. `make docker`
# starts dockerd when no engine answers (installing Debian's docker.io when missing), then builds the
# image unless it is up to date. `make test` runs `docker` before pytest and, at its very end,
# `docker-done`: it stops the dockerd that this `make test` started, and leaves running (saying so)
# an engine that was already there.
DOCKERD_LOG ?= /var/log/a2a-serverless-dockerd.log
DOCKERD_PIDFILE ?= /var/run/a2a-serverless-dockerd.pid
LAMBDA_IMAGE_ARCH ?= x86_64
# Which make run started dockerd: one id per top-level make, passed down to its sub-makes (`make
# test` runs its steps and TEST_FINAL_STEPS in two), and written beside the PID file by dockerd.sh.
ifndef DOCKERD_RUN_ID
DOCKERD_RUN_ID := $(shell date +%s%N)-$(shell echo $$PPID)
endif
export DOCKERD_RUN_ID
DOCKERD_ENV = DOCKERD_LOG=$(DOCKERD_LOG) DOCKERD_PIDFILE=$(DOCKERD_PIDFILE) DOCKERD_RUN_ID=$(DOCKERD_RUN_ID)

TEST_FINAL_STEPS += docker-done

.PHONY: docker docker-stop docker-done

docker: $(SAM_STAMP) ## start dockerd if none answers, build the Lambda Python 3.13 image (infra/lambda-image)
	@$(DOCKERD_ENV) infra/lambda-image/dockerd.sh
	@ARCH=$(LAMBDA_IMAGE_ARCH) PYTHON=$(SAM_VENV)/bin/python infra/lambda-image/build.sh

docker-stop: ## stop the dockerd that make docker started
	@$(DOCKERD_ENV) infra/lambda-image/dockerd.sh stop

docker-done: ## (end of make test) stop the dockerd this make run started; say so of one left running
	@$(DOCKERD_ENV) infra/lambda-image/dockerd.sh done
