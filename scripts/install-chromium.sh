#!/usr/bin/env bash
# Install Debian's headless Chromium (/usr/bin/chromium), which WorkArena's validator, MiniWoB++'s cube and the HTML
# report's browser tests drive through Playwright, and Debian's chromedriver (/usr/bin/chromedriver, package
# chromium-driver, the same Chromium's version), which MiniWoB++'s own gymnasium environment drives through Selenium
# (`miniwob-gym`). Playwright's and Selenium's own browser downloads cannot run on these machines.
# Safe to run again: it installs only what is missing, and does nothing when both are already there.
set -euo pipefail
packages=()
if [ ! -x /usr/bin/chromium ]; then packages+=(chromium); fi
if [ ! -x /usr/bin/chromedriver ]; then packages+=(chromium-driver); fi
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "verimut: error: ${packages[*]} missing and apt-get is not available: install Debian's or your distribution's chromium and chromium-driver packages" >&2
  exit 2
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
/usr/bin/chromium --version
/usr/bin/chromedriver --version
