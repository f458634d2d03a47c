import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardTestSupport
import Testing

@Suite("tree/history records are bounded (§15.4)", .timeLimit(.minutes(1)))
struct RevisionRecordTests {
    let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")

    @Test(
        "a record keeps a chain's first 16 steps, the lowest 32 instances and 240 characters, and says how many it left out"
    )
    func bounds() throws {
        let steps = (0..<200).map { NavigationStep.route("sub", ["n": .int(Int64($0))]) }
        let instances = (1...10_000).map { InstanceID(Int64($0)) }
        let record = RevisionRecord(
            revision: 7, time: "2026-11-27T16:00:00.000Z", cause: .navigate, by: "control",
            summary: String(repeating: "x", count: 1_000), steps: steps, instances: instances)
        #expect(record.steps == Array(steps.prefix(16)))
        #expect(record.stepsOmitted == 184)
        #expect(record.instances == Array(instances.prefix(32)))
        #expect(record.instancesOmitted == 9_968)
        #expect(record.summary.unicodeScalars.count == 240)
        #expect(record.summary.hasSuffix("x…"))

        let encoded = try JSONValueEncoder().encode(record)
        #expect(try validator.validate(encoded, against: "tree.history.json#/$defs/RevisionRecord") == [])
        #expect(try Coding.decode(RevisionRecord.self, from: encoded) == record)

        // A summary of combining marks: 500 characters of 2 code points each, cut in code points as the schema counts.
        let marked = RevisionRecord(
            revision: 8, time: "2026-11-27T16:00:00.000Z", cause: .navigate,
            summary: String(repeating: "e\u{301}", count: 500))
        #expect(marked.summary.unicodeScalars.count == 240)
        var overlong = marked
        overlong.summary += "x"
        overlong.steps = Array(repeating: .route("sub"), count: 17)
        #expect(
            try validator.validate(
                try JSONValueEncoder().encode(overlong), against: "tree.history.json#/$defs/RevisionRecord"
            ).count == 2,
            "the schema bounds what the init bounds")
        #expect(
            try validator.validate(
                try JSONValueEncoder().encode(marked), against: "tree.history.json#/$defs/RevisionRecord") == [])
    }

    @Test("a record within the bounds is kept whole, without the omitted counts")
    func within() throws {
        let steps = (0..<16).map { NavigationStep.route("sub", ["n": .int(Int64($0))]) }
        let record = RevisionRecord(
            revision: 1, time: "2026-11-27T16:00:00.000Z", cause: .navigate,
            summary: String(repeating: "y", count: 240),
            steps: steps, instances: (1...32).map { InstanceID(Int64($0)) })
        #expect(record.steps?.count == 16 && record.stepsOmitted == nil)
        #expect(record.instances?.count == 32 && record.instancesOmitted == nil)
        #expect(record.summary == String(repeating: "y", count: 240))
        let encoded = try JSONValueEncoder().encode(record)
        guard case .object(let object) = encoded else {
            Issue.record("a record encodes as an object")
            return
        }
        #expect(object["stepsOmitted"] == nil && object["instancesOmitted"] == nil)
    }
}
