# truthkeeper: `make demo` and `make test` install everything they need from nothing.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
STAMPS := .stamps
PY     := $(VENV)/bin/python

# SWI-Prolog: scripts/install-swipl.sh records the bin directory of a swipl >= 9.1.12 in
# .swipl/BINDIR (an existing one, or one it built into .swipl/). janus-swi must see that swipl
# first on PATH, and SWI_HOME_DIR must name its home, or it loads another version's boot file.
SWIPL_BINDIR = $(shell cat .swipl/BINDIR)
SWIPL_HOME   = $(shell PATH="$(SWIPL_BINDIR):$$PATH" swipl --dump-runtime-variables | sed -n 's/^PLBASE="\(.*\)";$$/\1/p')
# The tests run on every core (at most four processes: each starts its own SWI-Prolog and
# JAX); XDIST= runs them in one process.
XDIST ?= -n auto --maxprocesses 4
RUN = env PATH="$(CURDIR)/$(VENV)/bin:$(SWIPL_BINDIR):$$PATH" SWI_HOME_DIR="$(SWIPL_HOME)" \
      JAX_PLATFORMS=cpu

.PHONY: help demo test test-fast lint bench bench-extras clean distclean swipl

help:
	@echo "make demo   - install what is missing, then run the demo"
	@echo "make test   - install what is missing, start a throw-away PostgreSQL, run every test"
	@echo "make lint   - ruff and mypy"
	@echo "make bench-extras - install the benchmark peers (crowd-kit, memvara, veritas-tms; also part of make test)"
	@echo "make clean  - remove the virtual environment and stamps (keeps the SWI-Prolog build)"
	@echo "make distclean - also remove the project's SWI-Prolog build (.swipl/)"

$(STAMPS)/swipl: scripts/install-swipl.sh
	@mkdir -p $(STAMPS)
	bash scripts/install-swipl.sh >/dev/null
	@touch $@

swipl: $(STAMPS)/swipl

$(STAMPS)/venv:
	@mkdir -p $(STAMPS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@touch $@

$(STAMPS)/install: $(STAMPS)/venv $(STAMPS)/swipl pyproject.toml
	$(RUN) $(PY) -m pip install -q --no-cache-dir --force-reinstall --no-deps janus-swi
	$(RUN) $(PY) -m pip install -q -e '.[test,postgres]'
	@touch $@

$(STAMPS)/bench: $(STAMPS)/install
	$(RUN) $(PY) -m pip install -q -e '.[test,bench]'
	@touch $@

demo: $(STAMPS)/install
	$(RUN) $(PY) -m truthkeeper.demo

# The PostgreSQL journal's tests need a server: a throw-away one is started for the run and
# stopped afterwards (scripts/pg-test-server.sh installs the Debian package when missing).
test: $(STAMPS)/install
	dsn=$$(bash scripts/pg-test-server.sh start); trap 'bash scripts/pg-test-server.sh stop' EXIT; \
	$(RUN) TK_PG_DSN="$$dsn" $(PY) -m pytest -q $(XDIST) --doctest-modules tests src/truthkeeper README.md

test-fast: $(STAMPS)/install
	dsn=$$(bash scripts/pg-test-server.sh start); trap 'bash scripts/pg-test-server.sh stop' EXIT; \
	$(RUN) TK_PG_DSN="$$dsn" $(PY) -m pytest -q $(XDIST) -m "not slow" --doctest-modules tests src/truthkeeper README.md

lint: $(STAMPS)/install
	$(RUN) $(VENV)/bin/ruff check src tests scripts examples
	$(RUN) $(VENV)/bin/mypy

bench-extras: $(STAMPS)/bench

bench: $(STAMPS)/install
	$(RUN) $(VENV)/bin/truthkeeper bench perf

clean:
	rm -rf $(VENV) $(STAMPS) .pytest_cache .hypothesis .mypy_cache .ruff_cache src/*.egg-info

distclean: clean
	rm -rf .swipl
