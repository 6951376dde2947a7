// A view controller of Telegram-style code, in Swift 5 language mode. UIKit's view controllers are
// `@MainActor`, and inside a main-actor type Swift 5 mode checks isolation: a signal callback that
// touches the controller's state is warned about ("main actor-isolated property ... can not be mutated
// from a Sendable closure"), because a callback may run on any thread. The form below is the one
// Migration/FromTelegramSwiftSignalKit.md recommends where the callback does run on the main queue; this
// target is built with warnings as errors, so it compiles without a diagnostic.
import Foundation
import SwiftSignalKit
import Testing

/// Stands for `UIViewController`, which is `@MainActor`.
@MainActor
class ViewController {
    init() {}
}

final class ProfileTitleController: ViewController {
    private let disposable = MetaDisposable()
    private(set) var title = ""
    var onTitle: (() -> Void)?

    func bind(_ titles: Signal<String, NoError>) {
        self.disposable.set(
            (titles |> deliverOnMainQueue).start(next: { [weak self] title in
                // `deliverOnMainQueue` runs this on the main queue: `assumeIsolated` tells the compiler
                // so, and stops the process if it ever is not.
                MainActor.assumeIsolated {
                    self?.title = title
                    self?.onTitle?()
                }
            }))
    }

    func refresh() {
        Queue.mainQueue().async {
            MainActor.assumeIsolated {
                self.title += "!"
            }
        }
    }

    func unbind() {
        self.disposable.dispose()
    }
}

/// A legacy callback taking a function value: it must be `@Sendable` in a main-actor type.
@MainActor
func titleLengths(_ titles: Signal<String, NoError>, completion: @escaping @Sendable (Int) -> Void) -> Disposable {
    return (titles |> map { $0.count }).start(next: completion)
}

@Suite struct MainActorControllerTests {
    @Test(.timeLimit(.minutes(1))) @MainActor func aControllerTakesTitlesDeliveredOnTheMainQueue() async {
        let controller = ProfileTitleController()
        let titles = ValuePipe<String>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            controller.onTitle = {
                controller.onTitle = nil
                continuation.resume()
            }
            controller.bind(titles.signal())
            Thread { titles.putNext("Chats") }.start()
        }
        #expect(controller.title == "Chats")
        controller.unbind()
    }

    @Test @MainActor func aFunctionValueIsACallback() {
        let count = Atomic(value: 0)
        titleLengths(Signal<String, NoError>.single("Chats"), completion: { value in count.swap(value) }).dispose()
        #expect(count.with { $0 } == 5)
    }
}
