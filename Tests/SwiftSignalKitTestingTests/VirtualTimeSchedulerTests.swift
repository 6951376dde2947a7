import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitTesting
import Testing

/// A thread-safe log of strings, for the order in which actions ran.
final class Log: Sendable {
    private let entries = Atomic<[String]>(value: [])
    var lines: [String] { self.entries.with { $0 } }
    func append(_ line: String) { _ = self.entries.modify { $0 + [line] } }
}

@Suite struct VirtualTimeSchedulerTests {
    @Test func actionsRunInDueOrderAndTiesInSchedulingOrder() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        _ = scheduler.schedule(after: 2) { log.append("b@\(scheduler.now)") }
        _ = scheduler.schedule(after: 1) { log.append("a@\(scheduler.now)") }
        _ = scheduler.schedule(after: 2) { log.append("c@\(scheduler.now)") }
        scheduler.schedule { log.append("now@\(scheduler.now)") }
        #expect(log.lines.isEmpty, "nothing runs before time moves")
        scheduler.advance(by: 1.5)
        #expect(log.lines == ["now@0.0", "a@1.0"])
        #expect(scheduler.now == 1.5)
        scheduler.advance(by: 0.5)
        #expect(log.lines == ["now@0.0", "a@1.0", "b@2.0", "c@2.0"])
    }

    /// An action for the end of an instant runs after every other action due then, including the ones
    /// they schedule for it, and before time moves on; such actions run in the order they were
    /// scheduled, with what each schedules for the instant before the next.
    @Test func actionsForTheEndOfAnInstantRunAfterEverythingElseDueThen() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        _ = scheduler.schedule(after: 1) {
            log.append("a@\(scheduler.now)")
            scheduler.scheduleAtEndOfInstant { log.append("end@\(scheduler.now)") }
            scheduler.schedule {
                log.append("b@\(scheduler.now)")
                scheduler.schedule { log.append("c@\(scheduler.now)") }
            }
        }
        _ = scheduler.schedule(after: 1) { log.append("d@\(scheduler.now)") }
        _ = scheduler.schedule(after: 2) { log.append("e@\(scheduler.now)") }
        scheduler.scheduleAtEndOfInstant { log.append("end@\(scheduler.now)") }
        scheduler.schedule { log.append("now@\(scheduler.now)") }
        #expect(scheduler.scheduledActionCount == 5, "an action for the end of an instant is a scheduled action")
        scheduler.advance(by: 1)
        #expect(log.lines == ["now@0.0", "end@0.0", "a@1.0", "d@1.0", "b@1.0", "c@1.0", "end@1.0"])
        scheduler.scheduleAtEndOfInstant {
            log.append("x")
            scheduler.schedule { log.append("y") }
        }
        scheduler.scheduleAtEndOfInstant { log.append("z") }
        scheduler.advance(by: 0)
        #expect(Array(log.lines.suffix(3)) == ["x", "y", "z"])
        scheduler.run()
        #expect(log.lines.last == "e@2.0")
    }

    /// A scheduler of the user's own, written before the requirement existed, gets the default: the end
    /// of an instant is the next `schedule(_:)`.
    @Test func aSchedulerWithoutItsOwnEndOfInstantSchedulesTheActionAsSoonAsPossible() {
        final class Recording: SignalScheduler {
            let scheduled = Atomic<[@Sendable () -> Void]>(value: [])
            func schedule(_ action: @escaping @Sendable () -> Void) {
                _ = self.scheduled.modify { $0 + [action] }
            }
            func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
                self.schedule(action)
                return EmptyDisposable
            }
        }
        let scheduler = Recording()
        let log = Log()
        scheduler.scheduleAtEndOfInstant { log.append("ran") }
        let actions = scheduler.scheduled.with { $0 }
        #expect(actions.count == 1 && log.lines.isEmpty, "scheduled, not run inline")
        actions.forEach { $0() }
        #expect(log.lines == ["ran"])
    }

    @Test func cancelledActionsDoNotRunAndAreReleased() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        let token = LifetimeToken()
        weak let weakToken = token
        let disposable = scheduler.schedule(after: 1) { [token] in
            withExtendedLifetime(token) { log.append("ran") }
        }
        _ = consume token
        #expect(weakToken != nil)
        disposable.dispose()
        #expect(weakToken == nil, "disposing releases the action")
        scheduler.advance(by: 2)
        #expect(log.lines.isEmpty)
        #expect(scheduler.scheduledActionCount == 0)
    }

    @Test func actionsScheduledByActionsRunInTheSameAdvanceWhenDue() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        _ = scheduler.schedule(after: 1) {
            log.append("first@\(scheduler.now)")
            _ = scheduler.schedule(after: 1) { log.append("second@\(scheduler.now)") }
            _ = scheduler.schedule(after: 5) { log.append("late@\(scheduler.now)") }
        }
        scheduler.advance(by: 3)
        #expect(log.lines == ["first@1.0", "second@2.0"])
        scheduler.run()
        #expect(log.lines == ["first@1.0", "second@2.0", "late@6.0"])
        #expect(scheduler.now == 6)
    }

    @Test func infiniteDelayNeverRunsAndNegativeMeansNow() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        _ = scheduler.schedule(after: .infinity) { log.append("never") }
        _ = scheduler.schedule(after: -5) { log.append("now@\(scheduler.now)") }
        #expect(scheduler.scheduledActionCount == 1)
        scheduler.run()
        #expect(log.lines == ["now@0.0"])
    }

    @Test func advanceToMovesToAnAbsoluteTime() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        _ = scheduler.schedule(after: 10) { log.append("ten") }
        scheduler.advance(to: 9.999)
        #expect(log.lines.isEmpty)
        scheduler.advance(to: 10)
        #expect(log.lines == ["ten"])
    }

    @Test func repeatingTimerFiresEveryPeriodUntilInvalidated() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        let timer = SwiftSignalKit.Timer(timeout: 2, repeat: true, scheduler: scheduler) { timer in
            log.append("\(scheduler.now)")
            if scheduler.now >= 6 { timer.invalidate() }
        }
        timer.start()
        scheduler.advance(by: 5)
        #expect(log.lines == ["2.0", "4.0"])
        scheduler.advance(by: 100)
        #expect(log.lines == ["2.0", "4.0", "6.0"])
        #expect(scheduler.scheduledActionCount == 0)
    }

    @Test func releasingATimerStopsIt() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        var timer: SwiftSignalKit.Timer? = SwiftSignalKit.Timer(timeout: 1, repeat: true, scheduler: scheduler) { _ in log.append("tick") }
        timer?.start()
        scheduler.advance(by: 1)
        timer = nil
        scheduler.advance(by: 5)
        #expect(log.lines == ["tick"])
    }

    @Test func restartingATimerReplacesItsFiring() {
        let scheduler = VirtualTimeScheduler()
        let log = Log()
        let timer = SwiftSignalKit.Timer(timeout: 2, repeat: false, scheduler: scheduler) { _ in log.append("\(scheduler.now)") }
        timer.start()
        scheduler.advance(by: 1)
        timer.start()
        scheduler.advance(by: 10)
        #expect(log.lines == ["3.0"])
    }

    @Test func sameInstantActionLimitStopsARunawayTimerWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = VirtualTimeScheduler()
            let timer = SwiftSignalKit.Timer(timeout: 0, repeat: true, scheduler: scheduler) { _ in }
            timer.start()
            scheduler.advance(by: 1)
        }
    }

    @Test func negativeAdvanceIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            VirtualTimeScheduler().advance(by: -1)
        }
        await #expect(processExitsWith: .failure) {
            VirtualTimeScheduler().advance(by: .nan)
        }
    }

    @Test func movingTimeFromInsideAnActionIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = VirtualTimeScheduler()
            _ = scheduler.schedule(after: 1) { scheduler.advance(by: 1) }
            scheduler.run()
        }
    }

}

