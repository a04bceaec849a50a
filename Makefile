# jupyter-guard build and test entry points.
#
#   make build   bin/guardctl
#   make test    go vet, the Go unit tests of every package, then the pytest
#                integration suite against bin/guardctl; both summaries are
#                repeated at the end. Creates the test environments .venv and
#                .venv-ipykernel6 from requirements/ first (scripts/test-venvs).

SHELL := bash
GO ?= go
VENV := $(CURDIR)/.venv
# Extra pytest arguments, e.g. make test PYTEST_ARGS='-k interrupt -x'.
PYTEST_ARGS ?=
# A Go package whose tests run this long is hung: fail it, keep CI short.
GO_TEST_FLAGS ?= -timeout=5m

.PHONY: build test venvs

build:
	$(GO) build -o bin/guardctl ./cmd/guardctl

venvs:
	@scripts/test-venvs

# Every step runs even when an earlier one fails, so one run shows all the
# failures; the exit status is non-zero if any step failed. go test's
# per-package lines and pytest's closing line are printed again at the end,
# pytest's last, so neither scrolls out of sight.
test: build venvs
	@status=0; mkdir -p bin; \
	echo "== go vet ./..."; \
	$(GO) vet ./... || status=1; \
	echo "== go test ./..."; \
	set -o pipefail; \
	JUPYTER_GUARD_TEST_PYTHON=$(VENV)/bin/python $(GO) test $(GO_TEST_FLAGS) ./... 2>&1 | tee bin/go-test.log || status=1; \
	echo "== pytest tests"; \
	JUPYTER_GUARD_BIN=$(CURDIR)/bin/guardctl $(VENV)/bin/python -m pytest tests $(PYTEST_ARGS) 2>&1 | tee bin/pytest.log || status=1; \
	echo; echo "== summary: go test"; \
	grep -E '^(ok|FAIL|--- FAIL|panic:|signal: |# )' bin/go-test.log || true; \
	echo "== summary: pytest"; \
	grep -E '^(FAILED|ERROR) ' bin/pytest.log || true; \
	tail -n 1 bin/pytest.log; \
	exit $$status
