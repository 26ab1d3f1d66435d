# dpcap developer commands. Every target creates .venv if it is missing and installs what it
# needs from pyproject.toml; nothing is installed by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.deps-stamp

.PHONY: help install demo test lint typecheck pytest docs bench fuzz clean

help:
	@echo "make demo       set up .venv and run the main job (audit of the default mechanism)"
	@echo "make test       set up .venv, then lint, type check and run the test suite"
	@echo "make lint       ruff (lint and format check)"
	@echo "make typecheck  mypy --strict on dpcap and dpcap.solvers"
	@echo "make docs       the documentation site in build/docs/html (warnings are errors)"
	@echo "make bench      opt-in benchmarks against peers (tests/benchmarks)"
	@echo "make fuzz       long Hypothesis run of tests/fuzz (>= 10^4 examples per group), with counts"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Dependencies are reinstalled only when pyproject.toml changes.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet ".[test,plot,distributed,docs,interop]"
	touch $(STAMP)

# The package itself is reinstalled on every run (no deps: fast), so the installed copy that
# the packaging tests import from outside the source tree is never stale.
install: $(STAMP)
	$(PY) -m pip install --quiet --no-deps --force-reinstall .
	rm -rf dpcap.egg-info  # left by the in-tree build; it would shadow the installed metadata

demo: install
	$(PY) -m dpcap demo

lint: $(STAMP)
	$(BIN)/ruff check dpcap solvers tests examples docs/conf.py
	$(BIN)/ruff format --check dpcap solvers tests examples docs/conf.py

# mypy checks the tree in place: dpcap/solvers is a tracked symlink to ../solvers, so the
# engines are the package dpcap.solvers to every tool, as they are once installed.
typecheck: $(STAMP)
	$(BIN)/mypy -p dpcap

pytest: install
	$(BIN)/pytest -q

# Sphinx with warnings as errors: the API pages come from the docstrings, the gallery runs
# every script in examples/ (their asserts check the papers' numbers) and the command-line page
# is the installed command's --help, so the site cannot drift from the code.
docs: install
	$(BIN)/sphinx-build -W --keep-going -q -b html docs build/docs/html
	@echo "docs: build/docs/html/index.html"

test: lint typecheck pytest docs

bench: install
	$(PY) tests/benchmarks/run.py

# The fuzz profile (tests/fuzz/conftest.py): each group in its own pytest process, two at a
# time; prints the examples run per group and fails below 10^4 or on any failure.
fuzz: install
	DPCAP_FUZZ=1 $(PY) tests/fuzz/run.py

clean:
	rm -rf $(VENV) build docs/generated docs/auto_examples docs/sg_execution_times.rst *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
