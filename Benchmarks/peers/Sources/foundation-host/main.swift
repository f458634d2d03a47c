// Peer host: Foundation's `Process` and `Pipe`, requests encoded with `JSONEncoder`, answers read by the pipe's
// `readabilityHandler`, split into lines and decoded with `JSONDecoder`, each resuming the task that awaits it.
import Foundation
import PeerHarness
import Synchronization

struct Request: Encodable {
    var jsonrpc = "2.0"
    let id: Int
    let method: String
    let params: [String: String]
}

struct Response: Decodable {
    let id: Int
}

/// Requests awaiting their answer, by id; shared by the writers and the pipe's reading handler.
final class Pending: Sendable {
    private struct State {
        var nextID = 1
        var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = Mutex(State())

    func add(_ continuation: CheckedContinuation<Void, any Error>) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.waiting[state.nextID] = continuation
            return state.nextID
        }
    }

    func remove(_ id: Int) -> CheckedContinuation<Void, any Error>? {
        state.withLock { $0.waiting.removeValue(forKey: id) }
    }
}

final class Connection: Sendable {
    private let pending = Pending()
    private let toChild: FileHandle

    init(toChild: FileHandle, fromChild: FileHandle) {
        self.toChild = toChild
        let pending = pending
        let buffer = Mutex(Data())
        fromChild.readabilityHandler = { handle in
            let data = handle.availableData
            let lines: [Data] = buffer.withLock { buffer in
                buffer.append(data)
                var lines: [Data] = []
                while let newline = buffer.firstIndex(of: 0x0A) {
                    lines.append(buffer[buffer.startIndex..<newline])
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
                return lines
            }
            let decoder = JSONDecoder()
            for line in lines {
                guard let response = try? decoder.decode(Response.self, from: line) else { continue }
                pending.remove(response.id)?.resume()
            }
        }
    }

    func request(_ method: String) async throws {
        try await withCheckedThrowingContinuation { continuation in
            let id = pending.add(continuation)
            do {
                var line = try JSONEncoder().encode(Request(id: id, method: method, params: [:]))
                line.append(0x0A)
                try toChild.write(contentsOf: line)
            } catch {
                pending.remove(id)?.resume(throwing: error)
            }
        }
    }
}

let arguments = PeerArguments()
let child = try arguments.spawnChild()
let connection = Connection(
    toChild: child.toChild.fileHandleForWriting, fromChild: child.fromChild.fileHandleForReading)
try await measure(arguments) { try await connection.request("$/ping") }
try child.toChild.fileHandleForWriting.close()
child.process.waitUntilExit()
