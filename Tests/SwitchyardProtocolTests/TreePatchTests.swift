import SwitchyardProtocol
import Testing

/// `TreeSnapshot.applying(_:)`: the host's whole-instance patches on the structs, anything else RFC 6902 allows
/// through the snapshot's JSON, and refusals that name the operation.
@Suite("Tree patches (tree/changed with deltas)", .timeLimit(.minutes(1)))
struct TreePatchTests {
    static func instance(_ id: Int64, _ route: String = "home") -> InstanceSnapshot {
        InstanceSnapshot(
            id: InstanceID(id), plugin: "p", type: "t", kind: .stack,
            root: EntrySnapshot(
                entry: EntryID(id), route: route, transition: .root, content: .screen(ScreenDescriptor(name: route))),
            entries: [])
    }

    static let base = TreeSnapshot(
        revision: 4, root: InstanceID(1), instances: [instance(1), instance(2), instance(3)])

    static func change(_ patch: [JSONPatchOperation], base: UInt64 = 4) -> TreeChangedNotification.Params {
        TreeChangedNotification.Params(revision: 5, snapshot: nil, base: base, patch: patch)
    }

    @Test("whole instances are replaced, removed and added in order, and the revision follows")
    func wholeInstances() throws {
        let patched = try Self.base.applying(
            Self.change([
                JSONPatchOperation(op: "replace", path: "/revision", value: 5),
                JSONPatchOperation(
                    op: "replace", path: "/instances/0", value: try Coding.encode(Self.instance(1, "other"))),
                JSONPatchOperation(op: "remove", path: "/instances/1"),
                JSONPatchOperation(op: "add", path: "/instances/2", value: try Coding.encode(Self.instance(9))),
            ]))
        #expect(
            patched
                == TreeSnapshot(
                    revision: 5, root: InstanceID(1),
                    instances: [Self.instance(1, "other"), Self.instance(3), Self.instance(9)]))
    }

    @Test("any other RFC 6902 operation applies through JSON: a member deep in an instance, move, copy, test, the root")
    func generalPatch() throws {
        let patched = try Self.base.applying(
            Self.change([
                JSONPatchOperation(op: "test", path: "/instances/1/root/route", value: "home"),
                JSONPatchOperation(op: "replace", path: "/instances/1/root/route", value: "changed"),
                JSONPatchOperation(op: "move", path: "/instances/0", from: "/instances/2"),
                JSONPatchOperation(op: "copy", path: "/instances/3", from: "/instances/0"),
                JSONPatchOperation(op: "remove", path: "/instances/3"),
                JSONPatchOperation(op: "remove", path: "/root"),
                JSONPatchOperation(op: "replace", path: "/revision", value: 5),
            ]))
        var changed = Self.instance(2)
        changed.root?.route = "changed"
        #expect(
            patched == TreeSnapshot(revision: 5, root: nil, instances: [Self.instance(3), Self.instance(1), changed]))
    }

    @Test(
        "the root is added, replaced and removed (on the struct, as the host sends it); removing or replacing a root that is not there is refused"
    )
    func root() throws {
        let rootless = try Self.base.applying(Self.change([JSONPatchOperation(op: "remove", path: "/root")]))
        #expect(rootless.root == nil && rootless.instances == Self.base.instances)
        let added = try rootless.applying(Self.change([JSONPatchOperation(op: "add", path: "/root", value: 3)]))
        #expect(added.root == InstanceID(3))
        let replaced = try added.applying(Self.change([JSONPatchOperation(op: "replace", path: "/root", value: 2)]))
        #expect(replaced.root == InstanceID(2))
        for operation in [
            JSONPatchOperation(op: "remove", path: "/root"), JSONPatchOperation(op: "replace", path: "/root", value: 2),
        ] {
            #expect(throws: ResponseError.self, "\(operation.op) of a missing root") {
                try rootless.applying(Self.change([operation]))
            }
        }
    }

    @Test(
        "array indices are digits as RFC 6901 writes them: '-1', '+1' and '01' are refused, not read as the last or second element"
    )
    func strictIndices() {
        for path in ["/instances/-1", "/instances/+1", "/instances/01", "/instances/ 1"] {
            #expect(throws: ResponseError.self, "remove \(path)") {
                try Self.base.applying(Self.change([JSONPatchOperation(op: "remove", path: path)]))
            }
        }
    }

    @Test("a patch for another revision, an index out of range, a failed test and an unknown op are refused by index")
    func refusals() {
        #expect(throws: ResponseError.self) { try Self.base.applying(Self.change([], base: 3)) }
        for (operation, reason) in [
            (JSONPatchOperation(op: "remove", path: "/instances/7"), "patch operation 0 (remove /instances/7)"),
            (JSONPatchOperation(op: "test", path: "/revision", value: 9), "test failed"),
            (JSONPatchOperation(op: "frobnicate", path: "/revision"), "unknown op"),
            (JSONPatchOperation(op: "add", path: "/instances/1", value: "not an instance"), "not an instance snapshot"),
        ] {
            do {
                _ = try Self.base.applying(Self.change([operation]))
                Issue.record("\(operation.op) \(operation.path) applied")
            } catch {
                #expect(error.message.contains(reason), "\(error.message)")
            }
        }
        // A whole snapshot needs no base.
        #expect(
            (try? Self.base.applying(TreeChangedNotification.Params(revision: 9, snapshot: Self.base))) == Self.base)
    }
}
