import Foundation
import Testing

@testable import NavlogIntake

@Suite("The intake's keys, rate limits and reading of navlogd's replies")
struct IntakePartsTests {
    @Test("a key is found by its secret, only by all of it")
    func keys() throws {
        let keys = try IntakeKeys(keys: [("ios-prod", "0123456789abcdef-ios"), ("android", "0123456789abcdef-and")])
        #expect(keys.key(secret: "0123456789abcdef-ios".utf8)?.id == "ios-prod")
        #expect(keys.key(secret: "0123456789abcdef-and".utf8)?.id == "android")
        #expect(keys.key(secret: "0123456789abcdef-io".utf8) == nil)
        #expect(keys.key(secret: "0123456789abcdef-iosX".utf8) == nil)
        #expect(keys.key(secret: "".utf8) == nil)
    }

    @Test(
        "key files that cannot be used are refused with what to do",
        arguments: [
            (#"{"keys":[{"id":"a b","secret":"0123456789abcdef"}]}"#, "letters, digits"),
            (#"{"keys":[{"id":"a","secret":"short"}]}"#, "at least 16"),
            (#"{"keys":[{"id":"a","secret":"0123456789abcdef"},{"id":"a","secret":"0123456789abcdeg"}]}"#, "given twice"),
            (#"{"keys":[{"id":"a","secret":"0123456789abcdef"},{"id":"b","secret":"0123456789abcdef"}]}"#, "same secret"),
            (#"{"keys":[{"id":"a","secret":"0123456789abcdef","eventsPerSecond":"many"}]}"#, "eventsPerSecond"),
            (#"{"keys":[{"id":"a","secret":"0123456789abcdef","apps":"Cookbook"}]}"#, "apps"),
            (#"{"key":[]}"#, "no \"keys\" array"),
            (#"{"keys":["#, "not valid JSON"),
        ])
    func badKeyFiles(text: String, expected: String) {
        do {
            _ = try IntakeKeys.parse(Data(text.utf8), source: "keys.json")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix("keys.json"))
        }
    }

    @Test("a key file's own limits and apps are read")
    func keyFields() throws {
        let keys = try IntakeKeys.parse(
            Data(#"{"keys":[{"id":"a","secret":"0123456789abcdef","eventsPerSecond":10,"burst":50,"apps":["Cookbook"],"note":"kept"}]}"#.utf8), source: "k")
        let key = try #require(keys.key(secret: "0123456789abcdef".utf8))
        #expect(key.eventsPerSecond == 10 && key.burst == 50 && key.apps == ["Cookbook"])
    }

    @Test("token buckets: a burst, then the rate; a refusal says when to come back and costs nothing")
    func rateLimiter() {
        let limiter = RateLimiter()
        #expect(limiter.take(20, name: "k", rate: 10, burst: 20, now: 0) == .admitted)
        #expect(limiter.take(5, name: "k", rate: 10, burst: 20, now: 0) == .refused(retryAfterSeconds: 1))
        #expect(limiter.take(15, name: "k", rate: 10, burst: 20, now: 1) == .refused(retryAfterSeconds: 1))
        #expect(limiter.take(10, name: "k", rate: 10, burst: 20, now: 1) == .admitted)
        #expect(limiter.take(20, name: "k", rate: 10, burst: 20, now: 2) == .refused(retryAfterSeconds: 1))
        #expect(limiter.take(20, name: "k", rate: 10, burst: 20, now: 3) == .admitted)
        // Another name has its own bucket.
        #expect(limiter.take(20, name: "other", rate: 10, burst: 20, now: 3) == .admitted)
        // A body larger than the burst fits only a full bucket, and leaves it in debt.
        #expect(limiter.take(50, name: "big", rate: 10, burst: 20, now: 0) == .admitted)
        #expect(limiter.take(1, name: "big", rate: 10, burst: 20, now: 2) == .refused(retryAfterSeconds: 2))
        // A refund gives back what a failed relay took.
        limiter.refund(20, name: "k", burst: 20)
        #expect(limiter.take(20, name: "k", rate: 10, burst: 20, now: 3) == .admitted)
    }

    @Test("the limiter forgets old names instead of growing")
    func rateLimiterBounded() {
        let limiter = RateLimiter(maximumBuckets: 100)
        for n in 0..<1_000 { _ = limiter.take(1, name: "address-\(n)", rate: 1, burst: 10, now: Double(n)) }
        #expect(limiter.take(10, name: "address-999", rate: 1, burst: 10, now: 999) == .refused(retryAfterSeconds: 1))
    }

    @Test("navlogd's reply lines: acks, rejections with escapes, store errors")
    func replies() {
        func reply(_ text: String) -> ReplyLine { Array(text.utf8).withUnsafeBytes { ReplyLine($0) } }
        let ack = reply(#"{"ack":12,"stored":9,"duplicates":2,"lsns":[4,12],"durable":true}"#)
        #expect(ack.kind == .ack && ack.integer("ack") == 12 && ack.integer("stored") == 9 && ack.integer("duplicates") == 2)
        let rejected = reply(#"{"error":"rejected","line":7,"code":"type","field":"vc.class","column":51,"reason":"expected a \"string\", found\n1 \u00e9"}"#)
        #expect(rejected.kind == .rejected && rejected.integer("line") == 7 && rejected.integer("column") == 51)
        #expect(rejected.string("field") == "vc.class" && rejected.string("reason") == "expected a \"string\", found\n1 é")
        // A member name inside a string value is not a member.
        let tricky = reply(#"{"error":"rejected","reason":"\"line\":99","line":3,"code":"x"}"#)
        #expect(tricky.integer("line") == 3)
        #expect(reply(#"{"error":"store","line":4,"stored":0,"reason":"No space left on device"}"#).kind == .store)
        #expect(reply(#"{"error":"refused","reason":"no"}"#).kind == .refused)
        #expect(reply(#"{"warning":"rate-limited"}"#).kind == .other)
    }
}
