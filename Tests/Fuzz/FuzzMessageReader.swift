// libFuzzer entry point for the host's JSON-lines parsing (LineFramer, the strict JSON parser, the JSON-RPC
// envelope). Built outside SwiftPM by run-libfuzzer.sh: the input is split into chunks at the positions its first
// bytes choose (partial reads), fed to a MessageReader, and every event is consumed; the end-of-stream path runs
// too. A crash, a hang or a sanitizer report is a bug.

import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessageReader(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    var reader = MessageReader(maxLineLength: 4_096, maxDepth: 64)
    // The first byte picks a chunk size, so the same lines arrive split in different places.
    let chunk = max(1, Int(bytes.first ?? 1) % 97)
    var offset = 0
    var events = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        reader.append(Array(bytes[offset..<end]))
        while let event = reader.next() {
            events += 1
            if case .message(let message, _) = event {
                // What parses must encode, and what it encodes must parse back to the same message.
                let line = message.encodedLine()
                var again = MessageReader(maxLineLength: line.count + 1)
                again.append(line)
                guard case .message(let reparsed, _)? = again.next(), reparsed == message else { abort() }
            }
        }
        offset = end
    }
    if reader.finish() != nil { events += 1 }
    return events >= 0 ? 0 : 1
}
