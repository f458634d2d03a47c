#!/usr/bin/env bash
# Runs a command (the README's test command) under a time limit. If it is still running at the limit, prints what
# a person would need to diagnose the hang before ending it: the tests that started and never finished, and the
# process tree below it; then fails. Used by .ci/run and Tests/stress.sh.
#
#   Tests/run-with-watchdog.sh SECONDS LOGFILE COMMAND ARGS...
set -uo pipefail
limit="$1"; log="$2"; shift 2

# The command gets its own process group, so everything it started can be ended together.
setsid "$@" > >(tee "$log") 2>&1 &
pid=$!

waited=0
while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
        echo
        echo "watchdog: '$*' still running after ${limit} s; ending it."
        echo "watchdog: tests that started and did not finish:"
        # Swift Testing prints «◇ Test "name" started.» and «✔/✘ Test "name" passed/failed…»; XCTest "Test Case '…' started/passed/failed".
        python3 - "$log" <<'PY'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r'◇ Test (".*?"|\S+\(\)) started', line)
    if m: started.append(m.group(1))
    m = re.search(r'[✔✘] Test (".*?"|\S+\(\)) (passed|failed|skipped|recorded)', line)
    if m and ("passed" in line or "failed" in line or "skipped" in line): ended.add(m.group(1))
    m = re.search(r"Test Case '(.*?)' started", line)
    if m: started.append(m.group(1))
    m = re.search(r"Test Case '(.*?)' (passed|failed)", line)
    if m: ended.add(m.group(1))
for name in started:
    if name not in ended: print("  " + name)
PY
        echo "watchdog: process tree:"
        ps -eo pid,ppid,pgid,stat,etime,args --forest | grep -v ' \[' || true
        kill -TERM -- "-$pid" 2>/dev/null
        sleep 5
        kill -KILL -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        exit 124
    fi
    sleep 1
    waited=$((waited + 1))
done
wait "$pid"
