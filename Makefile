# The two commands: `make run` and `make test`. Both create the environment if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench bench-peers soak clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Run the daemon in the foreground on its defaults (database in the user state dir).
run: $(STAMP)
	$(BIN)/coordd serve

## The whole suite (unit, integration, system); the long soak tier is `make soak`.
test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not soak"

lint: $(STAMP)
	$(BIN)/ruff check src clients/python/src tests bench
	$(BIN)/ruff format --check src clients/python/src tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

## The same, plus Redis and PostgreSQL peers (installs them from the distribution as root).
bench-peers: $(STAMP)
	bench/install-peers.sh
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python -m bench --peers $(BENCH_ARGS)

soak: $(STAMP)
	$(BIN)/python -m pytest -q -m soak

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
