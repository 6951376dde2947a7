/// A first-in, first-out queue for operator state kept under a lock: ``ZipStateMachine``'s per-source
/// buffers and outbox, ``SerialFoldStateMachine``'s waiting inputs.
///
/// Removing an element moves it out (its slot becomes nil) rather than copying it, so the last reference
/// to a value always leaves with the caller, who releases it after unlocking: a value's `deinit` is user
/// code and must not run under a library lock. Slots already consumed are compacted away, so a queue
/// that never empties (one source of a `zip` always ahead) does not grow without end.
struct FIFO<Element> {
    private var slots: [Element?] = []
    private var head = 0

    init() {}

    var isEmpty: Bool { self.head == self.slots.count }
    var count: Int { self.slots.count - self.head }

    mutating func append(_ element: Element) {
        self.slots.append(element)
    }

    /// Removes and returns the first element, or nil when the queue is empty.
    mutating func popFirst() -> Element? {
        guard self.head < self.slots.count else { return nil }
        let element = self.slots[self.head]
        self.slots[self.head] = nil
        self.head += 1
        if self.head == self.slots.count {
            self.slots.removeAll(keepingCapacity: true)
            self.head = 0
        } else if self.head >= 16 && self.head * 2 >= self.slots.count {
            // Only consumed (nil) slots are removed: nothing is released here.
            self.slots.removeFirst(self.head)
            self.head = 0
        }
        return element
    }

    /// Empties the queue and returns what it held, for the caller to release after unlocking.
    mutating func removeAll() -> FIFO<Element> {
        let all = self
        self = FIFO()
        return all
    }
}

extension FIFO: Sendable where Element: Sendable {}

/// How many values a thread that delivers for a serialising operator (``zip(_:_:)``, ``scan(_:_:)``,
/// ...) handles for other threads before it hands the rest to a global Dispatch queue, as
/// ``ReplayingFanOut`` does: enough that ordinary contention never leaves the sending threads, and a
/// sender is never kept delivering for others without end.
let serialDeliveryAllowance = 64
