# `make test` sets everything up (a .venv with the package and its dev extras) and runs every
# check CI runs. `make demo` runs the example job through local, debug and formal on the
# emulated cloud (no account needed).
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
	$(BIN)/lint-imports --no-cache

typecheck: setup
	$(BIN)/mypy --strict majob

pytest: setup
	$(BIN)/pytest

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
	$(BIN)/python bench/resilience.py

clean:
	rm -rf $(VENV) .majob .mypy_cache .pytest_cache .ruff_cache
