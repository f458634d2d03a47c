#!/bin/sh
# notes: a Switchyard coordinator plugin in POSIX sh and jq, written from Protocol/README.md alone (no SDK).
#
# The protocol logic is notes.jq; this script starts it as the plugin process: one jq reading stdin line by line
# (raw, so a line that is not JSON cannot stop it), writing one flushed answer per line on stdout, and ending at
# stdin's end of file. jq's own errors (not protocol output) go to stderr.
#
#   switchyard check-plugin -- sh Plugins/shell/notes.sh
exec jq -n -R -r --unbuffered -f "$(dirname "$0")/notes.jq"
