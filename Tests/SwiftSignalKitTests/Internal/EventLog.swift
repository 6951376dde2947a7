@testable import SwiftSignalKit

/// What the subscribers of one state-machine test got, each event as "name:value" ("name:error",
/// "name:completed"), in delivery order: the machine tests carry out their actions on one thread and
/// read this.
final class EventLog<E: Error & Sendable>: Sendable {
    let events = Atomic<[String]>(value: [])

    /// A subscriber that writes its events here under `name`.
    func subscriber(_ name: String) -> Subscriber<Int, E> {
        return Subscriber(
            next: { value in _ = self.events.modify { $0 + ["\(name):\(value)"] } },
            error: { _ in _ = self.events.modify { $0 + ["\(name):error"] } },
            completed: { _ = self.events.modify { $0 + ["\(name):completed"] } })
    }

    /// The events since the last call.
    func take() -> [String] {
        return self.events.swap([])
    }
}
