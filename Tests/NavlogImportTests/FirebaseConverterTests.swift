import Foundation
import NavlogImport
import Testing

@Suite("Firebase BigQuery rows → navlog events")
struct FirebaseConverterTests {
    /// 2024-05-02T10:00:00Z in µs.
    static let base: Int64 = 1_714_644_000_000_000

    @Test("screen_view rows in event_timestamp, bundle and batch-index order; lifecycle rows start the session; a repeated row is kept once")
    func rows() throws {
        let result = try ImportTestSupport.convert(.firebase, ImportTestSupport.fixture("firebase-events.jsonl"), base: Self.base, chunk: 1000)
        let session = "firebase:0A1B2C3D4E5F60718293A4B5C6D7E8F9:1714644000"
        let list = "RecipeListViewController#-2203719870385551911"
        let detail = "RecipeDetailViewController#-2203719870385551912"
        let checkout = "CheckoutViewController#-2203719870385551910 “Checkout”"
        #expect(
            result.lines == [
                "1 +0 session.start \(session) app=com.example.cookbook version=2.3.1 os=iOS 17.4 device=iPhone 14 Pro",
                "2 +0 mark import source=firebase",
                "3 +200 window.root \(list)",
                "4 +200 vc.appear \(list) did",
                "5 +5000 window.root \(detail)",
                "6 +5000 vc.appear \(detail) did",
                "7 +12000 window.root \(checkout)",
                "8 +12000 vc.appear \(checkout) did",
                "9 +12000 window.root \(list)",
                "10 +12000 vc.appear \(list) did",
            ])
        #expect(result.issues.isEmpty)
        #expect(result.statistics.records == 8)
        #expect(result.statistics.ignored == 1)
        #expect(result.statistics.superseded == 1)
    }

    @Test("rows in any order give the same lines")
    func reordered() throws {
        let lines = try ImportTestSupport.fixture("firebase-events.jsonl").split(separator: 0x0A).map(Array.init)
        let original = try ImportTestSupport.convert(.firebase, ImportTestSupport.fixture("firebase-events.jsonl"), base: Self.base)
        let shuffled: [UInt8] = (lines.reversed() + [lines[2]]).flatMap { $0 + [UInt8(0x0A)] }
        #expect(try ImportTestSupport.convert(.firebase, shuffled, base: Self.base).raw == original.raw)
    }

    @Test("wrong types and missing fields are reported with line and path")
    func badRows() throws {
        func row(_ time: String, _ params: String, name: String = "screen_view", user: String = #""u""#) -> String {
            #"{"event_name":"\#(name)","event_timestamp":\#(time),"user_pseudo_id":\#(user),"event_params":\#(params)}"#
        }
        let session = #"{"key":"ga_session_id","value":{"int_value":"5"}}"#
        let screen = #"{"key":"firebase_screen_class","value":{"string_value":"AViewController"}}"#
        let input = [
            row("1714644000000000", "[\(session),\(screen)]"),
            row("\"1714644001000000\"", "[\(session),\(screen.replacingOccurrences(of: "AView", with: "BView"))]"),
            row("\"later\"", "[\(session),\(screen)]"),
            row("1714644002000000", "[\(screen)]"),
            row("1714644002000000", #"[{"key":"ga_session_id","value":{"string_value":"five"}},\#(screen)]"#),
            row("1714644002000000", #"{"ga_session_id":5}"#),
            row("1714644002000000", "[\(session)]"),
            row("1714644002000000", "[\(session),\(screen)]", user: "12"),
            row("1714644002000000", "[\(session),\(screen)]", user: "null"),
            #"{"event_name":5}"#,
            row("1714644003000000", "[\(session)]", name: "in_app_purchase"),
        ].joined(separator: "\n")
        let result = try ImportTestSupport.convert(.firebase, Array(input.utf8), base: Self.base)
        #expect(
            result.issues.map(\.description) == [
                "line 3, event_timestamp: \"later\" is neither an ISO 8601 time nor a number; the row was skipped",
                "line 4, event_params: the row has no ga_session_id parameter, so its session is unknown; the row was skipped",
                "line 5, event_params.ga_session_id: expected an integer, found a string; the row was skipped",
                "line 6, event_params: expected an array of {key, value}, found an object; the row was skipped",
                "line 7, event_params: a screen_view needs firebase_screen_class or firebase_screen; the row was skipped",
                "line 9, user_pseudo_id: expected a non-empty string, found null; the row was skipped",
                "line 10, event_name: expected a string, found a number; the row was skipped",
            ])
        #expect(
            result.lines == [
                "1 +2000 session.start firebase:12:5 app=firebase",
                "2 +2000 mark import source=firebase",
                "3 +2000 window.root AViewController",
                "4 +2000 vc.appear AViewController did",
                "1 +0 session.start firebase:u:5 app=firebase",
                "2 +0 mark import source=firebase",
                "3 +0 window.root AViewController",
                "4 +0 vc.appear AViewController did",
                "5 +1000 window.root BViewController",
                "6 +1000 vc.appear BViewController did",
            ])
        #expect(result.statistics.ignored == 1)
        #expect(result.statistics.skipped == 7)
    }
}
