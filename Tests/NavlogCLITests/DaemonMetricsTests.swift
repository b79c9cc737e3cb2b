import Foundation
import NavlogTesting
import Testing

/// navlogd's Prometheus endpoint (opt-in `metricsAddress`, loopback only), read with curl the way
/// a scraper or an operator reads it.
@Suite("navlogd metrics for Prometheus")
struct DaemonMetricsTests {
    static func curl(_ url: String) throws -> ProcessResult {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-w", "\n%{http_code}", url], timeout: 30)
    }

    @Test(
        "counters, gauges and latency histograms follow what navlogd did; other paths are 404",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func scrape() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let port = Int.random(in: 20_000...40_000)
            let config = try DaemonEndToEndTests.write(Array(#"{"metricsAddress": "127.0.0.1:\#(port)"}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let client = try SocketClient(path: daemon.socket)
            let lines = (1...50).map { #"{"type":"mark","session":"m","seq":\#($0),"name":"n"}"# } + ["{not json"]
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + lines.joined(separator: "\n") + "\n" + #"{"type":"mark","session":"m","seq":3,"name":"n"}"# + "\n")
            _ = client.readUntil { ($0["ack"] as? Int ?? 0) >= 53 }
            client.close()
            let scrape = try Self.curl("http://127.0.0.1:\(port)/metrics")
            #expect(scrape.output.hasSuffix("\n200"), "\(scrape.output)")
            let metrics = scrape.output
            for expected in [
                "navlogd_events_stored_total 50", "navlogd_events_duplicate_total 1", #"navlogd_lines_rejected_total{reason="#,
                "navlogd_connections_total", "navlogd_sequence_missing 0", "navlogd_ack_latency_seconds_count ",
                "navlogd_fsync_duration_seconds_count", "navlogd_writer_queue_bytes",
            ] {
                #expect(metrics.contains(expected), "no \(expected) in \(metrics)")
            }
            // Counters only grow: a second scrape after more events adds to them.
            let more = try SocketClient(path: daemon.socket)
            try more.send(#"{"hello":1,"ack":"batch"}"# + "\n" + #"{"type":"mark","session":"m","seq":51,"name":"n"}"# + "\n")
            _ = more.readUntil { $0["ack"] != nil }
            more.close()
            #expect(try Self.curl("http://127.0.0.1:\(port)/metrics").output.contains("navlogd_events_stored_total 51"))
            #expect(try Self.curl("http://127.0.0.1:\(port)/other").output.hasSuffix("\n404"))
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("a metricsAddress that is not loopback is refused at start with a sentence saying why")
    func loopbackOnly() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try DaemonEndToEndTests.write(Array(#"{"metricsAddress": "0.0.0.0:9477"}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let result = try ProcessRunner.run(
                TestEnvironment.binaries.appendingPathComponent("navlogd"),
                ["--config", config.path, "--socket", dir.appendingPathComponent("s.sock").path, "--data-dir", dir.appendingPathComponent("d").path], timeout: 30)
            #expect(result.status != 0)
            #expect(result.errorOutput.contains("is not a loopback address"), "\(result.errorOutput)")
        }
    }
}
