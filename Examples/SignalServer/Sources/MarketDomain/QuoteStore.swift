import SwiftSignalKit

/// The last known quote of every symbol: the cache in front of the exchange.
///
/// The book lives in a `ValuePromise`, so any number of readers can subscribe to it and see every change;
/// writes go through one serial queue, so two writers never lose each other's change.
public final class QuoteStore: Sendable {
    /// Every symbol's last quote.
    public struct Book: Equatable, Sendable {
        /// Symbol to quote.
        public var quotes: [String: Quote] = [:]
    }

    private let book = ValuePromise(Book(), ignoreRepeated: true)
    /// Where writes run, one at a time: a serial queue, or a test's virtual time. `ValuePromise.set` is
    /// thread-safe; running every write here is what makes read-change-write one step.
    private let scheduler: any SignalScheduler
    /// The book as last written, read and written only on `queue`.
    private let current = Atomic(value: Book())

    /// Creates an empty store whose writes run on `queue`.
    public convenience init(queue: Queue = Queue(name: "quote-store")) {
        self.init(scheduler: queue)
    }

    /// Creates an empty store whose writes run on `scheduler`, which runs one action at a time (a serial
    /// queue, or a test's `VirtualTimeScheduler`).
    public init(scheduler: some SignalScheduler) {
        self.scheduler = scheduler
    }

    /// The book now and after every change.
    public func quotes() -> Signal<Book, NoError> {
        return self.book.get()
    }

    /// The cached quote of `symbol`, marked as coming from the cache, then completion; or just completion
    /// when the store has none.
    public func cached(_ symbol: String) -> Signal<Quote, MarketError> {
        return self.book.get()
            |> take(1)
            |> castError(MarketError.self)
            |> mapToSignal { book -> Signal<Quote, MarketError> in
                guard var quote = book.quotes[symbol] else { return .complete() }
                quote.source = .cache
                return .single(quote)
            }
    }

    /// Stores `quote` as its symbol's last known price, unless the store already has a newer one
    /// (a larger ``Quote/asOf``): an exchange answer that left before a trade must not turn the price back.
    public func store(_ quote: Quote) {
        self.scheduler.schedule {
            let book = self.current.modify { book in
                if let known = book.quotes[quote.symbol], known.asOf > quote.asOf { return book }
                var book = book
                book.quotes[quote.symbol] = quote
                return book
            }
            self.book.set(book)
        }
    }
}
