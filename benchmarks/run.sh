#!/usr/bin/env bash
# Runs every pytest-benchmark suite in benchmarks/bench_*.py, saves the JSON under
# docs/results/ and writes the tables (and, with matplotlib, the plots) into
# docs/performance.md.
#
#   bash benchmarks/run.sh [--no-report] [LABEL] [pytest arguments...]   LABEL defaults to "h200"
#   WGARRAY_BENCH_SCALE=small bash benchmarks/run.sh lavapipe-smoke    # small sizes, a minute or two
set -uo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
report=1
if [ "${1:-}" = "--no-report" ]; then report=0; shift; fi
label=${1:-h200}
shift || true
out="docs/results/bench_${label}.json"
mkdir -p docs/results
# Every bench_*.py is collected (test_* functions in them are the cases); a file that
# fails to import is reported without stopping the others.
# The whole folder unless the arguments name files or folders of their own.
where=benchmarks
for arg in "$@"; do
    case "$arg" in -*) ;; *) [ -e "${arg%%::*}" ] && where="" ;; esac
done
python3 -m pytest $where -o python_files='bench_*.py' -p no:cacheprovider -q \
    --continue-on-collection-errors --benchmark-only --benchmark-json "$out" \
    --benchmark-sort=name --benchmark-columns=median,min,max,rounds "$@"
status=$?
if [ "$report" -eq 1 ] && [ -s "$out" ]; then
    python3 benchmarks/report.py "$out" --label "$label" || status=1
fi
exit $status
