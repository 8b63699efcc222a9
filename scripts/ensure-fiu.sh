#!/usr/bin/env bash
# Debian's fiu-utils (libfiu's fiu-run and fiu-ctrl) for the disk-fault tests
# (tests/system/test_disk_fault.py): they make fdatasync fail inside a running daemon
# to test what it does after a disk error (docs/ARCHITECTURE.md, "After a disk error").
#   - installed already: nothing to do;
#   - CI (CI=true) as root with apt-get: install it from the distribution's packages;
#   - otherwise: say how; the disk-fault tests then skip, except where
#     COORDD_REQUIRE_FIU=1 (set by .ci/run) makes them fail instead.
set -euo pipefail
if command -v fiu-run >/dev/null 2>&1 && command -v fiu-ctrl >/dev/null 2>&1; then
  exit 0
fi
if [ "${CI:-}" = "true" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing fiu-utils from the distribution's packages for the disk-fault tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fiu-utils >/dev/null
  exit 0
fi
cat >&2 <<'MSG'
make: fiu-utils is not installed, so the disk-fault tests will skip.
  To run them: sudo apt-get install fiu-utils   (Debian/Ubuntu; the tests find
  `fiu-run` and `fiu-ctrl` on PATH).
MSG
