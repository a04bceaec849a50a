# jupyter-guard build and test entry points.
#
#   make build   bin/guardctl
#   make labextension
#                labextension/prebuilt/jupyter-guard: the built JupyterLab 4
#                / Notebook 7 extension (labextension/, TypeScript, built by
#                its package.json's build script, tsc and jupyter-builder,
#                the latter from .venv, with @jupyter/builder from
#                labextension/package-lock.json). The build is kept in the
#                repository, so pip needs no Node.js: commit it with the
#                sources it comes from (make test fails when they differ).
#                The e2e stories' servers load it with the server extension
#                jupyter_guard/, and the wheel ships it.
#   make test    go vet, the Go unit tests of every package, the pytest
#                integration suite against a -cover build of guardctl, then
#                the e2e stories; every summary, the skipped tests and the
#                combined coverage are repeated at the end. Creates the test
#                environments .venv, .venv-ipykernel6 and .venv-wheel from
#                requirements/ first (scripts/test-venvs), e2e/node_modules from
#                e2e/package-lock.json, and bin/resource-usage (jupyter-
#                resource-usage, for e2e/usage.test.mjs only) from
#                requirements/resource-usage.txt, and bin/nbclient-suite
#                (nbclient's own tests, for tests/test_nbclient_suite.py)
#                from requirements/nbclient-suite.txt. The e2e stories need Debian's
#                Chromium (/usr/bin/chromium), which .ci/run installs.
#   make e2e     only the e2e stories (e2e/*.test.mjs): real JupyterLab and
#                Notebook 7 pages in headless Chromium, driven by
#                playwright-core, on the guarded kernel. They refresh
#                docs/screenshots/; logs and failure screenshots go to bin/e2e/.
#   make wheel   dist/: the sdist and the wheels (pip install jupyter-guard):
#                manylinux_2_17 x86_64 and aarch64 with cgo through zig,
#                musllinux_1_2 x86_64 static, each with guardctl, the server
#                extension and the lab extension (make labextension first,
#                which the sdist then carries); each checked by
#                packaging/check_wheel.py (auditwheel show, architecture,
#                static, size, the Jupyter files). The tools come from
#                .venv-wheel.

SHELL := bash
GO ?= go
VENV := $(CURDIR)/.venv
# Extra pytest arguments, e.g. make test PYTEST_ARGS='-k interrupt -x'.
PYTEST_ARGS ?=
# A Go package whose tests run this long is hung: fail it, keep CI short.
GO_TEST_FLAGS ?= -timeout=5m
# Extra node --test arguments, e.g. make e2e E2E_ARGS='--test-name-pattern=crash'.
E2E_ARGS ?=
CHROMIUM := /usr/bin/chromium
# Written once npm ci has installed e2e/package-lock.json.
E2E_DEPS := e2e/node_modules/.installed
# jupyter-resource-usage, apart from .venv: only e2e/usage.test.mjs's server
# loads it (requirements/resource-usage.txt says why).
RESOURCE_USAGE := bin/resource-usage/.installed

# The guardctl the e2e stories run; make test gives them the -cover build.
E2E_BIN = $(CURDIR)/bin/guardctl
# The e2e stories, one file at a time (each story starts its own Jupyter
# server and browser): the spec reporter's lines on screen and in
# bin/e2e-test.log, TAP in bin/e2e.tap. Without Chromium it says so there.
E2E_STEP = echo "== e2e stories (headless Chromium)"; \
	if [[ ! -x $(CHROMIUM) ]]; then \
		echo "e2e: $(CHROMIUM) is missing: apt-get install chromium chromium-driver (bash .ci/run does)" | tee bin/e2e-test.log >&2; \
		false; \
	else \
		(cd e2e && JUPYTER_GUARD_BIN=$(E2E_BIN) node --test --test-concurrency=1 \
			--test-reporter=spec --test-reporter-destination=stdout \
			--test-reporter=tap --test-reporter-destination=$(CURDIR)/bin/e2e.tap \
			$(E2E_ARGS) *.test.mjs) 2>&1 | tee bin/e2e-test.log; \
	fi
