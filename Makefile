# `make test` sets everything up (a .venv with the package and its dev extras) and runs every
# check CI runs. `make demo` runs the example job's local stage with no cloud account.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.majob-installed

.PHONY: test lint typecheck pytest demo setup bench clean

test: setup lint typecheck pytest

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy --strict majob

pytest: setup
	$(BIN)/pytest

demo: setup
	$(BIN)/majob run job_specs/mnist.yaml --stage local

bench: setup
	$(BIN)/python bench/cli_startup.py
	$(BIN)/python bench/runner_overhead.py

clean:
	rm -rf $(VENV) .majob .mypy_cache .pytest_cache .ruff_cache
