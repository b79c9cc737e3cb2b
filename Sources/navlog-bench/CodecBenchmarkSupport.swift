import Foundation

// The codec benchmark's helpers: running its zstd baselines, the sizes of what they and the
// log wrote, and the figures' formatting.

/// Runs `command` with /bin/sh; returns how long it took and its exit status.
@discardableResult
func shell(_ command: String) -> (seconds: Double, status: Int32) {
    let start = monotonic()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try! process.run()
    process.waitUntilExit()
    return (monotonic() - start, process.terminationStatus)
}

/// The size of the file at `path` in bytes (0 when it cannot be read).
func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}

/// The bytes a log directory's segments (`.zst`) and indexes (`.idx`) take.
func directorySize(_ path: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.filter { $0.hasSuffix(".zst") || $0.hasSuffix(".idx") }.reduce(0) { $0 + fileSize(path + "/" + $1) }
}

/// `value` with a k or M prefix before `unit` (`1.23M events/s`, `456.7k events/s`).
func format(_ value: Double, _ unit: String) -> String {
    if value >= 1e6 { return String(format: "%.2fM %@", value / 1e6, unit) }
    if value >= 1e3 { return String(format: "%.1fk %@", value / 1e3, unit) }
    return String(format: "%.2f %@", value, unit)
}
