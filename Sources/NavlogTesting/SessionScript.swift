/// Event lines of one session, written by hand: each with the next `seq` and a time `after`
/// microseconds past the previous one.
public struct SessionScript {
    /// The session's id.
    public let session: String
    private var lines: [String] = []
    private var seq = 0
    private var time: Int64 = 1_763_715_600_000_000

    /// A session with no events yet.
    public init(session: String) { self.session = session }

    /// Adds an event of `type` with `fields` (JSON members, without braces), `delay` µs after the previous one.
    public mutating func event(_ type: String, after delay: Int64 = 0, _ fields: String) {
        seq += 1
        time += delay
        lines.append(#"{"type":"\#(type)","session":"\#(session)","seq":\#(seq),"ts":\#(time)\#(fields.isEmpty ? "" : ",")\#(fields)}"#)
    }

    /// The opening most hand-written navigation sessions share: the session starts in "Shop",
    /// a navigation controller is the window's root, the list is pushed at launch (no
    /// animation) and the detail `detailAfter` µs later (animated): seq 1–4, [list, detail].
    public mutating func openListThenDetail(detailAfter delay: Int64) {
        event("session.start", #""app":"Shop""#)
        event("window.root", #""vc":{"id":"nav","class":"UINavigationController"}"#)
        event("nav.push", #""nav":"nav","vc":{"id":"list","class":"ListViewController"},"animated":false"#)
        event("nav.push", after: delay, #""nav":"nav","vc":{"id":"detail","class":"DetailViewController"},"animated":true"#)
    }

    /// The lines as a JSON Lines file's text.
    public var text: String { lines.joined(separator: "\n") + "\n" }
}

extension SessionScript {
    /// A navigation-only session whose cancelled swipe-back only a call several operations later
    /// proves (E7): list (launch) → push detail at 1 s → a swipe-back begun at 5 s (seq 5,
    /// cancelled) → push edit at 8 s → edit popped (no animation) at 12 s → the detail presents a
    /// sheet at 15 s (the proof) → the sheet dismissed at 17 s → end at 18 s.
    public static func lateProvedCancelledSwipe(session: String) -> String {
        var script = SessionScript(session: session)
        func event(_ type: String, after delay: Int64 = 0, _ fields: String) { script.event(type, after: delay, fields) }
        script.openListThenDetail(detailAfter: 1_000_000)
        event("nav.pop", after: 4_000_000, #""nav":"nav","animated":true"#)
        event("nav.push", after: 3_000_000, #""nav":"nav","vc":{"id":"edit","class":"EditViewController"},"animated":true"#)
        event("nav.pop", after: 4_000_000, #""nav":"nav","animated":false"#)
        event("present", after: 3_000_000, #""from":"detail","vc":{"id":"share","class":"ShareViewController"},"style":"pageSheet","animated":true"#)
        event("dismiss", after: 2_000_000, #""vc":"share","animated":false"#)
        event("session.end", after: 1_000_000, "")
        return script.text
    }

    /// A navigation-only session that proves `count` swipe-backs cancelled, one after the other:
    /// each time the user starts swiping back from the detail and lets go (UIKit calls the pop),
    /// pushes an editor and comes back, then shares from the detail, which proves the detail
    /// never left (E7). By the rules, by hand: the stack ends [list, detail] with the detail
    /// focused, every gesture rolled back and no anomaly.
    public static func repeatedlyProvedCancelledSwipes(session: String, count: Int) -> String {
        var script = SessionScript(session: session)
        func event(_ type: String, after delay: Int64 = 0, _ fields: String) { script.event(type, after: delay, fields) }
        script.openListThenDetail(detailAfter: 1_000_000)
        for round in 0..<count {
            event("nav.pop", after: 4_000_000, #""nav":"nav","animated":true"#)
            event("nav.push", after: 3_000_000, #""nav":"nav","vc":{"id":"edit\#(round)","class":"EditViewController"},"animated":true"#)
            event("nav.pop", after: 4_000_000, #""nav":"nav","animated":false"#)
            event("present", after: 3_000_000, #""from":"detail","vc":{"id":"share\#(round)","class":"ShareViewController"},"style":"pageSheet","animated":true"#)
            event("dismiss", after: 2_000_000, #""vc":"share\#(round)","animated":false"#)
        }
        return script.text
    }
}
