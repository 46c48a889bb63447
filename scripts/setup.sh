#!/usr/bin/env bash
# Installs what wgarray needs on a fresh machine: a Vulkan driver when none is present
# (Mesa's software driver lavapipe from Debian/Ubuntu packages, as root or with sudo) and
# the package itself, editable, with its test extras. Safe to run again: a second run
# finds the driver and only refreshes the pip install.
#
# As root it installs into the running python3. As another user it installs into the
# active virtual environment, or with --user where the Python allows it; otherwise it
# stops and prints the two commands that make a virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."

DRIVER_PACKAGES="mesa-vulkan-drivers libvulkan1"

# A Vulkan driver is present when the loader library is installed and at least one
# driver manifest (ICD json) is where the loader looks, or where VK_DRIVER_FILES /
# VK_ICD_FILENAMES point.
have_vulkan_loader() {
    if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
        return 0
    fi
    local lib
    for lib in /usr/lib/*/libvulkan.so.1 /usr/lib/libvulkan.so.1 /usr/lib64/libvulkan.so.1 \
               /usr/local/lib/libvulkan.so.1; do
        [ -e "$lib" ] && return 0
    done
    return 1
}

have_vulkan_driver() {
    local list entry manifest
    list="${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-}}"
    if [ -n "$list" ]; then
        IFS=: read -ra entries <<<"$list"
        for entry in "${entries[@]}"; do
            [ -f "$entry" ] && return 0
            for manifest in "$entry"/*.json; do [ -f "$manifest" ] && return 0; done
        done
    fi
    for entry in /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d /etc/vulkan/icd.d \
                 "${XDG_DATA_HOME:-$HOME/.local/share}/vulkan/icd.d"; do
        for manifest in "$entry"/*.json; do [ -f "$manifest" ] && return 0; done
    done
    return 1
}

missing_driver=""
if have_vulkan_loader && have_vulkan_driver; then
    echo "setup: Vulkan driver found"
elif ! command -v apt-get >/dev/null 2>&1; then
    missing_driver="install your GPU's Vulkan driver and the Vulkan loader, or Mesa's software driver lavapipe (Debian/Ubuntu: $DRIVER_PACKAGES; Fedora: mesa-vulkan-drivers vulkan-loader)"
elif [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "setup: no Vulkan driver found; installing $DRIVER_PACKAGES (lavapipe)${SUDO:+ with sudo}"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $DRIVER_PACKAGES >/dev/null
    if ! { have_vulkan_loader && have_vulkan_driver; }; then
        missing_driver="$DRIVER_PACKAGES installed, yet no loader or driver manifest (icd.d/*.json) was found"
    fi
else
    missing_driver="ask an administrator to run: apt-get install -y $DRIVER_PACKAGES   (installing a driver needs root; there is no sudo here)"
fi

# Where pip may install: root's python3, an active virtual environment, or the user's
# site-packages when the Python is not marked as managed by the system (PEP 668).
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: python3 has no pip. Make a virtual environment and rerun this script from it:" >&2
    echo "         python3 -m venv .venv && . .venv/bin/activate && bash scripts/setup.sh" >&2
    echo "       (on Debian/Ubuntu, python3 -m venv needs the package python3-venv)" >&2
    exit 1
fi
in_venv=$(python3 -c 'import sys; print(int(sys.prefix != sys.base_prefix))')
managed=$(python3 -c 'import os, sysconfig; print(int(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))')
PIP_TARGET=()
if [ "$(id -u)" -ne 0 ] && [ "$in_venv" -eq 0 ]; then
    if [ "$managed" -eq 1 ]; then
        echo "setup: this python3 ($(command -v python3)) is managed by the system and you are not root." >&2
        echo "       Make a virtual environment, then rerun this script (and later commands) from it:" >&2
        echo "         python3 -m venv .venv && . .venv/bin/activate && bash scripts/setup.sh" >&2
        echo "       (on Debian/Ubuntu, python3 -m venv needs the package python3-venv)" >&2
        [ -z "$missing_driver" ] || echo "setup: no Vulkan driver found: $missing_driver" >&2
        exit 1
    fi
    PIP_TARGET=(--user)
fi
echo "setup: installing wgarray (editable, with test extras) into $(python3 -c 'import sys; print(sys.prefix)')${PIP_TARGET:+ (--user)}"
python3 -m pip install -q --disable-pip-version-check "${PIP_TARGET[@]}" -e ".[test]"

if [ -n "$missing_driver" ]; then
    echo "setup: wgarray is installed, but no Vulkan driver was found: $missing_driver" >&2
    exit 1
fi
echo "setup: done; 'python3 -m wgarray info' shows the device"
