// Telegram-style client code, compiled in Swift 5 language mode without concurrency annotations.
// It must compile unchanged against SwiftSignalKit; the tests also check that it behaves as written.
import Foundation
import SwiftSignalKit
import XCTest

struct Peer: Equatable {
    var id: Int
    var name: String
}

enum LoadError {
    case notFound
    case network
}

/// An ordinary class, as legacy code captures in callbacks (not Sendable).
final class PeerCache {
    var peers: [Int: Peer] = [:]
}

final class ChatListController {
    private let disposables = DisposableSet()
    private let peerDisposable = MetaDisposable()
    private let queue = Queue(name: "ChatListController")
    let cache = PeerCache()
    let title = ValuePromise<String>("Chats", ignoreRepeated: true)
    let selectedPeer = Promise<Peer?>(nil)
    let events = ValuePipe<String>()
    var receivedTitles: [String] = []
    var receivedPeers: [Peer?] = []

    func peer(id: Int) -> Signal<Peer, LoadError> {
        return Signal { subscriber in
            if id < 0 {
                subscriber.putError(.notFound)
            } else {
                subscriber.putNext(Peer(id: id, name: "peer \(id)"))
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
    }

    func load() {
        self.disposables.add(
            (self.title.get()
                |> map { $0.uppercased() }
                |> distinctUntilChanged).start(next: { [weak self] title in
                    self?.receivedTitles.append(title)
                }))

        self.peerDisposable.set(
            (self.peer(id: 1)
                |> `catch` { _ -> Signal<Peer, LoadError> in
                    return .single(Peer(id: 0, name: "fallback"))
                }
                |> beforeNext { [weak self] peer in
                    self?.cache.peers[peer.id] = peer
                }).start(next: { [weak self] peer in
                    self?.selectedPeer.set(.single(peer))
                }))

        self.disposables.add(
            self.selectedPeer.get().start(next: { [weak self] peer in
                self?.receivedPeers.append(peer)
            }))
    }

    func combined() -> Signal<String, NoError> {
        return combineLatest(self.title.get(), self.selectedPeer.get())
            |> map { title, peer -> String in
                return "\(title): \(peer?.name ?? "none")"
            }
    }

    func loadOnQueue(_ completion: @escaping (Peer?) -> Void) {
        let signal: Signal<Peer?, NoError> =
            self.peer(id: 5)
            |> map(Optional.init)
            |> `catch` { _ -> Signal<Peer?, NoError> in
                return .single(nil)
            }
            |> deliverOn(self.queue)
        let _ = signal.start(next: { peer in
            completion(peer)
        })
    }

    deinit {
        self.disposables.dispose()
        self.peerDisposable.dispose()
    }
}

/// Client code that conforms `Signal` itself to a protocol whose requirement is an initialiser. It
/// compiles only while `Signal` is a final class: a non-final class must declare a `required`
/// initialiser in its own definition (a `map`/`filter` signal as a subclass of `Signal` was tried and
/// undone for this reason).
extension Signal: ExpressibleByNilLiteral where T == String, E == NoError {
    /// A signal of one placeholder string.
    public convenience init(nilLiteral: ()) {
        self.init { subscriber in
            subscriber.putNext("nothing")
            subscriber.putCompletion()
            return EmptyDisposable
        }
    }
}

final class LegacyClientTests: XCTestCase {
    func testControllerFlow() {
        let controller = ChatListController()
        controller.load()
        controller.title.set("Inbox")
        controller.title.set("Inbox")
        XCTAssertEqual(controller.receivedTitles, ["CHATS", "INBOX"])
        XCTAssertEqual(controller.receivedPeers.last??.name, "peer 1")
        XCTAssertEqual(controller.cache.peers[1]?.name, "peer 1")

        var combined: [String] = []
        let disposable = controller.combined().start(next: { combined.append($0) })
        disposable.dispose()
        XCTAssertEqual(combined, ["Inbox: peer 1"])
    }

    func testClientConformanceOfSignalItself() {
        var values: [String] = []
        var completions = 0
        let literal: Signal<String, NoError> = nil
        _ = literal.start(next: { values.append($0) }, completed: { completions += 1 })
        XCTAssertEqual(values, ["nothing"])
        XCTAssertEqual(completions, 1)
    }

    func testDeliverOnQueueWithNonSendableCapture() {
        let controller = ChatListController()
        let expectation = self.expectation(description: "delivered")
        var delivered: Peer?
        controller.loadOnQueue { peer in
            delivered = peer
            expectation.fulfill()
        }
        self.wait(for: [expectation], timeout: 10)  // blocking-check: XCTest runs its tests on the main thread, not on the task pool
        XCTAssertEqual(delivered?.id, 5)
    }

    func testOperatorsAsFunctionReferencesAndConstructors() {
        var values: [Int] = []
        let signal =
            combineLatest([single(1, NoError.self), single(2, NoError.self)])
            |> map { $0.reduce(0, +) }
            |> mapToSignal { value -> Signal<Int, NoError> in
                return .single(value * 10)
            }
            |> take(1)
        _ = signal.start(next: { values.append($0) })
        XCTAssertEqual(values, [30])

        var events: [String] = []
        _ = (fail(Int.self, LoadError.network) |> dematerialize).start(next: { event in
            switch event {
            case .Next: events.append("next")
            case .Error: events.append("error")
            case .Completion: events.append("completion")
            }
        })
        XCTAssertEqual(events, ["error"])

        let atomic = Atomic<[Int]>(value: [])
        _ = atomic.modify { $0 + [1] }
        XCTAssertEqual(atomic.with { $0 }, [1])

        let bag = Bag<(Int) -> Void>()
        let index = bag.add { _ in }
        bag.remove(index)
        XCTAssertTrue(bag.isEmpty)
    }

    /// `feedbackLoop` as the original declares it: a closure that is not `@Sendable`, mutating a captured
    /// variable, and the original's behaviour (always `.initial`, no reduction, no value).
    func testFeedbackLoopOfTheOriginal() {
        var pages = ["a", "b"]
        var states: [String] = []
        var events: [String] = []
        let drain: Signal<Void, NoError> = feedbackLoop(
            once: { (state: SignalFeedbackLoopState<String>) -> Signal<String, NoError>? in
                if case .initial = state { states.append("initial") }
                if pages.isEmpty { return nil }
                return .single(pages.removeFirst())
            },
            reduce: { $0 + $1 })
        _ = drain.start(next: { _ in events.append("next") }, completed: { events.append("completed") })
        XCTAssertEqual(states, ["initial", "initial", "initial"])
        XCTAssertEqual(events, ["completed"])
    }

    /// Call sites of the original's later additions: `takeLast`, `DisposableSet.removeLast()`,
    /// `ThreadPoolTask.execute()`, `debug_measureTimeToFirstEvent`.
    func testLaterAdditionsOfTheOriginal() {
        var peers: [Peer] = []
        let loaded = Signal<Peer, NoError> { subscriber in
            subscriber.putNext(Peer(id: 1, name: "a"))
            subscriber.putNext(Peer(id: 2, name: "b"))
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = (takeLast(loaded) |> debug_measureTimeToFirstEvent(label: "LegacyClientTests")).start(next: { peers.append($0) })
        XCTAssertEqual(peers.map { $0.id }, [2])

        let disposables = DisposableSet()
        var disposed = false
        disposables.add(ActionDisposable { disposed = true })
        disposables.removeLast()
        disposables.dispose()
        XCTAssertFalse(disposed)

        var ran = false
        ThreadPoolTask { _ in ran = true }.execute()
        XCTAssertTrue(ran)
    }

    /// The original's `Multicast.get` took only `Signal<T, NoError>`, so a signal written in place took
    /// its error type from it; the generic form alone could not infer one.
    func testMulticastOfASignalThatTakesItsTypeFromTheCall() {
        let shared = Multicast<Int>()
        var values: [Int] = []
        _ = shared.get(key: "one", signal: .single(1)).start(next: { values.append($0) })
        _ = shared.get(
            key: "two",
            signal: Signal { subscriber in
                subscriber.putNext(2)
                return EmptyDisposable
            }
        ).start(next: { values.append($0) })
        XCTAssertEqual(values, [1, 2])
    }

    func testCustomDisposableAndSubscriberStyleGenerator() {
        final class TimerDisposable: Disposable {
            var disposed = false
            func dispose() {
                self.disposed = true
            }
        }
        let custom = TimerDisposable()
        let signal = Signal<Int, NoError> { subscriber in
            subscriber.putNext(1)
            return custom
        }
        let disposable = signal.start()
        disposable.dispose()
        XCTAssertTrue(custom.disposed)

        let dict = DisposableDict<String>()
        dict.set(signal.start(), forKey: "a")
        dict.dispose()

        let local = QueueLocalObject<PeerCache>(queue: Queue(), generate: { PeerCache() })
        local.with { cache in
            cache.peers[1] = Peer(id: 1, name: "x")
        }
        XCTAssertEqual(local.syncWith { $0.peers.count }, 1)
    }

    func testQueueLocalObjectCallSitesOfCurrentAndOlderSwiftSignalKit() {
        final class ParticipantsContext {
            let disposable = MetaDisposable()
            var peers: [Int: Peer] = [1: Peer(id: 1, name: "one")]
            func getContext(peerId: Int) -> (Disposable, Peer?) {
                return (self.disposable, self.peers[peerId])
            }
        }
        let queue = Queue()
        let impl = QueueLocalObject<ParticipantsContext>(queue: queue, generate: { ParticipantsContext() })

        // Current Telegram-iOS: the result is the closure's own.
        let (disposable, control) = impl.syncWith { impl -> (Disposable, Peer?) in
            return impl.getContext(peerId: 1)
        }
        XCTAssertTrue(disposable is MetaDisposable)
        XCTAssertEqual(control?.name, "one")

        // Older code, written when `syncWith` returned an optional.
        if let (_, peer) = impl.syncWith({ impl in
            return impl.getContext(peerId: 1)
        }) {
            XCTAssertEqual(peer?.id, 1)
        } else {
            XCTFail("the object is there")
        }
        guard let count = impl.syncWith({ $0.peers.count }) else {
            return XCTFail("the object is there")
        }
        XCTAssertEqual(count, 1)

        // With the closure's result type written out, as Telegram-iOS code often has it, the closure
        // binds the form that is not optional, and `if let` over it does not compile ("initializer for
        // conditional binding must have Optional type"). The migration page's fix: write the type as
        // optional, or drop the binding.
        if let (_, peer) = impl.syncWith({ impl -> (Disposable, Peer?)? in
            return impl.getContext(peerId: 1)
        }) {
            XCTAssertEqual(peer?.name, "one")
        } else {
            XCTFail("the object is there")
        }
        let (_, unbound) = impl.syncWith({ impl -> (Disposable, Peer?) in
            return impl.getContext(peerId: 1)
        })
        XCTAssertEqual(unbound?.name, "one")

        // `unsafeGet()` on the queue, as upstream code does inside queue blocks.
        var name: String?
        queue.sync {
            name = impl.unsafeGet()?.peers[1]?.name
        }
        XCTAssertEqual(name, "one")
    }
}
