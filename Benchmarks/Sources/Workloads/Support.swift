import Foundation
import SwiftSignalKit
import Synchronization

/// A sum written by one thread at a time (each workload's sink runs on one thread).
final class Sum: @unchecked Sendable {
    // Safe: every workload that uses it delivers on one thread at a time and reads it afterwards, after a
    // happens-before edge (the end of `start`, a semaphore, or a queue barrier).
    var value = 0
}

/// A sum written by several threads at once.
final class SharedSum: Sendable {
    let value = Atomic<Int>(0)

    func add(_ amount: Int) {
        self.value.add(amount, ordering: .relaxed)
    }
}

/// Which implementation a benchmark measures. The names end every benchmark's name, so the report can
/// pair each library with the limit of the same workload.
public enum Variant: String, CaseIterable, Sendable {
    case signalKit = "SignalKit"
    case openCombine = "OpenCombine"
    case asyncStream = "AsyncStream"
    case asyncChannel = "AsyncChannel"
    case checkedContinuation = "CheckedContinuation"
    /// `withUnsafeContinuation`, the reference of A2: what `get()` itself suspends on.
    case unsafeContinuation = "UnsafeContinuation"
    case task = "Task"
    case limit = "limit"
    /// The limit plus what the subscriber contract requires (see `ContractStage`).
    case contractFloor = "contract floor"
}

/// What a workload body may ask of the harness: exclude its setup from the measurement.
public protocol MeasurementWindow {
    /// Starts measuring; work before this call is setup.
    func startMeasurement()
    /// Stops measuring; work after this call is teardown.
    func stopMeasurement()
}

/// One workload: a name, how many operations one run performs (1,000 or 1,000,000, so that the
/// benchmark tool can report per operation), and one body per implementation.
public struct Workload: Sendable {
    /// One implementation's run of the workload.
    public enum Body: Sendable {
        /// A synchronous run.
        case sync(@Sendable (any MeasurementWindow) -> Void)
        /// A run that awaits.
        case async(@Sendable (any MeasurementWindow) async -> Void)
    }

    /// The workload's name, which also says what one operation is ("per event", "per subscriber").
    public let name: String
    /// The operations one run performs.
    public let operations: Int
    /// How long the benchmark tool may repeat the run.
    public let maxSeconds: Int
    /// One body per implementation measured.
    public let variants: [(variant: Variant, body: Body)]

    /// The benchmark's full name: the workload, then the implementation.
    public func name(of variant: Variant) -> String {
        return "\(self.name) · \(variant.rawValue)"
    }
}

/// Every workload of the suite, in report order.
public let allWorkloads: [Workload] = coreWorkloads() + asyncWorkloads()

/// A sync workload with one body per variant.
func workload(
    _ name: String,
    operations: Int,
    maxSeconds: Int = 2,
    _ variants: [(Variant, @Sendable (any MeasurementWindow) -> Void)]
) -> Workload {
    return Workload(
        name: name,
        operations: operations,
        maxSeconds: maxSeconds,
        variants: variants.map { ($0.0, .sync($0.1)) }
    )
}

/// An async workload with one body per variant.
func asyncWorkload(
    _ name: String,
    operations: Int,
    _ variants: [(Variant, @Sendable (any MeasurementWindow) async -> Void)]
) -> Workload {
    return Workload(name: name, operations: operations, maxSeconds: 2, variants: variants.map { ($0.0, .async($0.1)) })
}

/// Keeps the optimiser from deleting a result.
@inline(never)
public func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// One million and one thousand: the two operation counts a run may have. The million is smaller when
/// `SSK_WORKLOAD_MILLION` says so: CI's instruction-count check (`Scripts/instructions.py --ci`) runs
/// those workloads at a tenth of their size under valgrind, where a million `mapToSignal` values take
/// twenty seconds; the counts per operation are the same. Nothing else sets it.
let million = ProcessInfo.processInfo.environment["SSK_WORKLOAD_MILLION"].flatMap { Int($0) } ?? 1_000_000
let thousand = 1_000

/// Stops the run unless a variant computed what a correct run must, so that one that drops values cannot
/// pass for faster. Called once per run, after the measured work; `expected` is worked out beforehand.
/// `fatalError`, not `precondition`: a release build drops a precondition's message.
func checkResult(
    _ workload: String,
    _ variant: Variant,
    expected: Int,
    actual: Int,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    guard actual == expected else {
        fatalError("\(workload) · \(variant.rawValue): expected \(expected), got \(actual)", file: file, line: line)
    }
}

/// The sum of `0..<count`: what a run adds up that delivers each of those values once.
func sumBelow(_ count: Int) -> Int {
    return count * (count - 1) / 2
}

/// The values that reached a subscriber of the churn workloads. Their callback (`churnReceived`) is a
/// global function, so it captures nothing, as the `{ blackHole($0) }` it replaced did.
let churnDeliveries = Atomic<Int>(0)

/// A churn subscriber's callback: counts the value.
func churnReceived(_ value: Int) {
    blackHole(value)
    churnDeliveries.add(1, ordering: .relaxed)
}

/// Runs `body` on `count` new threads at once and returns when all have finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            body(index)
            done.signal()
        }
        thread.start()
    }
    for _ in 0..<count {
        done.wait()
    }
}

/// A fixed permutation, so every variant disposes its subscribers in the same random order.
func shuffledIndices(_ count: Int) -> [Int] {
    var generator = SplitMix64(seed: 0x5EED)
    return Array(0..<count).shuffled(using: &generator)
}

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Carries a value that is not `Sendable` (an OpenCombine subject) into the threads of a workload.
struct Unchecked<Value>: @unchecked Sendable {
    // Safe: used only for objects that synchronise themselves (OpenCombine's subjects take a lock).
    let value: Value
}

/// Where a generator leaves its subscriber, so that threads outside it can push.
final class SubscriberSlot: @unchecked Sendable {
    // Safe: written once inside `start`, before the threads that read it are created.
    var subscriber: Subscriber<Int, NoError>?
}
