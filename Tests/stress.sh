#!/usr/bin/env bash
# Runs the README's test command N times, with HOGS busy loops (`yes > /dev/null`) beside it, and prints a summary:
# how many runs passed, failed and hung, and which tests failed. A flaky test is a broken build; this is how we
# look for one.
#
#   Tests/stress.sh [N=10] [HOGS=0] [LIMIT_SECONDS=900]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"; hogs="${2:-0}"; limit="${3:-900}"
out="${STRESS_OUTPUT:-/tmp/switchyard-stress-$$}"
mkdir -p "$out"

hog_pids=()
stop_hogs() { for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; done; hog_pids=(); }
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT TERM

swift build --build-tests >/dev/null 2>&1 || { echo "stress: the build failed"; exit 1; }
for _ in $(seq 1 "$hogs"); do yes > /dev/null & hog_pids+=($!); done

passed=0; failed=0; hung=0
for run in $(seq 1 "$runs"); do
    log="$out/run-$run.log"
    start=$(date +%s)
    Tests/run-with-watchdog.sh "$limit" "$log" swift test > /dev/null 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    if [ $status -eq 0 ]; then
        passed=$((passed + 1)); verdict="passed"
    elif [ $status -eq 124 ]; then
        hung=$((hung + 1)); verdict="HUNG"
    else
        failed=$((failed + 1)); verdict="FAILED ($status)"
    fi
    echo "stress: run $run/$runs with $hogs hog(s): $verdict in ${seconds} s"
    if [ $status -ne 0 ]; then grep -E '✘ Test .* (failed|recorded)' "$log" | head -20 | sed 's/^/    /'; fi
done
stop_hogs
echo "stress: $runs runs with $hogs hog(s): $passed passed, $failed failed, $hung hung (logs in $out)"
[ $failed -eq 0 ] && [ $hung -eq 0 ]
