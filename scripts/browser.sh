#!/usr/bin/env bash
# Debian's Chromium for the page tests (tests/test_pages.py drives it with Playwright; Playwright's
# own browser download cannot reach its servers here). Idempotent; as root it installs the
# package, otherwise it prints the line to run.
set -euo pipefail

[[ -x /usr/bin/chromium ]] && exit 0
if [[ "$(id -u)" -ne 0 ]]; then
    echo "browser.sh: Chromium is missing; install it with:" >&2
    echo "sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }
[[ -x /usr/bin/chromium ]] || { echo "browser.sh: /usr/bin/chromium still missing after install" >&2; exit 1; }
