# `make test` sets everything up (a .venv with the package and its dev extras) and runs every
# check CI runs. `make demo` runs the example job's local stage with no cloud account.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.majob-installed

.PHONY: test lint typecheck pytest demo setup bench clean bytecode

test: bytecode lint typecheck pytest

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Compile majob's bytecode up front: with PYTHONDONTWRITEBYTECODE set (as on some machines) every
# `majob` start would otherwise recompile the package from source (~30 ms). Stale files are
# harmless: Python checks each one against its source's mtime.
bytecode: setup
	$(BIN)/python -m compileall -q majob

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy --strict majob

pytest: setup
	$(BIN)/pytest

demo: bytecode
	$(BIN)/majob run job_specs/mnist.yaml --stage local

bench: bytecode
	$(BIN)/python bench/cli_startup.py
	$(BIN)/python bench/runner_overhead.py
	$(BIN)/python bench/compile_speed.py
	$(BIN)/python bench/obs_sync.py --quick
	$(BIN)/python bench/check_speed.py --rounds 1
	$(BIN)/python bench/image_inspect.py --rounds 1
	$(BIN)/python bench/migrate_quality.py
	$(BIN)/python bench/precision.py

clean:
	rm -rf $(VENV) .majob .mypy_cache .pytest_cache .ruff_cache
