#!/usr/bin/env bash
# Installs Debian packages with apt-get, as root or through sudo: what make and the Lambda image's
# scripts install when missing (chromium for the console's browser test, docker.io, debootstrap).
#
#   infra/apt-install.sh "WHAT NEEDS THEM: WHAT TO DO INSTEAD" PACKAGE...
#
# Without apt-get (or, not as root, without sudo), or when apt-get fails, it stops with one line
# that names what needs the packages and what to do instead.
set -euo pipefail

why=$1
shift
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

if ! command -v apt-get > /dev/null || { [ -n "$SUDO" ] && ! command -v sudo > /dev/null; }; then
    echo "$why (this machine has no apt-get${SUDO:+ or no sudo} to install $*)" >&2
    exit 1
fi
echo "==> apt-get install $*${SUDO:+ (through sudo)}"
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    || ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" > /dev/null; then
    echo "$why (apt-get could not install $*)" >&2
    exit 1
fi
