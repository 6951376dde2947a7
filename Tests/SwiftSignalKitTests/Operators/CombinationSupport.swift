import Testing

@testable import SwiftSignalKit

/// ``concurrently(_:_:)`` with a start barrier: every thread waits until all have started, so that
/// their bodies really overlap (starting a thread takes longer than sending thousands of values).
func concurrentlyTogether(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let started = Counter()
    await concurrently(count) { index in
        started.increment()
        blockingSpin(until: { started.value == count })
        body(index)
    }
}

/// Where two long arrays first differ, or nil when they are equal: a failed stress expectation then
/// prints one line instead of thousands of values.
func firstDifference<T: Equatable>(_ actual: [T], _ expected: [T]) -> String? {
    for index in 0..<min(actual.count, expected.count) where actual[index] != expected[index] {
        return "at \(index): \(actual[index]) instead of \(expected[index])"
    }
    if actual.count != expected.count {
        return "\(actual.count) elements instead of \(expected.count)"
    }
    return nil
}
