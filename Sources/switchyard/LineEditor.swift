import Dispatch
import SwitchyardSystem
import Synchronization

/// The prompt's line editor, as shells behave: insert, backspace, Delete, left/right, Home/End (Ctrl-A/E), up/down
/// through the history, Ctrl-U clears, Ctrl-C abandons the line (never quits), Ctrl-D on an empty line ends input,
/// Tab completes. Text from elsewhere (``announce(revision:_:)``) is printed above the line being typed, which is
/// then drawn again as it was.
///
/// Every write to the terminal happens under one lock, so an announcement never lands in the middle of an echo.
/// Keys are read on a Dispatch thread (a blocking `read`, kept off the Swift-concurrency pool).
final class LineEditor: Sendable {
    private struct State {
        var buffer: [Character] = []
        var cursor = 0
        var reading = false
        /// The newest tree revision the user has seen (printed after a command, or announced).
        var shownRevision: UInt64 = 0
        /// Announcements that came while no line was being read, printed when the next one starts.
        var pending: [(revision: UInt64?, text: String)] = []
        var history: [String] = []
    }

    let prompt: String
    private let state = Mutex(State())
    private let completer: @Sendable (String) -> (start: Int, candidates: [String])
    private let queue = DispatchQueue(label: "switchyard.prompt")

    init(prompt: String, completer: @escaping @Sendable (String) -> (start: Int, candidates: [String])) {
        self.prompt = prompt
        self.completer = completer
    }

    /// The user has seen the tree at `revision`: announcements of it (or older) are stale.
    func shown(revision: UInt64) {
        state.withLock { $0.shownRevision = max($0.shownRevision, revision) }
    }

    /// Prints `text` above the line being typed (or before the next prompt, if none is). With a `revision`, it is
    /// a tree change, dropped if the user already saw that revision or, while waiting, replaced by a newer one.
    func announce(revision: UInt64?, _ text: String) {
        state.withLock { state in
            if let revision {
                guard revision > state.shownRevision else { return }
                if !state.reading {
                    state.pending.removeAll { $0.revision != nil }
                    state.pending.append((revision, text))
                    return
                }
                state.shownRevision = revision
            } else if !state.reading {
                state.pending.append((nil, text))
                return
            }
            StandardOutput.write("\r\u{1B}[2K" + (text.hasSuffix("\n") ? text : text + "\n") + line(state))
        }
    }

    /// Writes a log line (to stderr) above the line being typed, which is then drawn again; while no line is being
    /// read (a command runs), as any log line. Never held back: a log line tells what happens now.
    func log(_ line: String) {
        state.withLock { state in
            guard state.reading else {
                StandardError.write(line)
                return
            }
            StandardOutput.write("\r\u{1B}[2K")
            StandardError.write(line.hasSuffix("\n") ? line : line + "\n")
            StandardOutput.write(self.line(state))
        }
    }

