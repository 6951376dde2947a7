// Compiled in Swift 5 mode (see Package.swift): legacy code calling the Swift 6 `QuoteDesk`, which calls
// the Swift 5-mode `LegacyQuotes` in turn. Plain closures, no annotations, no `await`.
import LegacyQuotes
import QuoteDesk
import SwiftSignalKit
import XCTest

final class LegacyCallerTests: XCTestCase {
    func testLegacyCodeStartsASignalBackedByAsyncCode() {
        let desk = QuoteDesk(client: QuoteClient(prices: ["ACME": 42]), timeout: .seconds(600))
        XCTAssertEqual(self.lookUps("ACME", at: desk), [.found(Quote(symbol: "ACME", price: 42))])
    }

    func testLegacyCodeGetsUnknownSymbolsAsAValue() {
        let desk = QuoteDesk(client: QuoteClient(prices: [:]), timeout: .seconds(600))
        XCTAssertEqual(self.lookUps("NOPE", at: desk), [.unknownSymbol])
    }

    private func lookUps(_ symbol: String, at desk: QuoteDesk) -> [QuoteLookup] {
        let answered = self.expectation(description: "answered")
        let lookups = Atomic<[QuoteLookup]>(value: [])
        let disposable = desk.lookUpSignal(symbol).start(
            next: { lookup in
                _ = lookups.modify { $0 + [lookup] }
            },
            completed: {
                answered.fulfill()
            })
        self.wait(for: [answered], timeout: 60)  // blocking-check: XCTest runs its tests on the main thread, not on the task pool
        disposable.dispose()
        return lookups.with { $0 }
    }
}
