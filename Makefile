VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# `make demo` installs only what the demo and `serve --demo` need (no Spark, PostgreSQL server,
# browser driver or test tools); `make test` / `make check` add everything else (`.[all]`).
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: venv demo test test-fast check lint format typecheck bench clean schemas models train-venv

$(DEMO_STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(PIP) install -q -e '.[all]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/citebound demo
	@echo
	@echo "Next: 'source $(VENV)/bin/activate' puts citebound on your PATH (or run $(VENV)/bin/citebound)."

test: $(STAMP)
	$(PY) -m pytest -q

# The edit-loop subset (about a minute on 2 cores): no Spark, PostgreSQL, browser, shared-data,
# slow or integration (loopback HTTP, subprocess) tests. Markers are in pyproject.toml;
# tests/conftest.py sets spark and postgres. `make test` and `make check` still run them all.
FAST_MARKERS := not (spark or postgres or browser or data or slow or integration)

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "$(FAST_MARKERS)"

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks training
	$(VENV)/bin/ruff format --check src tests benchmarks training

format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks training
	$(VENV)/bin/ruff check --fix src tests benchmarks training

typecheck: $(STAMP)
	$(VENV)/bin/mypy

check: lint typecheck test

schemas: $(STAMP)
	$(PY) -m citebound.contracts.schemas --write

# Rebuild the shipped models from ../shared/data (training/README.md): hours on 2 CPU cores.
# torch 2.13.0 CPU comes from the local wheel folder (TORCH_WHEELS); nothing else is special.
TORCH_WHEELS ?= /opt/wheels
TRAIN_STAMP := $(VENV)/.installed-train

$(TRAIN_STAMP): $(STAMP)
	$(PIP) install -q --find-links $(TORCH_WHEELS) -e '.[train]'
	touch $(TRAIN_STAMP)

train-venv: $(TRAIN_STAMP)

models: $(TRAIN_STAMP)
	$(PY) -m training.verifier.rebuild

bench: $(STAMP)
	$(PY) benchmarks/bench_assembly.py

clean:
	rm -rf $(VENV) .citebound .pytest_cache .mypy_cache .ruff_cache
