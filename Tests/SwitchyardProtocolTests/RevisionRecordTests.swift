import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardTestSupport
import Testing

@Suite("tree/history records are bounded (§15.4)", .timeLimit(.minutes(1)))
struct RevisionRecordTests {
    let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")

    @Test(
        "a record keeps a chain's first 32 steps, the lowest 64 instances and 240 characters, and says how many it left out"
    )
    func bounds() throws {
        let steps = (0..<200).map { NavigationStep.route("sub", ["n": .int(Int64($0))]) }
        let instances = (1...10_000).map { InstanceID(Int64($0)) }
        let record = RevisionRecord(
            revision: 7, time: "2026-11-27T16:00:00.000Z", cause: .navigate, by: "control",
            summary: String(repeating: "x", count: 1_000), steps: steps, instances: instances)
        #expect(record.steps == Array(steps.prefix(32)))
        #expect(record.stepsOmitted == 168)
        #expect(record.instances == Array(instances.prefix(64)))
        #expect(record.instancesOmitted == 9_936)
        #expect(record.summary.count == 240)
        #expect(record.summary.hasSuffix("x…"))

        let encoded = try JSONValueEncoder().encode(record)
        #expect(try validator.validate(encoded, against: "tree.history.json#/$defs/RevisionRecord") == [])
        #expect(try Coding.decode(RevisionRecord.self, from: encoded) == record)
    }

    @Test("a record within the bounds is kept whole, without the omitted counts")
    func within() throws {
        let steps = (0..<32).map { NavigationStep.route("sub", ["n": .int(Int64($0))]) }
        let record = RevisionRecord(
            revision: 1, time: "2026-11-27T16:00:00.000Z", cause: .navigate,
            summary: String(repeating: "y", count: 240),
            steps: steps, instances: (1...64).map { InstanceID(Int64($0)) })
        #expect(record.steps?.count == 32 && record.stepsOmitted == nil)
        #expect(record.instances?.count == 64 && record.instancesOmitted == nil)
        #expect(record.summary == String(repeating: "y", count: 240))
        let encoded = try JSONValueEncoder().encode(record)
        guard case .object(let object) = encoded else {
            Issue.record("a record encodes as an object")
            return
        }
        #expect(object["stepsOmitted"] == nil && object["instancesOmitted"] == nil)
    }
}
