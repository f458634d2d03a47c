// Peer child for the Foundation host: `readLine`, `JSONDecoder`, `JSONEncoder`, one write per answer.
import Foundation

struct Request: Decodable {
    let id: Int
    let method: String
}

struct Response: Encodable {
    var jsonrpc = "2.0"
    let id: Int
    var result: [String: String] = [:]
}

let decoder = JSONDecoder()
let encoder = JSONEncoder()
while let line = readLine() {
    let request = try decoder.decode(Request.self, from: Data(line.utf8))
    var answer = try encoder.encode(Response(id: request.id))
    answer.append(0x0A)
    try FileHandle.standardOutput.write(contentsOf: answer)
}
