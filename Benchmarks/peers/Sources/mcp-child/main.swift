// Peer child for the MCP host: an MCP Swift SDK `Server` on stdin/stdout; `ping` is answered by the SDK itself.
import MCP

let server = Server(name: "switchyard-bench-peer", version: "1.0.0")
try await server.start(transport: StdioTransport())
await server.waitUntilCompleted()
