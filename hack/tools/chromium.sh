#!/usr/bin/env bash
# Chromium for the console's browser test (test/e2e TestConsole): Debian's
# package, installed with apt when missing (CI runs as root on a fresh
# Debian machine; elsewhere, with sudo if there is one).
set -euo pipefail
for b in chromium chromium-browser; do
  command -v "$b" >/dev/null && exit 0
done
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "hack/tools/chromium.sh: Chromium is missing and this user cannot install it: run apt-get install -y chromium as root" >&2
  exit 1
fi
echo "installing Chromium (Debian's chromium package) for the console's browser test" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >/dev/null
