#!/usr/bin/env bash
# Install the peers of `make bench-peers`:
# - the servers of the floor rows (Redis, PostgreSQL) from the distribution's packages,
#   only as root with apt-get; otherwise say what is missing and let the bench skip it;
# - the agent tools (coordinationhub, coord-server, coord-mcp-server, mcp-agent-mail) from
#   PyPI at pinned versions, each into a venv of its own under bench/.peers/
#   (bench/peer_venvs.py); one that fails is reported by the bench with pip's reason.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 \
    && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
    :
  else
    echo "bench-peers: not installed: ${missing[*]} (install them, or the bench skips them)" >&2
  fi
fi
"${PYTHON:-python3}" -m bench.peer_venvs || echo "bench-peers: a peer failed to install (the bench says which and why)" >&2
