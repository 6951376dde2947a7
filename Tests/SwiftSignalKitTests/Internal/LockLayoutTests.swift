// Where the library's locks sit in memory: the locks of two objects never share a cache line, so two
// threads that each drive their own subscription never bounce one line between their cores, even when
// one thread made both subscriptions and malloc put their objects side by side.

#if canImport(Glibc)
    import Glibc
    import Testing
    @testable import SwiftSignalKit

    /// glibc's `malloc_usable_size`, which the Glibc module does not export (it is in `malloc.h`).
    @_silgen_name("malloc_usable_size")
    private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

    @Suite struct LockLayoutTests {
        /// The addresses one object's lock touches when it is taken and released, and what the object is.
        struct Touched: Sendable {
            var kind: String
            var first: UInt
            var last: UInt
        }

        /// A ``LockStorage``'s lock, found as the bytes of the object that change while it is locked.
        static func touched<State>(_ state: LockedState<State>, _ kind: String) -> Touched {
            return Self.touched(object: state.storage, kind) { read in state.withLock { _ in read() } }
        }

        /// A subscriber's lock, found as the bytes of the object that change while it is locked.
        static func touched<T, E>(_ subscriber: Subscriber<T, E>, _ kind: String) -> Touched {
            return Self.touched(object: subscriber, kind) { read in subscriber.withState { _ in read() } }
        }

        /// The lock word of `object`, found as the bytes that `whileLocked` sees changed from outside the
        /// lock.
        static func touched(
            object: AnyObject, _ kind: String, whileLocked: (() -> [UInt8]) -> [UInt8]
        ) -> Touched {
            let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
            let size = mallocUsableSize(base)
            let unlocked = Array(UnsafeRawBufferPointer(start: base, count: size))
            let locked = whileLocked { Array(UnsafeRawBufferPointer(start: base, count: size)) }
            let changed = unlocked.indices.filter { unlocked[$0] != locked[$0] }
            precondition(!changed.isEmpty, "no byte of \(kind) changed while it was locked")
            // The whole 32-bit lock word, of which the lock changes only the bytes of the owner's id.
            let first = (UInt(bitPattern: base) + UInt(changed.first!)) & ~3
            return Touched(kind: kind, first: first, last: max(first + 3, UInt(bitPattern: base) + UInt(changed.last!)))
        }

        /// Objects of every kind that holds a lock, made one after another by one thread as a server makes
        /// subscriptions, with states of every size from 8 to 64 bytes: no two of their locks share a
        /// 64-byte line. With the state before the mutex in ``LockStorage``, a state of 16, 32 or 48 bytes
        /// put the end of its mutex in the line of the next object's lock; with a 32-bit lock word and no
        /// spacing after it, two objects of 8 bytes of state would be 48 bytes apart.
        ///
        /// How many objects land side by side depends on what other threads allocate meanwhile (the
        /// suite runs in parallel, and on a loaded machine a round may have few neighbours): rounds are
        /// repeated until enough pairs were neighbours for the check to mean something.
        @Test func theLocksOfNeighbouringObjectsNeverShareACacheLine() async {
            var shared: [String] = []
            var neighbours = 0
            for _ in 0..<32 where neighbours < 100 {
                let round = await onThread { Self.allocateSideBySide() }
                shared += round.shared
                neighbours += round.neighbours
            }
            #expect(shared == [], "locks of two objects share a 64-byte line")
            // The check means something only if malloc put enough of the objects side by side.
            #expect(neighbours >= 100, "only \(neighbours) pairs of locks were less than 128 bytes apart")
        }

        /// One round of objects made side by side; returns the pairs of locks that share a line, and how
        /// many pairs were less than 128 bytes apart.
        static func allocateSideBySide() -> (shared: [String], neighbours: Int) {
            var touched: [Touched] = []
            var kept: [AnyObject] = []
            func keep<State>(_ state: LockedState<State>, _ kind: String) {
                kept.append(state.storage)
                touched.append(Self.touched(state, kind))
            }
            for _ in 0..<64 {
                keep(LockedState(1), "a lock of 8 bytes of state")
                let subscriber = Subscriber<Int, NoError>(next: { _ in })
                kept.append(subscriber)
                touched.append(Self.touched(subscriber, "a subscriber"))
                keep(LockedState((1, 2)), "a lock of 16 bytes of state")
                let pipe = ValuePipe<Int>()
                let subscription = pipe.signal().start(next: { _ in })
                kept += [pipe, subscription as AnyObject]
                touched.append(Self.touched(subscription as! Subscriber<Int, NoError>, "a started subscription"))
                keep(LockedState((1, 2, 3)), "a lock of 24 bytes of state")
                keep(LockedState((1, 2, 3, 4)), "a lock of 32 bytes of state")
                keep(LockedState((1, 2, 3, 4, 5)), "a lock of 40 bytes of state")
                keep(LockedState((1, 2, 3, 4, 5, 6)), "a lock of 48 bytes of state")
                keep(LockedState((1, 2, 3, 4, 5, 6, 7)), "a lock of 56 bytes of state")
                keep(LockedState((1, 2, 3, 4, 5, 6, 7, 8)), "a lock of 64 bytes of state")
            }
            touched.sort { $0.first < $1.first }
            var shared: [String] = []
            var neighbours = 0
            for (a, b) in zip(touched, touched.dropFirst()) {
                if b.first - a.last < 128 { neighbours += 1 }
                if a.last / 64 >= b.first / 64 {
                    shared.append("\(a.kind) at \(a.first)...\(a.last) and \(b.kind) at \(b.first)...\(b.last)")
                }
            }
            withExtendedLifetime(kept) {}
            return (shared, neighbours)
        }
    }
#endif
