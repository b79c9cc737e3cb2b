import Foundation

/// One figure of a benchmark: navlog's value next to its baseline measured in the same run.
struct Row {
    var figure: String
    var value: String
    var baseline = ""
    var ratio = ""
    var goal = ""
    /// Whether the goal is met; `nil` for figures that are only recorded.
    var met: Bool? = nil
}

/// Prints benchmark rows as an aligned table and hands them to `tools/bench/all`.
enum BenchmarkTable {
    /// Prints `rows` under a header, columns aligned.
    static func print(_ rows: [Row]) {
        let header = Row(figure: "figure", value: "navlog", baseline: "baseline (same run)", ratio: "ratio", goal: "goal")
        let all = [header] + rows
        func width(_ column: KeyPath<Row, String>) -> Int { all.map { $0[keyPath: column].count }.max() ?? 0 }
        let widths = [width(\.figure), width(\.value), width(\.baseline), width(\.ratio)]
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        for row in all {
            let goal = row.goal + (row.met.map { $0 ? " ✔" : " ✘" } ?? "")
            Swift.print([pad(row.figure, widths[0]), pad(row.value, widths[1]), pad(row.baseline, widths[2]), pad(row.ratio, widths[3]), goal].joined(separator: " | "))
        }
    }

    /// Appends `rows` as JSON Lines to the file `NAVLOG_BENCH_FIGURES` names, if it is set:
    /// `tools/bench/all` gathers every benchmark's figures there into one table.
    static func record(_ rows: [Row], benchmark: String) {
        guard let path = ProcessInfo.processInfo.environment["NAVLOG_BENCH_FIGURES"], !path.isEmpty else { return }
        var text = ""
        for row in rows {
            var object: [String: Any] = [
                "benchmark": benchmark, "figure": row.figure, "navlog": row.value, "baseline": row.baseline, "ratio": row.ratio, "goal": row.goal,
            ]
            if let met = row.met { object["met"] = met }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { continue }
            text += String(decoding: data, as: UTF8.self) + "\n"
        }
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            FileHandle.standardError.write(Data("navlog-bench: cannot write figures to \(path) (NAVLOG_BENCH_FIGURES).\n".utf8))
            return
        }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        handle.closeFile()
    }
}
