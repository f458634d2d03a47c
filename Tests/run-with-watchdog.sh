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

# On a hang the process tree is printed first. `swift test` holds the test bundle's output back while its output is
# a pipe (as in CI) and prints it when the bundle exits; and it starts the bundle in a process group of its own, out
# of reach of a signal to this group. So the bundle is found among the command's descendants and ended alone first
# (swift test then prints what it held: which tests started, which failed, "Time limit was exceeded"), the
# unfinished tests are read from the log, and then every descendant is killed (the hosts' guardians end their
# plugins when the hosts die).
descendants() {
    local child
    for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done
}

end_run() {
    echo
    echo "watchdog: $1; ending it."
    echo "watchdog: process tree:"
    ps -eo pid,ppid,pgid,stat,etime,args --forest | grep -v ' \[' || true
    local everyone bundles
    everyone=$(descendants "$pid")
    bundles=$(for p in $everyone; do ps -o pid=,args= -p "$p" 2>/dev/null; done | awk '$2 ~ /\.xctest$/ {print $1}')
    [ -n "$bundles" ] && kill -TERM $bundles 2>/dev/null
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
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
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 5
    kill -KILL -- "-$pid" $everyone 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
}

waited=0
while kill -0 "$pid" 2>/dev/null; do
    [ "$waited" -ge "$limit" ] && end_run "'$*' still running after ${limit} s"
    sleep 1
    waited=$((waited + 1))
done
wait "$pid"
