# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: demo test check setup system-packages release docs browser postgres hub-proxy axe clean-venv

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.run-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev,dask]'
	touch $@ $(VENV)/.run-installed

demo: $(VENV)/.run-installed
	$(PY) -m autograder demo

# Debian's chromium for the browser tests (playwright drives it; it never downloads a browser).
# Installing it needs root (as in CI); without root the browser tests skip and say why.
CHROMIUM ?= chromium
browser:
	@if command -v $(CHROMIUM) >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "note: $(CHROMIUM) is missing and installing it needs root: the browser tests will skip"; fi

# The distribution's PostgreSQL server for the PostgreSQL gradebook tests (a fixture starts one in a temporary
# folder on a Unix socket, as the postgres account). Installing it needs root; without it those tests skip.
PG_BIN ?= /usr/lib/postgresql/15/bin
postgres:
	@if [ -x $(PG_BIN)/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null; \
	else echo "note: PostgreSQL's server is missing and installing it needs root: the PostgreSQL tests will skip"; fi

# JupyterHub's proxy, configurable-http-proxy, from the npm registry into .hub-proxy/ (git ignores it; Node
# from the distribution): tests/env/hub/test_jupyterhub.py finds it there. Without npm the Hub tests skip and say why.
CHP_VERSION ?= 4.6.3
HUB_PROXY   := .hub-proxy/node_modules/.bin/configurable-http-proxy
hub-proxy: $(HUB_PROXY)
$(HUB_PROXY):
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-fund --no-audit --prefix .hub-proxy configurable-http-proxy@$(CHP_VERSION); \
	else echo "note: npm is missing (apt-get install nodejs npm): the JupyterHub tests will skip"; fi

# pytest-xdist workers on 2 cores, one test file each at a time (--dist loadfile): a file's module fixtures (a
# graded class, nbgrader's autograde, a Hub) run once, and nbval keeps a notebook's cells in one kernel. Much of
# the suite waits on subprocesses, servers and sandboxed workers, so more workers than cores fill the cores.
# Files start slowest first (tests/conftest.py's SLOWEST_FIRST; --no-loadscope-reorder keeps that order rather
# than xdist's most-tests-first); the tests of the long files in its APART are handed out one by one.
# docs/development/tests.md has the measured times and how to run each tier.
# axe-core, the accessibility checker tests/env/browser/test_accessibility.py runs in Chromium on every page we
# write, from the npm registry into .axe-core/ (git ignores it). Without npm that test fails and says so.
AXE_VERSION ?= 4.11.0
AXE         := .axe-core/node_modules/axe-core/axe.min.js
axe: $(AXE)
$(AXE):
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-fund --no-audit --prefix .axe-core axe-core@$(AXE_VERSION); \
	else echo "note: npm is missing (apt-get install nodejs npm): the accessibility test will fail"; fi

# What `make test` installs first, side by side (make -j): the venv from PyPI, the distribution's packages
# (chromium and PostgreSQL in one apt-get, which allows one at a time), the two npm packages. Each is skipped when
# already there. On a fresh 2-core machine they took about 2.5 minutes one after another.
SETUP_JOBS ?= 4
setup:
	@$(MAKE) --no-print-directory -j$(SETUP_JOBS) $(VENV)/.dev-installed system-packages hub-proxy axe

# chromium and PostgreSQL's server, whichever is missing, in one apt-get (`make browser` and `make postgres`
# install one each): without root, the tests needing a missing one skip and say why.
APT_MISSING = $(if $(shell command -v $(CHROMIUM) 2>/dev/null),,chromium) \
              $(if $(wildcard $(PG_BIN)/initdb /usr/lib/postgresql/*/bin/initdb),,postgresql-15)
system-packages:
	@if [ -z "$(strip $(APT_MISSING))" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(strip $(APT_MISSING)) >/dev/null; \
	else echo "note: $(strip $(APT_MISSING)) missing and installing needs root: the tests needing it will skip"; fi

TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: setup
	$(PY) -m pytest $(XDIST) --nbval-lax --nbval-current-env tests source/ch04_attention

# The developer's loop: every test that starts no server, no browser, no Dask and no kernel (those live under
# tests/env/, marked `env` by tests/conftest.py from where they live; not even collected here).
check: $(VENV)/.dev-installed
	$(PY) -m pytest $(XDIST) --ignore=tests/env -m "not env" tests

# Re-run the source notebooks (stored outputs) and regenerate release/ with nbgrader.
release: $(VENV)/.run-installed
	$(PY) -m autograder release --execute-source

# The documentation (docs/): refresh the tables generated from the code, then build the site with warnings as errors.
docs: $(VENV)/.dev-installed
	$(PY) scripts/gen_docs.py
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "site: docs/_build/html/index.html"

clean-venv:
	rm -rf $(VENV)
