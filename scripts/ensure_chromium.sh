#!/usr/bin/env bash
# Make sure Debian's headless-capable Chromium is installed (for the replay HTML browser test).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo) and
# Debian's package archive; prints one line and exits non-zero when it cannot install.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        echo "ensure_chromium: /usr/bin/chromium is missing and we are not root" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null

if [ ! -x /usr/bin/chromium ]; then
    echo "ensure_chromium: apt-get finished but /usr/bin/chromium is still missing" >&2
    exit 1
fi
