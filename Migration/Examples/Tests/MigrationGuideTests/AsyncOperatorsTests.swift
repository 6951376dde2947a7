// The migration guide, recipes, "Async work inside a pipeline": mapAsync and the async generator.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// Names for a stream of user IDs: at most 4 requests at once, results in the order of the IDs.
func userNames(for ids: Signal<UserID, APIError>, api: UserAPI) -> Signal<String, APIError> {
    return ids
        |> mapAsync(.concurrent(max: 4, ordered: true)) { (id: UserID) throws(APIError) in
            try await api.user(id: id).name
        }
}

/// Search as you type: a new query cancels the request for the previous one.
func searchResults(for queries: Signal<String, NoError>, api: UserAPI) -> Signal<User?, NoError> {
    return queries |> mapAsync(.latest) { (text: String) in try? await api.user(id: text) }
}

/// A paged API as one signal: the body sends every user of every page, then the signal completes.
func allUsers(pages: [[UserID]], api: UserAPI) -> Signal<User, APIError> {
    return Signal { (send) throws(APIError) in
        for page in pages {
            for id in page {
                send(try await api.user(id: id))
            }
        }
    }
}

@Suite struct AsyncOperatorsTests {
    let users = [User(id: "ada", name: "Ada"), User(id: "grace", name: "Grace"), User(id: "alan", name: "Alan")]

    @Test func namesArriveInTheOrderOfTheIDs() async throws {
        let api = UserAPI(users: users)
        let ids = Signal<UserID, APIError> { subscriber in
            for user in self.users { subscriber.putNext(user.id) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        var names: [String] = []
        for try await name in userNames(for: ids, api: api).values { names.append(name) }
        #expect(names == ["Ada", "Grace", "Alan"])
    }

    @Test func anUnknownIDFailsTheNames() async {
        let api = UserAPI(users: users)
        await #expect(throws: APIError.notFound) {
            for try await _ in userNames(for: .single("nobody"), api: api).values {}
        }
    }

    @Test func theLatestQueryWins() async {
        let api = UserAPI(users: users)
        let query = ValuePromise<String>("ada")
        var iterator = searchResults(for: query.get(), api: api).values(bufferingPolicy: .bufferingNewest(1))
            .makeAsyncIterator()
        #expect(await iterator.next()??.name == "Ada")
        query.set("grace")
        #expect(await iterator.next()??.name == "Grace")
    }

    @Test func everyPageIsSent() async throws {
        let api = UserAPI(users: users)
        var names: [String] = []
        for try await user in allUsers(pages: [["ada", "grace"], ["alan"]], api: api).values { names.append(user.name) }
        #expect(names == ["Ada", "Grace", "Alan"])
        await #expect(throws: APIError.notFound) {
            for try await _ in allUsers(pages: [["nobody"]], api: api).values {}
        }
    }
}
