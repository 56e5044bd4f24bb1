# One entry point for people and CI. Every target sets up what it needs.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Debian packages: headless Chromium for the browser tests of the web pages.
SYSTEM_PACKAGES ?= chromium redis-server

.PHONY: all setup system-deps test lint typecheck unit demo bench bench-extract clean

all: test

# The C module trawl._native (csrc/) is built by the editable install.
$(STAMP): pyproject.toml $(wildcard csrc/*.c csrc/*.h)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,render]'
	touch $(STAMP)

setup: system-deps $(STAMP)

# Debian packages the tests and demo need (installed only when missing).
system-deps:
	@./scripts/system-deps.sh $(SYSTEM_PACKAGES)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

# The browser tests drive Chromium through Playwright, whose sync API leaves an event
# loop behind in the process; they run in their own pytest process. The rendering
# tests (tests/render) use the async API, which leaves nothing behind: they run with
# the rest (and could not run after the sync API's leftover loop).
# The rest runs in 2 worker processes (pytest-xdist), a whole file to one worker
# (loadfile: a module's shared crawl or server is made once, not once per worker).
# Each worker starts its own session servers (redis, Redis Cluster, SeaweedFS).
PYTEST_WORKERS ?= 2

test: setup lint typecheck
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile --ignore=tests/browser
	$(BIN)/pytest -q tests/browser

demo: setup
	$(BIN)/python -m trawl.demo

# Debian packages the benchmarks need (crawl: a fast static server for the local web;
# api: wrk).
BENCH_PACKAGES ?= nginx libnginx-mod-http-echo wrk

bench: setup
	@./scripts/system-deps.sh $(BENCH_PACKAGES)
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m bench

bench-extract: setup
	$(BIN)/python bench/bench_extract.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .pytest_cache .ruff_cache
