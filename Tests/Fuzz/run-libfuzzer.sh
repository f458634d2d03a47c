#!/usr/bin/env bash
# Coverage-guided fuzzing of the host's JSON-lines parsing with libFuzzer (Swift's -sanitize=fuzzer, plus
# AddressSanitizer). Not part of `swift test`, which runs a bounded random/mutation fuzz instead
# (Tests/SwitchyardProtocolTests/FuzzTests.swift).
#
#   Tests/Fuzz/run-libfuzzer.sh [SECONDS] [extra libFuzzer flags...]
#
# Builds .build-fuzz/fuzz-message-reader from Sources/SwitchyardProtocol and FuzzMessageReader.swift, seeds the
# corpus with the protocol transcripts and the JSONTestSuite cases, and runs for SECONDS (default 60). Crashes are
# written to .build-fuzz/ as crash-* files; rerun one with: .build-fuzz/fuzz-message-reader CRASH-FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"; shift || true
out=.build-fuzz
mkdir -p "$out/corpus"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name SwitchyardProtocol -swift-version 6 \
    $(find Sources/SwitchyardProtocol -name '*.swift') Tests/Fuzz/FuzzMessageReader.swift \
    -o "$out/fuzz-message-reader"
# Seeds: every transcript line, and every JSONTestSuite document as one line.
i=0
for file in Protocol/transcripts/*.jsonl; do
    while IFS= read -r line; do printf '%s\n' "$line" > "$out/corpus/transcript-$i"; i=$((i + 1)); done < "$file"
done
for file in Tests/Fixtures/JSONTestSuite/test_parsing/*.json; do
    { tr -d '\n' < "$file"; printf '\n'; } > "$out/corpus/suite-$(basename "$file")"
done
cd "$out"
exec ./fuzz-message-reader -max_total_time="$seconds" -max_len=8192 -timeout=5 "$@" corpus
