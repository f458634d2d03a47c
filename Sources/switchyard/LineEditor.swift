import SwitchyardUV

/// A minimal line editor for the interactive prompt: insert, backspace, left/right, Home/End, up/down through the
/// history, Ctrl-U to clear, Ctrl-C or Ctrl-D on an empty line to quit.
final class LineEditor {
    private(set) var history: [String] = []

    /// Reads one line; nil at end of input or when the user quits.
    func read(prompt: String) -> String? {
        guard let terminal = Terminal(fd: 0) else {
            StandardOutput.write(prompt)
            return readLine()
        }
        defer { terminal.restore() }
        var buffer: [Character] = []
        var cursor = 0
        var historyIndex = history.count
        var draft: [Character] = []
        func redraw() {
            var text = "\r\u{1B}[2K" + prompt + String(buffer)
            if cursor < buffer.count { text += "\u{1B}[\(buffer.count - cursor)D" }
            StandardOutput.write(text)
        }
        StandardOutput.write(prompt)
        while let byte = terminal.readByte() {
            switch byte {
            case 13, 10:
                StandardOutput.write("\r\n")
                let line = String(buffer)
                if !line.isEmpty && history.last != line { history.append(line) }
                return line
            case 127, 8:
                if cursor > 0 {
                    buffer.remove(at: cursor - 1)
                    cursor -= 1
                    redraw()
                }
            case 3, 4:
                if buffer.isEmpty || byte == 3 {
                    StandardOutput.write(byte == 3 ? "^C\r\n" : "\r\n")
                    return nil
                }
            case 1:
                cursor = 0
                redraw()
            case 5:
                cursor = buffer.count
                redraw()
            case 21:
                buffer.removeAll()
                cursor = 0
                redraw()
            case 27:
                // CSI (`ESC [`) or, in the terminal's application cursor mode, SS3 (`ESC O`).
                guard let intro = terminal.readByte(), intro == UInt8(ascii: "[") || intro == UInt8(ascii: "O"),
                    let key = terminal.readByte()
                else { continue }
                switch key {
                case UInt8(ascii: "A"), UInt8(ascii: "B"):
                    if historyIndex == history.count { draft = buffer }
                    historyIndex = key == UInt8(ascii: "A") ? max(0, historyIndex - 1) : min(history.count, historyIndex + 1)
                    buffer = historyIndex == history.count ? draft : Array(history[historyIndex])
                    cursor = buffer.count
                case UInt8(ascii: "C"): cursor = min(buffer.count, cursor + 1)
                case UInt8(ascii: "D"): cursor = max(0, cursor - 1)
                case UInt8(ascii: "H"): cursor = 0
                case UInt8(ascii: "F"): cursor = buffer.count
                default: break
                }
                redraw()
            case 32...126:
                buffer.insert(Character(Unicode.Scalar(byte)), at: cursor)
                cursor += 1
                redraw()
            case 0xC0...0xF7:
                // A UTF-8 sequence: read its continuation bytes and insert the character.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                var bytes = [byte]
                for _ in 1..<length { if let next = terminal.readByte() { bytes.append(next) } }
                if let character = String(validating: bytes, as: UTF8.self)?.first {
                    buffer.insert(character, at: cursor)
                    cursor += 1
                    redraw()
                }
            default:
                break
            }
        }
        return nil
    }
}
