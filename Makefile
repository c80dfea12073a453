# `make test` sets everything up (a .venv with the package and its dev extras) and runs every
# check CI runs. `make demo` runs the example job through local, debug and formal on the
# emulated cloud (no account needed).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.majob-installed

.PHONY: test check lint typecheck pytest demo setup bench clean bytecode

test: bytecode lint typecheck pytest

setup: $(STAMP)

# pip is quiet (its output would bury the demo), so each step says first what it waits for.
$(STAMP): pyproject.toml
	@echo "setting up $(VENV) (once, and again when pyproject.toml changes):"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "  updating pip ..."
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "  installing majob with its dev extras: PyTorch 2.13.0 (CPU), the OBS and ModelArts SDKs,"
	@echo "  msprobe, Jupyter, the linters; a few minutes the first time, longer on a busy machine ..."
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)
	@echo "  $(VENV) is ready"

# Compile majob's bytecode up front: with PYTHONDONTWRITEBYTECODE set (as on some machines) every
# `majob` start would otherwise recompile the package from source (~30 ms). Stale files are
# harmless: Python checks each one against its source's mtime.
bytecode: setup
	$(BIN)/python -m compileall -q majob

# The inner loop while developing: lint, types and the unit tests that start no server and no
# torch process (under 90 s). CI runs everything: `make test`.
check: lint typecheck
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist load --maxschedchunk 2 -q tests/unit -m "not slow"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: setup
	$(BIN)/mypy --strict majob

# Four workers on this 2-core kind of machine: many tests wait (on node processes, servers,
# jobs) more than they compute. Two tests at a time each (--maxschedchunk), so the slow ones, sorted
# first, spread over the workers. The 30 slowest are listed at the end: where the time goes.
PYTEST_WORKERS ?= 4
pytest: setup
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist load --maxschedchunk 2 --durations=30

# The whole story: start the emulated cloud (fake OBS + fake ModelArts on 127.0.0.1), run the
# MNIST pipeline local -> debug -> formal (real uploads, real jobs, the gate between stages; the
# cloud outputs are listed as each stage passes), show the ledger with its metrics, and stop the
# emulator whatever happened (the trap), leaving nothing running. An emulator that was already
# running (`majob emulator start` says so) is someone else's: the demo uses it and leaves it
# running. Run it twice: the second run skips every stage and says why.
demo: bytecode
	@started=$$($(BIN)/majob emulator start) || exit $$?; echo "$$started"; \
	case "$$started" in \
	  *"already running"*) echo "(the demo did not start this emulator: it leaves it running)";; \
	  *) trap '$(BIN)/majob emulator stop' EXIT INT TERM;; \
	esac; \
	$(BIN)/majob pipeline job_specs/mnist.yaml --profile emulator --upload-inputs && \
	$(BIN)/majob history job_specs/mnist.yaml --limit 6

bench: bytecode
	$(BIN)/python bench/cli_startup.py
	$(BIN)/python bench/runner_overhead.py
	$(BIN)/python bench/compile_speed.py
	$(BIN)/python bench/obs_sync.py --quick
	$(BIN)/python bench/check_speed.py --rounds 1
	$(BIN)/python bench/image_inspect.py --rounds 1
	$(BIN)/python bench/migrate_quality.py
	$(BIN)/python bench/precision.py
	$(BIN)/python bench/perf.py
	$(BIN)/python bench/resilience.py

clean:
	rm -rf $(VENV) .majob .mypy_cache .pytest_cache .ruff_cache
