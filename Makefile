# `make test` and `make demo` set everything up on a machine that has only Python 3.11.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# One torch thread per test worker: two threads fighting for two cores are 10-100x slower.
TEST_ENV := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

PIP := $(PY) -m pip --disable-pip-version-check
# `make test BROWSER=0`: no chromium install (as root `make browser` apt-installs it and about
# 150 packages); the browser tests then skip, saying why.
BROWSER ?= 1
BROWSER_STEP := $(if $(filter 0 no false,$(BROWSER)),,browser)

.PHONY: test test-fast demo docs lint types install lock fonts browser clean

# The versions tested together (requirements.lock), then attnlab itself without resolving
# anything: pyproject.toml's ranges are for people who install attnlab into their own project.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# torch first and pinned: the CPU wheel on disk, never a CUDA build.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -r requirements.lock
	$(PIP) install --quiet --no-deps -e '.[dev]'
	$(PIP) check
	touch $(STAMP)

install: $(STAMP)

# ruff and mypy first: either failing fails `make test` (and CI) before pytest starts.
test: $(STAMP) $(BROWSER_STEP) lint types
	$(TEST_ENV) $(PY) -m pytest -n 2 -q

# The edit loop: the unit and property tests, under 2 minutes; no model is trained (the tests
# marked slow, and every test using a trained run's fixture, are left out), no lint or types.
test-fast: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -n 2 -q -m "not slow"

demo: $(STAMP)
	$(VENV)/bin/attnlab demo

# The documentation site, into build/site (open build/site/index.html); offline, and strict:
# a warning or a broken link fails it, as it fails `make test` (tests/docsite/test_site.py).
# sphinx-argparse reports a help text that is not valid reST on stderr without failing the
# build, so anything on stderr fails it too.
docs: $(STAMP)
	@mkdir -p build
	@$(PY) -m sphinx -b html -E -W --keep-going -q -d build/doctrees docs build/site \
	  2> build/docs-warnings.txt; status=$$?; cat build/docs-warnings.txt >&2; \
	  test $$status = 0 && test ! -s build/docs-warnings.txt
	@echo "make docs: build/site/index.html"

# Optional: a CJK font so heatmap labels in Chinese render (Debian; needs root).
fonts:
	apt-get install -y fonts-noto-cjk || (apt-get update && apt-get install -y fonts-noto-cjk)

# Chromium for the explorer's browser tests (tests/serve/test_browser.py drives it with
# Playwright; `playwright install` would download a browser, this uses Debian's: chromium and
# about 150 packages it needs). Needs root; `make test` runs it unless BROWSER=0; it never
# fails: without chromium those tests skip, saying why.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get install -y chromium || (apt-get update && apt-get install -y chromium) || \
	      echo "make browser: chromium could not be installed; the browser tests will skip"; \
	  else \
	    echo "make browser: no chromium (as root: apt-get install chromium); the browser tests will skip"; \
	  fi; \
	fi

# requirements.lock from this venv, after changing a dependency (pip install -e '.[dev]') and
# passing `make test`: what attnlab[dev] needs, at the installed versions (tools/lock.py says how).
lock:
	$(PY) tools/lock.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools docs

# mypy over src/attnlab, configured in pyproject.toml [tool.mypy] (strict for the core).
types: $(STAMP)
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
