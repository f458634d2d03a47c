import SwitchyardSystem

/// What the kernel and `execvp` would do with a plugin's executable, checked before it is started, so a mistake is
/// named for what it is rather than surfacing as a bare errno, a shell's syntax error or a plugin that never answers.
///
/// libuv starts a plugin with `execvp`, which runs a file the kernel refuses as `ENOEXEC` through `/bin/sh`: a Python
/// file whose `#!` line is hidden behind a UTF-8 byte-order mark is then run as a shell script (its backticks run
/// commands), although the manifest promises that commands never go through a shell. Each check here costs one
/// `open` and a read of 256 bytes, when the entry is resolved (the host's start, a reload, an upgrade).
enum ExecutablePreflight {
    /// Why `path` cannot be started as a program, with the fix; nil when it can. `searchPath` is the `PATH` a
    /// `#!/usr/bin/env NAME` line would search.
    static func problem(_ path: String, searchPath: String?) -> String? {
        guard FileSystem.exists(path) else { return "\(path) does not exist" }
        if FileSystem.isDirectory(path) { return "\(path) is a folder, not a program" }
        guard FileSystem.isExecutable(path) else {
            return
                "\(path) is not executable (no execute permission): `chmod +x \(path)`, or run it through its interpreter (\"command\": [\"python3\", \"…\"])"
        }
        guard let head = try? FileSystem.readPrefix(path, count: 256) else { return nil }
        if head.starts(with: [0xEF, 0xBB, 0xBF]) {
            return
                "\(path) starts with a UTF-8 byte-order mark, which hides its first line from the kernel: a `#!` line after it is not seen, and the file would be run by /bin/sh as a shell script; save it as UTF-8 without the mark"
        }
        if head.starts(with: [0x7F, 0x45, 0x4C, 0x46]) { return nil }  // an ELF program
        guard head.starts(with: Array("#!".utf8)) else {
            return
                "\(path) has no `#!` line and is not a compiled program: it would be run by /bin/sh; add a `#!` line (`#!/usr/bin/env python3`) or name its interpreter in the command"
        }
        let line = head.dropFirst(2).prefix { $0 != 0x0A }
        if line.last == 0x0D {
            return
                "\(path) has a Windows line ending (CRLF) on its `#!` line: the interpreter's name would end in a carriage return and not be found; convert the file to LF line endings (`sed -i 's/\\r$//' \(path)`)"
        }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let interpreter = words.first.map(String.init) else {
            return "\(path) has an empty `#!` line: name its interpreter (`#!/usr/bin/env python3`)"
        }
        guard FileSystem.isExecutable(interpreter) else {
            return
                "the `#!` line of \(path) names \(interpreter), which \(FileSystem.exists(interpreter) ? "is not executable" : "does not exist")"
        }
        if interpreter.hasSuffix("/env"), let program = words.dropFirst().first(where: { !$0.hasPrefix("-") }),
            !program.contains("/"), FileSystem.findExecutable(String(program), path: searchPath) == nil
        {
            return
                "the `#!` line of \(path) runs `env \(program)`, and \(program) is not in the PATH plugins get: install it, or name the interpreter by its full path in the command"
        }
        return nil
    }
}
