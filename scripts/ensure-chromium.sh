#!/usr/bin/env bash
# Debian's chromium for coord web's browser tests (tests/system/test_web_browser.py), which
# Playwright drives through `executable_path`: Playwright's own browser download is not
# reachable from here, and a distribution's browser is what a user has anyway.
#   - installed already: nothing to do;
#   - CI (CI=true) as root with apt-get: install it from the distribution's packages;
#   - otherwise: say how; the browser tests then skip, except where
#     COORDD_REQUIRE_BROWSER=1 (set by .ci/run) makes them fail instead.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if [ "${CI:-}" = "true" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium from the distribution's packages for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
cat >&2 <<'MSG'
make test: chromium is not installed, so coord web's browser tests will skip.
  To run them: sudo apt-get install chromium   (Debian/Ubuntu; the tests find
  `chromium` or `chromium-browser` on PATH).
MSG