# Each story's line (not the repeat under "failing tests") and the counts;
# then, for each failed story, its error's first line, what the assertion
# got and what the page showed (cut short), so the reason is in the
# summary at the end of a CI log and not only far above it.
E2E_SUMMARY = sed -n '/^✖ failing tests:/q;p' bin/e2e-test.log | grep -E '^(✔|✖|e2e:) ' || true; \
	grep -E '^ℹ (tests|pass|fail|cancelled|todo|duration_ms) ' bin/e2e-test.log || true; \
	awk '/^✖ failing tests:/ { f = 1; next } \
		f && /^✖ / { print "why: " $$0 } \
		f && /^  [A-Za-z]*Error/ { print "  " $$0 } \
		f && /^    actual: / { print "  " substr($$0, 1, 400) } \
		f && /^  --- the page showed: / { print "  " substr($$0, 1, 600) }' bin/e2e-test.log

.PHONY: build build-nvmlmock check test e2e venvs e2e-deps nbclient-suite labextension labextension-check screenshots wheel

build:
	$(GO) build -o bin/guardctl ./cmd/guardctl

# guardctl whose NVML is go-nvml's mock, for tests/test_gpu.py only.
build-nvmlmock:
	$(GO) build -tags nvmlmock -o bin/guardctl-nvmlmock ./cmd/guardctl

venvs:
	@scripts/test-venvs

WHEEL_PLATFORMS := manylinux_2_17_x86_64 manylinux_2_17_aarch64 musllinux_1_2_x86_64
WHEEL_PYTHON := $(CURDIR)/.venv-wheel/bin/python

