#!/usr/bin/env bash
# Install Debian's headless Chromium (/usr/bin/chromium), which WorkArena's validator and the HTML report's
# browser tests drive through Playwright. Playwright's own browser download cannot run on these machines.
# Safe to run again: it does nothing when /usr/bin/chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "verimut: error: /usr/bin/chromium is missing and apt-get is not available: install Debian's or your distribution's chromium package" >&2
  exit 2
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version
