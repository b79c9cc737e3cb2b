import Foundation  // JSONSerialization, only for lines without a `seq`

/// Numbers the events of a session that come without `seq` (1, 2, 3… per session, kept in the
/// queue across restarts), so the intake can store each exactly once.
enum SequenceNumbers {
    private static let key = Array("\"seq\"".utf8)

    /// `line` with `"seq":N` first in its object when it has a `session` and no `seq`; else
    /// `line` as it is. An app should number all of a session's events or none.
    static func numbered(_ line: [UInt8], in queue: DiskQueue) -> [UInt8] {
        if contains(line, key) { return line }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            let session = object["session"] as? String, object["seq"] == nil,
            let brace = line.firstIndex(of: UInt8(ascii: "{"))
        else { return line }
        let seq = (queue.sequences[session] ?? 0) + 1
        queue.sequences[session] = seq
        queue.sequencesDidChange()
        var out = Array(line[...brace])
        out.append(contentsOf: "\"seq\":\(seq)".utf8)
        if !object.isEmpty { out.append(UInt8(ascii: ",")) }
        out.append(contentsOf: line[(brace + 1)...])
        return out
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == needle[0] {
                var match = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return true }
            }
            index += 1
        }
        return false
    }
}
