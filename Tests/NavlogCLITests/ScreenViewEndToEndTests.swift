import Foundation
import NavlogTesting
import Testing

/// Screens are what the user saw (rule E3): a focus replaced at the instant it began is no
/// view, a container is no screen, and `navlog timeline`'s focus and the analytics tables agree.
/// Expected rows are written out by hand from the rules.
@Suite("Screen views as the user saw them (E3) end to end")
struct ScreenViewEndToEndTests {
    static let t0: Int64 = 1_763_715_600_000_000
    static func line(_ seq: Int, _ seconds: Double, _ type: String, _ fields: String = "") -> String {
        #"{"type":"\#(type)","session":"e3","seq":\#(seq),"ts":\#(t0 + Int64(seconds * 1_000_000))\#(fields.isEmpty ? "" : "," + fields)}"#
    }

    /// Launch builds a tab bar of two empty navigation controllers and pushes their roots, all at
    /// t=0; Feed for 5 s; a full-screen navigation controller presented empty and its root
    /// EditProfile pushed at the same instant; 4 s later dismissed; a deep link pushes Post and
    /// Comments at one instant (Post is no view); 3 s on Comments, then the session ends.
    static let session: [String] = [
        line(1, 0, "session.start", #""app":"Social","version":"1.0","idiom":"phone","traits":{"h":"compact","v":"regular"}"#),
        line(2, 0, "window.root", #""vc":{"id":"tab","class":"UITabBarController"}"#),
        line(3, 0, "tab.set", #""tab":"tab","vcs":[{"id":"n1","class":"UINavigationController"},{"id":"n2","class":"UINavigationController"}],"selected":0"#),
        line(4, 0, "nav.push", #""nav":"n1","vc":{"id":"feed","class":"FeedViewController"},"animated":false"#),
        line(5, 0, "nav.push", #""nav":"n2","vc":{"id":"search","class":"SearchViewController"},"animated":false"#),
        line(6, 5, "present", #""from":"feed","vc":{"id":"modal","class":"UINavigationController"},"style":"fullScreen","animated":true"#),
        line(7, 5, "nav.push", #""nav":"modal","vc":{"id":"edit","class":"EditProfileViewController"},"animated":false"#),
        line(8, 9, "dismiss", #""vc":"edit","animated":true"#),
        line(9, 12, "nav.push", #""nav":"n1","vc":{"id":"post","class":"PostViewController"},"animated":false"#),
        line(10, 12, "nav.push", #""nav":"n1","vc":{"id":"comments","class":"CommentsViewController"},"animated":false"#),
        line(11, 15, "session.end"),
    ]

    static func ingest(_ dir: URL) throws -> String {
        let file = dir.appendingPathComponent("e3.jsonl")
        try (session.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let data = dir.appendingPathComponent("data").path
        let result = try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", data, file.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        return data
    }

    static func rows(_ data: String, _ sql: String) throws -> [[String: Any]] {
        let result = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "--format", "json", sql])
        #expect(result.status == 0, "\(result.errorOutput)")
        return result.output.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }

    @Test("views, transitions and dwell: no container, no instant view, the wrapped modal is one present")
    func views() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(dir)
            let visits = try Self.rows(data, #"SELECT screen, how, dwell, "index" FROM screen_visits ORDER BY "index""#)
            let summary = visits.map { "\($0["index"]!) \($0["screen"]!) \($0["how"]!) \(($0["dwell"] as! Int) / 1_000_000)s" }
            // E3: Feed 0–5 s; EditProfile 5–9 s, reached by the present (the instant of the empty
            // navigation controller is no view and gives its cause to what follows); Feed again
            // 9–12 s; Post replaced at the instant it came is no view; Comments 12–15 s.
            #expect(
                summary == [
                    "0 FeedViewController root 5s", "1 EditProfileViewController present 4s", "2 FeedViewController dismiss 3s", "3 CommentsViewController push 3s",
                ])
            let transitions = try Self.rows(data, #"SELECT "from", "to", how FROM transitions ORDER BY timestamp"#)
            let pairs = transitions.map { "\($0["from"] as? String ?? "-") → \($0["to"]!) (\($0["how"]!))" }
            #expect(
                pairs == [
                    "- → FeedViewController (root)", "FeedViewController → EditProfileViewController (present)",
                    "EditProfileViewController → FeedViewController (dismiss)", "FeedViewController → CommentsViewController (push)",
                ])
            let sessions = try Self.rows(data, "SELECT visits, screens, exit_screen FROM sessions")
            #expect(sessions.count == 1)
            #expect(sessions.first?["visits"] as? Int == 4)
            #expect(sessions.first?["screens"] as? Int == 3)
            #expect(sessions.first?["exit_screen"] as? String == "CommentsViewController")
            let screens = try ProcessRunner.navlog(["query", "screens", "--data-dir", data, "--format", "json"])
            #expect(!screens.output.contains("UINavigationController") && !screens.output.contains("UITabBarController"), "\(screens.output)")
        }
    }

    @Test("navlog timeline's focus, kept where it holds for a positive time, is the screen_visits table")
    func timelineAgrees() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(dir)
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", "e3", "--format", "json"])
            #expect(timeline.status == 0, "\(timeline.errorOutput)")
            var views: [String] = []
            var current: (focus: String, since: Int)?
            for line in timeline.output.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                let focus = object["focus"] as? String
                let ts = object["ts"] as! Int
                guard focus != current?.focus else { continue }
                if let current, ts > current.since { views.append(current.focus) }
                current = focus.map { ($0, ts) }
            }
            if let current { views.append(current.focus) }
            let visits = try Self.rows(data, #"SELECT controller FROM screen_visits ORDER BY "index""#).map { $0["controller"] as! String }
            #expect(views == visits)
            #expect(visits == ["feed", "edit", "feed", "comments"])
        }
    }
}
