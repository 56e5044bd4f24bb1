#!/usr/bin/env bash
# Installs the Debian packages trawl's tests and demo use, only when missing.
set -euo pipefail
need=()
for pkg in "$@"; do need+=("$pkg"); done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
missing=()
for pkg in "${need[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
