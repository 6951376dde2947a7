// `eventually`, shared by the test targets whose tests wait for other tasks (a link to this file sits in
// each of them): it waits for a condition without sleeping and without keeping a thread of the task
// pool busy.

import Dispatch
import Foundation
import SwiftSignalKit
import Testing

/// Waits (up to 300 seconds) for something another thread does, without sleeping and without keeping a
/// pool thread busy: the condition is checked again each time the test helpers report a change
/// (``TestProgress/changed()``), and at least every 0.2 seconds (the watchdog's tick, for conditions on
/// state nothing reports).
func eventually(
    isolation: isolated (any Actor)? = #isolation, _ condition: () async -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    // A bound for a hang, not a time the condition should take: the whole suite runs at once on two
    // cores, beside the machine's other work, and a test's turn on the pool can take seconds. (The
    // mapAsync order test, 200 values with yields, has taken 100 to 120 s in full parallel runs on the
    // two-core machine: the pool is that busy while the suite's race tests run.)
    let deadline = ContinuousClock.now + .seconds(300)
    while ContinuousClock.now < deadline {
        let version = TestProgress.shared.version
        if await condition() { return }
        await TestProgress.shared.change(after: version)
    }
    Issue.record("still not true after 300 seconds", sourceLocation: sourceLocation)
}

/// Tells tasks in `eventually` that something they may wait for has changed. Test helpers that own such
/// state report their changes (`Counter`, `Recording` in SwiftSignalKitConcurrencyTests); a watchdog
/// thread reports one every 0.2 seconds, so a condition on other state is checked again then.
nonisolated final class TestProgress: Sendable {
    static let shared = TestProgress()
    private let state = Atomic<(version: UInt64, waiting: [CheckedContinuation<Void, Never>])>(value: (0, []))

    private init() {
        let tick = DispatchSemaphore(value: 0)
        let watchdog = Thread { [self] in
            while true {
                _ = tick.wait(timeout: .now() + 0.2)
                self.changed()
            }
        }
        watchdog.start()
    }

    var version: UInt64 { self.state.with { $0.version } }

    func changed() {
        var waiting: [CheckedContinuation<Void, Never>] = []
        self.state.modify { state in
            waiting = state.waiting
            return (state.version &+ 1, [])
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the version has moved past `version`.
    func change(after version: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var resumeNow = false
            self.state.modify { state in
                if state.version != version {
                    resumeNow = true
                    return state
                }
                return (state.version, state.waiting + [continuation])
            }
            if resumeNow { continuation.resume() }
        }
    }
}
