import Dispatch
import Foundation
import SwiftSignalKit
import Testing

/// User code that the library runs (hashing, equality, deinit) may use the same object again: the
/// library holds none of its locks while it runs.
@Suite struct LockRealUseTests {
    final class DictionaryBox: Sendable {
        let dictionary = DisposableDict<ReentrantKey>()
    }

    /// A key whose hashing and equality use the dictionary they are stored in.
    struct ReentrantKey: Hashable, Sendable {
        let id: Int
        let box: DictionaryBox

        func hash(into hasher: inout Hasher) {
            if self.id == 1 {
                self.box.dictionary.set(nil, forKey: ReentrantKey(id: 2, box: self.box))
            }
            hasher.combine(self.id)
        }

        static func == (lhs: ReentrantKey, rhs: ReentrantKey) -> Bool {
            if lhs.id == 1 {
                // A real change to another key every time: the outer `set` must not search again for
                // ever because of it.
                lhs.box.dictionary.set(ActionDisposable {}, forKey: ReentrantKey(id: 3, box: lhs.box))
            }
            return lhs.id == rhs.id
        }
    }

    @Test func aDisposableDictKeysHashingAndEqualityRunOutsideItsLock() async {
        let disposed = Count()
        let finished = await finishes {
            let box = DictionaryBox()
            box.dictionary.set(ActionDisposable { disposed.increment() }, forKey: ReentrantKey(id: 1, box: box))
            box.dictionary.set(ActionDisposable { disposed.increment() }, forKey: ReentrantKey(id: 1, box: box))
            box.dictionary.set(nil, forKey: ReentrantKey(id: 1, box: box))
        }
        #expect(finished, "a key's hash or == deadlocked against the dictionary's lock")
        #expect(disposed.value == 2)
    }

    /// Concurrent `set`s of many keys: every replaced disposable is disposed once, and `dispose()` ends
    /// the rest.
    @Test func aDisposableDictUnderConcurrentSetsDisposesEachReplacedEntryOnce() async {
        let dictionary = DisposableDict<Int>()
        let made = Count()
        let disposed = Count()
        await concurrently(4) { thread in
            for round in 0..<2_000 {
                made.increment()
                dictionary.set(ActionDisposable { disposed.increment() }, forKey: (round + thread) % 17)
            }
        }
        dictionary.dispose()
        #expect(disposed.value == made.value)
    }

    final class Reentrant: Sendable {
        let atomic: Atomic<Reentrant?>
        init(_ atomic: Atomic<Reentrant?>) { self.atomic = atomic }
        deinit { _ = self.atomic.with { $0 } }
    }

    /// `Atomic.modify` releases the value it replaces after unlocking.
    @Test func anAtomicsReplacedValueIsReleasedOutsideItsLock() async {
        let finished = await finishes {
            let atomic = Atomic<Reentrant?>(value: nil)
            atomic.modify { _ in Reentrant(atomic) }
            atomic.modify { _ in nil }
        }
        #expect(finished)
    }
}
