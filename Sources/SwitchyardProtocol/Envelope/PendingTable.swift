/// The requests an ``RPCEndpoint`` awaits answers to, by id.
///
/// The endpoint numbers its requests in order, so the table is mostly a window of slots indexed by `id - base`:
/// registering a request is an append and resolving one an index, with no hashing (the dictionary this replaces
/// cost ~1,500 instructions per round trip). Answers may come in any order: a resolved slot is emptied and the
/// window's front moves past empty slots. A request left unanswered while many after it are answered would keep
/// the window long, so once fewer than half of a long window's slots are live, the live ones move to a dictionary:
/// memory stays proportional to what is pending. Ids the endpoint did not hand out in order go to that dictionary.
struct PendingTable {
    typealias Request = RPCEndpoint.PendingRequest
    private var slots: [Request?] = []
    /// The first slot in use; `base` is its id.
    private var head = 0
    private var base: Int64 = 0
    private var live = 0
    private var spill: [RequestID: Request] = [:]

    var count: Int { live + spill.count }

    /// Ids past the window's end by at most this much extend it (the gap left by a request refused at once).
    private static let maxGap: Int64 = 64
    /// A window at least this long is compacted into the dictionary when under half full.
    private static let sparseLength = 256

    mutating func insert(_ request: Request) {
        guard case .number(let number) = request.id else {
            spill[request.id] = request
            return
        }
        if head == slots.count {
            // Empty: the window restarts at this id (one request at a time reuses its one slot).
            if slots.count == 1 {
                slots[0] = request
                head = 0
                base = number
                live += 1
                return
            }
            slots.removeAll(keepingCapacity: true)
            head = 0
            base = number
        }
        let end = base + Int64(slots.count - head)
        guard number >= end, number - end <= Self.maxGap else {
            spill[request.id] = request
            return
        }
        for _ in 0..<Int(number - end) { slots.append(nil) }
        slots.append(request)
        live += 1
    }

    private func slot(_ id: RequestID) -> Int? {
        guard case .number(let number) = id, number >= base, number - base < Int64(slots.count - head) else {
            return nil
        }
        let index = head + Int(number - base)
        return slots[index] == nil ? nil : index
    }

    func contains(_ id: RequestID) -> Bool {
        slot(id) != nil || (!spill.isEmpty && spill.index(forKey: id) != nil)
    }

    subscript(id: RequestID) -> Request? {
        if let index = slot(id) { return slots[index] }
        return spill.isEmpty ? nil : spill[id]
    }

    /// The result reader of request `id`, if it is pending and has one: the field alone, where the subscript would
    /// copy the whole request (its method, completion and reader) for every answer read.
    func resultReader(_ id: RequestID) -> RPCEndpoint.ResultReader? {
        if let index = slot(id) { return slots[index]?.readResult }
        return spill.isEmpty ? nil : spill[id]?.readResult
    }

    mutating func remove(_ id: RequestID) -> Request? {
        guard let index = slot(id) else { return spill.isEmpty ? nil : spill.removeValue(forKey: id) }
        let request = slots[index]
        slots[index] = nil
        live -= 1
        while head < slots.count && slots[head] == nil {
            head += 1
            base += 1
        }
        let length = slots.count - head
        if length == 0 {
            // Emptied: ``insert(_:)`` restarts the window.
        } else if length >= Self.sparseLength && live * 2 < length {
            for case let request? in slots[head...] { spill[request.id] = request }
            slots = []
            head = 0
            live = 0
        } else if head >= Self.sparseLength && head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return request
    }

    /// Every pending request, in no particular order.
    var all: [Request] {
        var requests = Array(spill.values)
        for case let request? in slots[head...] { requests.append(request) }
        return requests
    }

    mutating func removeAll() {
        slots = []
        head = 0
        live = 0
        spill = [:]
    }
}
