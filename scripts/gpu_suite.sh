#!/usr/bin/env bash
# The test suite and the benchmark suites on a GPU machine, each step under a time cap so
# that one step that runs long cannot take the others with it.
#
#   bash scripts/gpu_suite.sh tests   OUTDIR     # pytest -n 8 over tests/ -> OUTDIR/tests-gpu.txt
#   bash scripts/gpu_suite.sh linalg  OUTDIR     # host-path and linalg suites -> OUTDIR/*.json, *.txt
#   bash scripts/gpu_suite.sh apps    OUTDIR     # array ops, k-means, scikit-learn, SciPy -> OUTDIR/*.json
#   bash scripts/gpu_suite.sh conformance OUTDIR # the official suite on the GPU -> OUTDIR/gpu.*
#                                                  (needs .aat/array-api-tests, see conformance/README.md)
#
# Then, here: python benchmarks/report.py OUTDIR/bench_*.json --label h200
set -uo pipefail
cd "$(dirname "$0")/.."
part=${1:?usage: gpu_suite.sh tests|linalg|apps|conformance OUTDIR}
out=${2:?usage: gpu_suite.sh tests|linalg|apps|conformance OUTDIR}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} SCIPY_ARRAY_API=1
python3 -m wgarray info > "$out/info-$part.txt" 2>&1

bench() {  # bench CAP_SECONDS NAME FILE [pytest args...]
    local cap=$1 name=$2 file=$3
    shift 3
    timeout "$cap" python3 -m pytest "$file" -o python_files='bench_*.py' -p no:cacheprovider -q -s \
        --benchmark-only --benchmark-json "$out/bench_$name.json" --benchmark-sort=name \
        --benchmark-columns=median,min,max,rounds "$@" > "$out/bench_$name.txt" 2>&1
    echo "$name: exit $?"
}

case "$part" in
tests)
    # -v: each result is named as it ends, so a run that the cap stops still names its
    # failures (-q names them only in the closing summary, which the cap cuts)
    timeout "${TEST_CAP:-240}" python3 -m pytest tests -n 8 -v -p no:cacheprovider -rf --tb=line \
        > "$out/tests-gpu.txt" 2>&1
    echo "tests: exit $?"; grep -E " (FAILED|ERROR) " "$out/tests-gpu.txt" | head -n 40
    echo "$(grep -c " PASSED " "$out/tests-gpu.txt") passed, $(grep -c " FAILED " "$out/tests-gpu.txt") failed" \
        "so far"; tail -n 1 "$out/tests-gpu.txt" ;;
linalg)
    bench 60 host_path benchmarks/bench_host_path.py --benchmark-group-by=param:case
    timeout 50 python3 benchmarks/bench_linalg_eigen.py 64 256 512 1024 > "$out/linalg_eigen.txt" 2>&1
    echo "linalg_eigen: exit $?"
    # the large squares in a run of their own, so that a slow one cannot lose the rest
    bench 60 linalg_blocked benchmarks/bench_linalg_blocked.py --benchmark-group-by=param:case -k "not 4096 and not 3000x1000"
    bench 60 linalg_blocked_large benchmarks/bench_linalg_blocked.py --benchmark-group-by=param:case -k "4096 or 3000x1000" ;;
apps)
    bench 150 sklearn benchmarks/bench_sklearn.py
    bench 120 array_ops benchmarks/bench_array_ops.py
    bench 50 kmeans benchmarks/bench_kmeans.py
    bench 30 scipy benchmarks/bench_scipy.py ;;
conformance)
    timeout "${CONFORMANCE_CAP:-300}" python3 conformance/run.py --modes gpu --results-dir "$out" \
        --out "$out/conformance-gpu.md" > "$out/conformance-gpu.txt" 2>&1
    echo "conformance: exit $?"; tail -n 3 "$out/conformance-gpu.txt" ;;
*)
    echo "gpu_suite.sh: expected tests, linalg, apps or conformance, got '$part'" >&2; exit 2 ;;
esac
