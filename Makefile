# The two commands: `make run` and `make test`. Both create the environment if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every install is pinned by this file, refreshed on purpose with `make lock`:
# pyproject.toml keeps ranges for users; a new release of a dependency must
# not change what `make test` and CI install overnight.
CONSTRAINTS := constraints.txt
# The extras the tests and benchmarks use, resolved together into the lock.
LOCKED_EXTRAS := dev,bench,mcp,tui,team,web
TS := clients/ts
TS_STAMP := $(TS)/node_modules/.installed
# The host tier's real Claude Code and Codex, pinned by tests/hosts/package-lock.json
# and installed beside it (never globally); `make lock-hosts` bumps them on purpose.
HOSTS := tests/hosts
HOSTS_STAMP := $(HOSTS)/node_modules/.installed
# npm itself sends nothing but the install: no update check, audit or funding call.
NPM_QUIET := NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false

.PHONY: run test test-fast test-store test-unit test-integration test-hosts lint fmt ts-wire client-methods protocol-doc generate bench bench-peers bench-scale soak lock lock-hosts clean

$(STAMP): pyproject.toml clients/python/pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip -c $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,tui,team,web]' -c $(CONSTRAINTS)
	touch $(STAMP)

## Run the daemon in the foreground on its defaults (database in the user state dir).
run: $(STAMP)
	$(BIN)/coordd serve

## Workers `make test` runs the suite on (pytest-xdist). Most of a test's time is a daemon,
## a host or a browser starting and answering, so more workers than the machine's 2 cores
## keep both busy; the tests that share the machine's /tmp/coordd-<uid> socket run on one
## (tests/support.py: SHARED_TMP_SOCKET). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 4

## The whole suite (unit, integration, system, then the TypeScript client's); `make soak` is long.
## The team-mode cases need PostgreSQL's server packages: scripts/ensure-postgres.sh says how;
## coord web's browser tests need chromium: scripts/ensure-chromium.sh; the disk-fault test
## needs fiu-utils: scripts/ensure-fiu.sh.
test: $(STAMP) $(TS_STAMP) $(HOSTS_STAMP)
	scripts/ensure-postgres.sh
	scripts/ensure-chromium.sh
	scripts/ensure-fiu.sh
	$(BIN)/python -m pytest -q -m "not soak" -n $(TEST_WORKERS) --dist loadgroup
	cd $(TS) && COORDD_PYTHON=$(abspath $(BIN))/python npm test --silent

## The unit and integration tiers alone (in-process daemons; about 70 s of CPU): the loop while editing.
## The two tiers run side by side, one per core, each output printed whole when it ends.
test-fast: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target test-unit test-integration

## The store tier alone: the protocol's semantics on the store functions, no daemon process
## (a fresh store per test from a migrated template; PostgreSQL too for `both_backends`): seconds.
test-store: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/store

test-unit test-integration: test-%: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/$*

## The host tier alone: real Claude Code and Codex against local fake model APIs.
test-hosts: $(STAMP) $(HOSTS_STAMP)
	$(BIN)/python -m pytest -q tests/hosts

$(HOSTS_STAMP): $(HOSTS)/package.json $(HOSTS)/package-lock.json
	cd $(HOSTS) && $(NPM_QUIET) npm ci --loglevel=error
	touch $(HOSTS_STAMP)

## Bump the host tier's Claude Code and Codex to their newest releases (then run make test-hosts).
lock-hosts:
	cd $(HOSTS) && $(NPM_QUIET) npm install --save-exact --package-lock-only --loglevel=error \
	  @anthropic-ai/claude-code@latest @openai/codex@latest @modelcontextprotocol/inspector@latest

## The TypeScript client's dev dependencies, pinned by its package-lock.json.
$(TS_STAMP): $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $(TS_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src clients/python/src tests bench scripts
	$(BIN)/ruff format --check src clients/python/src tests bench scripts
	$(BIN)/mypy

## Regenerate the TS client's src/wire.ts and src/wire_types.ts (the interfaces of every
## params and result Struct, and the method map) from the Python declarations (commit them).
ts-wire: $(STAMP)
	$(BIN)/python scripts/ts_wire.py

## Regenerate coordd_client/rpc_methods.py: every builder as a method of both Python clients.
client-methods: $(STAMP)
	$(BIN)/python scripts/client_methods.py

## Regenerate docs/PROTOCOL.md's reference (methods, params, results, bounds) from the code.
protocol-doc: $(STAMP)
	$(BIN)/python scripts/protocol_reference.py

## Everything generated from the method table and the builders, after adding or changing an RPC.
## client-methods first: it reads the builders' source alone, and the other two import
## the library, which a stale rpc_methods.py (a builder renamed or gone) would break.
generate: client-methods ts-wire protocol-doc

## Rewrite what `make lint` would reject and can be fixed mechanically: formatting, import order.
fmt: $(STAMP)
	$(BIN)/ruff format src clients/python/src tests bench scripts
	$(BIN)/ruff check --fix src clients/python/src tests bench scripts

bench: $(STAMP) $(HOSTS_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

## The same, plus the peers: the agent tools from PyPI (bench/peer_venvs.py, a venv each) and
## Redis and PostgreSQL (from the distribution as root). BENCH_ARGS=--peers-only: the peers alone.
bench-peers: $(STAMP) $(HOSTS_STAMP)
	PYTHON=$(BIN)/python bench/install-peers.sh
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]' -c $(CONSTRAINTS)
	$(BIN)/python -m bench --peers $(BENCH_ARGS)

## Does anything users wait for grow with the board's history? Boards of 1k, 10k and 100k
## tasks in a months-old shape (cached; bench/scale.py says how they are built), every
## surface timed in alternated rounds, the table written into BENCHMARKS.md's section.
## BENCH_ARGS="--sizes 1000,10000,100000,1000000" adds 1M (minutes to build, ~2.4 GB).
bench-scale: $(STAMP)
	$(BIN)/python -m bench.scale $(BENCH_ARGS)

## The long fault rounds: kill -9 rounds and disk-fault rounds (fiu-utils: scripts/ensure-fiu.sh).
soak: $(STAMP)
	scripts/ensure-fiu.sh
	$(BIN)/python -m pytest -q -m soak

## Re-resolve every dependency (the daemon, the client, every extra) and rewrite the lock.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet '.[$(LOCKED_EXTRAS)]'
	( echo "# Pinned by make lock from pyproject.toml's ranges; refresh with make lock."; \
	  .lock-venv/bin/python -m pip freeze --all | grep -v -i -E '^(coordd|setuptools)' ) > $(CONSTRAINTS)
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(HOSTS)/node_modules $(TS)/node_modules $(TS)/dist $(TS)/build-test
