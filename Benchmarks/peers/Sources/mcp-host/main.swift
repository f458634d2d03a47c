// Peer host: the MCP Swift SDK's `Client` over its `StdioTransport` on the pipes of a Foundation `Process`,
// MCP's own `ping` request (initialize handshake first, as every MCP client does).
import Foundation
import MCP
import PeerHarness
import SystemPackage

let arguments = PeerArguments()
let child = try arguments.spawnChild()
let transport = StdioTransport(
    input: FileDescriptor(rawValue: child.fromChild.fileHandleForReading.fileDescriptor),
    output: FileDescriptor(rawValue: child.toChild.fileHandleForWriting.fileDescriptor))
let client = Client(name: "switchyard-bench", version: "1.0.0")
try await client.connect(transport: transport)
try await measure(arguments) { try await client.ping() }
await client.disconnect()
child.process.terminate()
child.process.waitUntilExit()
