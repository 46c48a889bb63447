#!/usr/bin/env bash
# The test suite, in both device modes: full features, then as a device without
# shader-f64/shader-int64/subgroup sees it (float64 absent, int64 emulated, kernels on
# their workgroup-memory paths).
set -euo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
python3 -m pytest tests -q -p no:cacheprovider "$@"
WGARRAY_DISABLE_FEATURES=shader-f64,shader-int64,subgroup python3 -m pytest tests -q -p no:cacheprovider "$@"
