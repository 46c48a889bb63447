#!/usr/bin/env bash
# The test suite: first the device-free tests (tests/unit: renderers, launch records,
# cache keys) with every adapter request refused, then the device tests in both device
# modes: with every feature the device offers, and as a device without
# shader-f64/shader-int64/subgroup sees it (float64 absent, int64 emulated, kernels on
# their workgroup-memory paths). Extra arguments go to pytest in both device modes (e.g.
# -x, -k sort, tests/test_fft.py); the device-free step, seconds long, always runs whole.
# Ends with one summary line; exits non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
LOGDIR=$(mktemp -d)
trap 'rm -rf "$LOGDIR"' EXIT

MODE_NAMES=("device-free: tests/unit, no adapter" "all device features" "without shader-f64,shader-int64,subgroup")
MODE_ENV=("" "" "shader-f64,shader-int64,subgroup")

# "N word" counts from pytest's closing line, e.g. "3 failed, 120 passed, 2 skipped in 9.1s".
count() { grep -oE "[0-9]+ $2" "$1" | tail -n 1 | grep -oE '^[0-9]+' || echo 0; }

status=0
passed=0 failed=0 skipped=0 errors=0 xfailed=0
per_mode=()
start=$SECONDS
for i in 0 1 2; do
    echo "=== wgarray tests, step $((i + 1)) of 3: ${MODE_NAMES[$i]} ==="
    log="$LOGDIR/mode$i.log"
    mode_start=$SECONDS
    if [ "$i" -eq 0 ]; then
        WGARRAY_TEST_NO_DEVICE=1 python3 -m pytest -q -p no:cacheprovider tests/unit 2>&1 | tee "$log"
    elif [ -n "${MODE_ENV[$i]}" ]; then
        WGARRAY_DISABLE_FEATURES=${MODE_ENV[$i]} python3 -m pytest -q -p no:cacheprovider --ignore=tests/unit "$@" \
            2>&1 | tee "$log"
    else
        python3 -m pytest -q -p no:cacheprovider --ignore=tests/unit "$@" 2>&1 | tee "$log"
    fi
    rc=${PIPESTATUS[0]}
    # 5: pytest collected nothing (a -k that matches no test); not a failure.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then status=1; fi
    tail -n 1 "$log" > "$LOGDIR/last"
    p=$(count "$LOGDIR/last" passed); f=$(count "$LOGDIR/last" failed)
    s=$(count "$LOGDIR/last" skipped); e=$(count "$LOGDIR/last" error); x=$(count "$LOGDIR/last" xfailed)
    # pytest ended without its summary (a crash): count the step as one failure.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && [ $((f + e)) -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    errors=$((errors + e)); xfailed=$((xfailed + x))
    per_mode+=("step $((i + 1)) (${MODE_NAMES[$i]}): $p passed, $((f + e)) failed, $s skipped in $((SECONDS - mode_start)) s")
    echo
done

for line in "${per_mode[@]}"; do echo "$line"; done
echo "all steps, $((SECONDS - start)) s; xfailed: $xfailed"
echo "total: $passed passed, $((failed + errors)) failed, $skipped skipped"
exit $status
