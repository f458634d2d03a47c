import Glibc
import SwitchyardSystem
import SwitchyardUV
import Testing

@Suite("Errors read the same from libuv and from the syscall layer", .timeLimit(.minutes(1)))
struct UVErrorTests {
    /// Every errno libuv names (uv.h's `UV_ERRNO_MAP`), so the CLI's messages and the tests' expectations do not
    /// depend on which layer made the call.
    static let codes: [Int32] = Array(1...133)

    @Test("SystemError's name and text are libuv's for every errno libuv maps; UVError(SystemError) keeps both")
    func sameWords() {
        for code in Self.codes {
            let system = SystemError(errno: code, operation: "op")
            let uv = UVError(errno: code, operation: "op")
            // Codes libuv does not map it calls "Unknown system error -N"; this layer says UNKNOWN.
            guard !uv.name.hasPrefix("Unknown system error") else { continue }
            #expect(system.description == uv.description, "errno \(code)")
            #expect(system.name == uv.name, "errno \(code)")
            #expect(UVError(system) == uv)
        }
    }
}
