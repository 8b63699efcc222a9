#!/usr/bin/env bash
# PostgreSQL's server binaries for the team-mode tests (each test session runs its own
# throwaway cluster; nothing here starts a server or touches a system one).
#   - installed already: nothing to do;
#   - CI (CI=true) as root with apt-get: install from the distribution's packages;
#   - otherwise: say how to install them; the PostgreSQL cases then skip, except where
#     COORDD_REQUIRE_POSTGRES=1 (set by .ci/run) makes them fail instead.
set -euo pipefail
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "${CI:-}" = "true" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing PostgreSQL from the distribution's packages for the team-mode tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  exit 0
fi
cat >&2 <<'MSG'
make test: PostgreSQL is not installed, so the team-mode (PostgreSQL) cases will skip.
  To run them: sudo apt-get install postgresql   (Debian/Ubuntu; any distribution's
  server package works: the tests find initdb and postgres on PATH or in
  /usr/lib/postgresql/*/bin and run their own throwaway cluster).
MSG