@Suite struct VirtualTimeSchedulerStressTests {
    @Test func schedulingFromManyThreadsKeepsEveryAction() async {
        let scheduler = VirtualTimeScheduler()
        let count = Atomic(value: 0)
        await concurrently(4) { thread in
            for index in stride(from: thread, to: 1_000, by: 4) {
                _ = scheduler.schedule(after: Double(index % 10)) { _ = count.modify { $0 + 1 } }
            }
        }
        scheduler.run()
        #expect(count.with { $0 } == 1_000)
    }

    /// Threads schedule and cancel while the test thread moves time: no action runs twice, and every one
    /// not disposed runs. (One that the moving thread had already taken when it was disposed may still
    /// run, as a queue's does: that is the contract; `cancelledActionsDoNotRunAndAreReleased` checks that
    /// a disposed action that was not taken never runs.)
    @Test func cancellingWhileTimeMovesNeverRunsACancelledAction() async {
        for _ in 0..<20 {
            let scheduler = VirtualTimeScheduler()
            let ran = LockedCounts()
            let cancelled = LockedCounts()
            let done = Atomic(value: 0)
            let workers = (0..<3).map { worker in
                Thread {
                    for index in 0..<300 {
                        let id = worker * 1_000 + index
                        let disposable = scheduler.schedule(after: Double(index % 7) * 0.5) { ran.add(id) }
                        if index % 3 == 0 {
                            disposable.dispose()
                            cancelled.add(id)
                        }
                    }
                    _ = done.modify { $0 + 1 }
                }
            }
            workers.forEach { $0.start() }
            // Time moves on a thread of the test's while the workers run, not on a thread of the pool.
            await onThread {
                while done.with({ $0 }) < 3 {
                    scheduler.advance(by: 0.25)
                }
                scheduler.run()
            }
            let ranIDs = ran.all
            #expect(ranIDs.count == Set(ranIDs).count, "no action runs twice")
            let survivors = Set(0..<3).flatMap { worker in (0..<300).map { worker * 1_000 + $0 } }.filter { $0 % 1_000 % 3 != 0 }
            #expect(Set(survivors).isSubset(of: Set(ranIDs)), "every action not disposed runs")
        }
    }
}

/// Integers appended from any thread.
final class LockedCounts: Sendable {
    private let values = Atomic<[Int]>(value: [])
    var all: [Int] { self.values.with { $0 } }
    func add(_ value: Int) { _ = self.values.modify { $0 + [value] } }
}

/// An object whose release a test observes through a weak reference.
final class LifetimeToken: Sendable {}