# labextension first: the wheel ships labextension/prebuilt as it is.
wheel: labextension
	@scripts/test-venvs .venv-wheel
	rm -rf dist
	$(WHEEL_PYTHON) -m build --sdist -o dist
	set -e; for platform in $(WHEEL_PLATFORMS); do \
		JUPYTER_GUARD_PLATFORM=$$platform $(WHEEL_PYTHON) -m build --wheel -o dist; \
	done
	$(WHEEL_PYTHON) packaging/check_wheel.py dist/*.whl

e2e-deps: $(E2E_DEPS) $(RESOURCE_USAGE)

$(RESOURCE_USAGE): requirements/resource-usage.txt
	@scripts/test-venvs .venv
	rm -rf $(@D)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --require-hashes --target $(@D) -r $<
	@touch $@

# nbclient's sdist, unpacked into bin/nbclient-suite/src, and what its tests
# need besides .venv in bin/nbclient-suite/deps (requirements/nbclient-suite.txt).
NBCLIENT_SUITE := bin/nbclient-suite/.installed

nbclient-suite: $(NBCLIENT_SUITE)

$(NBCLIENT_SUITE): requirements/nbclient-suite.txt
	@scripts/test-venvs .venv
	rm -rf $(@D)
	$(VENV)/bin/python -m pip download -q --disable-pip-version-check --no-deps --require-hashes -r $< -d $(@D)/dist
	mkdir -p $(@D)/src && tar -xzf $(@D)/dist/nbclient-*.tar.gz -C $(@D)/src --strip-components=1
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --target $(@D)/deps $(@D)/dist/*.whl
	@touch $@

# The lab extension's build, kept in the repository; its node_modules come
# from its own lock file.
LAB_DEPS := labextension/node_modules/.installed
LAB_EXT := labextension/prebuilt/jupyter-guard/package.json
# tsc's output and its incremental state go first: a stale lib/ (a merge
# that moved sources) built a different bundle from the same sources.
LAB_BUILD = cd labextension && rm -rf lib tsconfig.tsbuildinfo && PATH=$(VENV)/bin:$$PATH npm run build

labextension: $(LAB_EXT)

$(LAB_DEPS): labextension/package.json labextension/package-lock.json
	cd labextension && npm ci --no-audit --no-fund
	@touch $@

$(LAB_EXT): $(LAB_DEPS) labextension/tsconfig.json $(wildcard labextension/src/*.ts labextension/style/*)
	@scripts/test-venvs .venv
	$(LAB_BUILD)

# Builds the lab extension whatever the files' times (a clone's say
# nothing) and fails if labextension/prebuilt, which pip ships, is not
# what its sources build: the build is deterministic.
labextension-check: $(LAB_DEPS)
	@scripts/test-venvs .venv
	$(LAB_BUILD)
	@if [[ -n "$$(git status --porcelain --untracked-files=all -- labextension/prebuilt)" ]]; then \
		echo "labextension/prebuilt differs from what labextension/src builds: commit the new build" >&2; \
		git status --short --untracked-files=all -- labextension/prebuilt >&2; \
		exit 1; \
	fi

$(E2E_DEPS): e2e/package.json e2e/package-lock.json
	cd e2e && npm ci --no-audit --no-fund
	@touch $@

e2e: build build-nvmlmock venvs e2e-deps labextension
	@status=0; mkdir -p bin; set -o pipefail; \
	$(E2E_STEP) || status=1; \
	echo; echo "== summary: e2e"; \
	$(E2E_SUMMARY); \
	exit $$status

# The README's screenshots: the e2e stories, saving into docs/screenshots.
export E2E_SCREENSHOTS
screenshots:
	$(MAKE) e2e E2E_SCREENSHOTS=docs/screenshots

# Coverage of the Go packages: the Go tests' own (bin/cover/unit) and what
# the pytest suite and the e2e stories exercise through a guardctl built
# with -cover (bin/cover/binary), merged by go tool covdata.
COVER := $(CURDIR)/bin/cover

# The team's cgroup v2 harness beside the checkout, for the guest's tests;
# without one they are skipped and say why.
CGROUP_V2_HARNESS ?= $(wildcard $(abspath $(CURDIR)/../shared/cgroup-v2/run-in-v2.sh))
export CGROUP_V2_HARNESS
COVER_BIN := $(CURDIR)/bin/guardctl-cover
# The tests that boot the user-mode-linux guest: they spend their time
# waiting on its one slow CPU (it filled memory at 6-130 MiB/s), so make
# test runs them beside the other tests, not in their line, at the lowest
# CPU priority: on a busy machine the guest waits, not the host's tests.
GUEST_TESTS := tests/test_cgroup_v2.py tests/test_headroom_v2.py tests/test_ceiling_v2.py
# The packages whose combined coverage the summary shows: the proxy and the
# supervisor are driven almost only through the binary.
COVER_KEY := github.com/jupyter-guard/jupyter-guard/proxy,github.com/jupyter-guard/jupyter-guard/supervisor

# The quick tier, under 3 minutes once the venvs exist: go vet (with and
# without cgo) and the Go tests, which run the proxy against a fake kernel
# and the guard against real processes and cgroups, and drive pyzmq and
# ipykernel from .venv; no Jupyter server, no browser. make test runs them
# too, with coverage and again under the race detector, before pytest and
# the e2e stories.
check: venvs
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...
	JUPYTER_GUARD_TEST_STRICT=1 JUPYTER_GUARD_TEST_PYTHON=$(VENV)/bin/python $(GO) test $(GO_TEST_FLAGS) ./...

# Every step runs even when an earlier one fails, so one run shows all the
# failures; the exit status is non-zero if any step failed. JUPYTER_GUARD_
# TEST_STRICT turns a test's skip for something this target provides (the
# venvs, g++, the memory cgroup) into a failure. go test's per-package
# lines, every skipped test with its reason, the coverage, the e2e stories'
# lines and counts, and pytest's closing line are printed again at the end,
# pytest's last, so none scrolls out of sight.
test: E2E_BIN = $(COVER_BIN)
test: build build-nvmlmock venvs e2e-deps nbclient-suite labextension
	@status=0; mkdir -p bin; set -o pipefail; \
	rm -rf $(COVER); mkdir -p $(COVER)/unit $(COVER)/binary; \
	$(GO) build -cover -coverpkg=./... -o $(COVER_BIN) ./cmd/guardctl || status=1; \
	export JUPYTER_GUARD_TEST_STRICT=1; \
	echo "== the lab extension's kept build is what its sources build"; \
	$(MAKE) -s labextension-check || status=1; \
	echo "== go vet ./..."; \
	$(GO) vet ./... || status=1; \
	echo "== go vet ./... without cgo (the static musllinux wheel; Go without a C compiler)"; \
	CGO_ENABLED=0 $(GO) vet ./... || status=1; \
	echo "== go test ./..."; \
	JUPYTER_GUARD_TEST_PYTHON=$(VENV)/bin/python $(GO) test -json -cover $(GO_TEST_FLAGS) ./... -args -test.gocoverdir=$(COVER)/unit 2>&1 \
		| $(VENV)/bin/python scripts/go-test-report bin/go-test.log || status=1; \
	echo "== go test -race ./... (the proxy's goroutines share its sockets and requests)"; \
	JUPYTER_GUARD_TEST_PYTHON=$(VENV)/bin/python $(GO) test -json -race $(GO_TEST_FLAGS) ./... 2>&1 \
		| $(VENV)/bin/python scripts/go-test-report bin/go-test-race.log || status=1; \
	echo "== the cgroup v2 guest's tests (bin/pytest-guest.log), beside pytest and the e2e stories"; \
	GOCOVERDIR=$(COVER)/binary JUPYTER_GUARD_BIN=$(COVER_BIN) nice -n 19 $(VENV)/bin/python -m pytest $(GUEST_TESTS) -rfEsx \
		$(PYTEST_ARGS) > bin/pytest-guest.log 2>&1 & guest=$$!; \
	echo "== pytest tests (but the cgroup v2 guest's)"; \
	GOCOVERDIR=$(COVER)/binary JUPYTER_GUARD_BIN=$(COVER_BIN) $(VENV)/bin/python -m pytest tests -rfEsx --durations=15 \
		$(foreach f,$(GUEST_TESTS),--ignore $(f)) $(PYTEST_ARGS) 2>&1 | tee bin/pytest.log || status=1; \
	export GOCOVERDIR=$(COVER)/binary; $(E2E_STEP) || status=1; unset GOCOVERDIR; \
	wait $$guest || status=1; cat bin/pytest-guest.log; \
	echo; echo "== summary: go test"; \
	grep -E '^(ok|FAIL|--- FAIL|panic:|signal: |# |SKIP |== go test)' bin/go-test.log || true; \
	echo "== summary: go test -race"; \
	grep -E '^(FAIL|--- FAIL|WARNING: DATA RACE|panic:|SKIP |== go test)' bin/go-test-race.log || true; \
	echo "== summary: skipped in pytest"; \
	grep -hE '^SKIPPED ' bin/pytest.log bin/pytest-guest.log || echo "none"; \
	echo "== summary: coverage (Go tests + the binary under pytest and e2e)"; \
	$(GO) tool covdata percent -i=$(COVER)/unit,$(COVER)/binary -pkg=$(COVER_KEY) || status=1; \
	$(GO) tool covdata percent -i=$(COVER)/unit,$(COVER)/binary > $(COVER)/percent.txt || status=1; \
	echo "  (every package: bin/cover/percent.txt)"; \
	echo "== summary: e2e"; \
	$(E2E_SUMMARY); \
	echo "== summary: pytest"; \
	grep -hE '^(FAILED|ERROR) ' bin/pytest.log bin/pytest-guest.log || true; \
	tail -n 1 bin/pytest-guest.log; \
	tail -n 1 bin/pytest.log; \
	exit $$status
