#!/usr/bin/env bash
# Installs what wgarray needs on a fresh machine: a Vulkan driver when none is present
# (Mesa's lavapipe from Debian/Ubuntu packages, when we are root or have sudo) and the
# package itself with its test extras.
set -euo pipefail
cd "$(dirname "$0")/.."

have_vulkan() {
    ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json "${VK_DRIVER_FILES:-/nonexistent}" >/dev/null 2>&1
}

if ! have_vulkan; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        echo "setup: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe)"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
    else
        echo "setup: no Vulkan driver found and no apt-get: install your GPU's Vulkan driver," >&2
        echo "       or Mesa's lavapipe (package mesa-vulkan-drivers or similar), then rerun." >&2
        exit 1
    fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