    /// Reads one line; nil at end of input (Ctrl-D on an empty line, or stdin closed).
    func readLine() async -> String? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.readBlocking()) }
        }
    }

    private func line(_ state: State) -> String {
        var text = prompt + String(state.buffer)
        if state.cursor < state.buffer.count { text += "\u{1B}[\(state.buffer.count - state.cursor)D" }
        return text
    }

    private func readBlocking() -> String? {
        guard let terminal = Terminal(fd: 0) else {
            StandardOutput.write(prompt)
            return Swift.readLine()
        }
        defer {
            terminal.restore()
            state.withLock { $0.reading = false }
        }
        state.withLock { state in
            state.buffer = []
            state.cursor = 0
            state.reading = true
            for (revision, text) in state.pending where revision.map({ $0 > state.shownRevision }) ?? true {
                StandardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
                if let revision { state.shownRevision = revision }
            }
            state.pending.removeAll()
            StandardOutput.write(prompt)
        }
        var historyIndex = state.withLock { $0.history.count }
        var draft: [Character] = []
        while let byte = terminal.readByte() {
            let done: String?? = state.withLock { state -> String?? in
                func redraw() { StandardOutput.write("\r\u{1B}[2K" + line(state)) }
                switch byte {
                case 13, 10:
                    StandardOutput.write("\r\n")
                    let text = String(state.buffer)
                    if !text.isEmpty && state.history.last != text { state.history.append(text) }
                    return .some(text)
                case 127, 8:
                    guard state.cursor > 0 else { return nil }
                    state.buffer.remove(at: state.cursor - 1)
                    state.cursor -= 1
                    redraw()
                case 3:
                    // Ctrl-C abandons the line, as in a shell; quitting is Ctrl-D or `quit`.
                    StandardOutput.write("^C\r\n" + (state.buffer.isEmpty ? "(Ctrl-D or 'quit' exits)\r\n" : ""))
                    state.buffer = []
                    state.cursor = 0
                    historyIndex = state.history.count
                    StandardOutput.write(prompt)
                case 4:
                    if state.buffer.isEmpty {
                        StandardOutput.write("\r\n")
                        return .some(nil)
                    }
                    if state.cursor < state.buffer.count {
                        state.buffer.remove(at: state.cursor)
                        redraw()
                    }
                case 9:
                    complete(&state)
                case 1:
                    state.cursor = 0
                    redraw()
                case 5:
                    state.cursor = state.buffer.count
                    redraw()
                case 21:
                    state.buffer.removeAll()
                    state.cursor = 0
                    redraw()
                case 27:
                    // CSI (`ESC [`) or, in the terminal's application cursor mode, SS3 (`ESC O`).
                    guard let intro = terminal.readByte(), intro == UInt8(ascii: "[") || intro == UInt8(ascii: "O"),
                        let key = terminal.readByte()
                    else { return nil }
                    switch key {
                    case UInt8(ascii: "A"), UInt8(ascii: "B"):
                        if historyIndex == state.history.count { draft = state.buffer }
                        historyIndex =
                            key == UInt8(ascii: "A")
                            ? max(0, historyIndex - 1) : min(state.history.count, historyIndex + 1)
                        state.buffer = historyIndex == state.history.count ? draft : Array(state.history[historyIndex])
                        state.cursor = state.buffer.count
                    case UInt8(ascii: "C"): state.cursor = min(state.buffer.count, state.cursor + 1)
                    case UInt8(ascii: "D"): state.cursor = max(0, state.cursor - 1)
                    case UInt8(ascii: "H"): state.cursor = 0
                    case UInt8(ascii: "F"): state.cursor = state.buffer.count
                    case UInt8(ascii: "3"):
                        // Delete: `ESC [ 3 ~`.
                        if terminal.readByte() == UInt8(ascii: "~"), state.cursor < state.buffer.count {
                            state.buffer.remove(at: state.cursor)
                        }
                    default: break
                    }
                    redraw()
                case 32...126:
                    state.buffer.insert(Character(Unicode.Scalar(byte)), at: state.cursor)
                    state.cursor += 1
                    redraw()
                case 0xC0...0xF7:
                    // A UTF-8 sequence: read its continuation bytes and insert the character.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                    var bytes = [byte]
                    for _ in 1..<length { if let next = terminal.readByte() { bytes.append(next) } }
                    if let character = String(validating: bytes, as: UTF8.self)?.first {
                        state.buffer.insert(character, at: state.cursor)
                        state.cursor += 1
                        redraw()
                    }
                default:
                    break
                }
                return nil
            }
            if let done { return done }
        }
        return nil
    }

    /// Tab: one candidate replaces the word (and a space follows, unless it ends in `/`); several extend it to
    /// their common prefix, or, when that adds nothing, are listed above the line.
    private func complete(_ state: inout State) {
        let (start, candidates) = completer(String(state.buffer[..<state.cursor]))
        guard let first = candidates.first else {
            StandardOutput.write("\u{07}")
            return
        }
        let typed = state.cursor - start
        var replacement = Array(first)
        if candidates.count == 1 {
            if !first.hasSuffix("/") { replacement.append(" ") }
        } else {
            for candidate in candidates.dropFirst() {
                let other = Array(candidate)
                var common = 0
                while common < min(replacement.count, other.count), replacement[common] == other[common] { common += 1 }
                replacement = Array(replacement[..<common])
            }
            if replacement.count <= typed {
                StandardOutput.write("\r\u{1B}[2K" + candidates.joined(separator: "  ") + "\n" + line(state))
                return
            }
        }
        state.buffer.replaceSubrange(start..<state.cursor, with: replacement)
        state.cursor = start + replacement.count
        StandardOutput.write("\r\u{1B}[2K" + line(state))
    }
}
