import Foundation
import NavlogJSON
import NavlogSimulation

/// `navlog simulate --templates K --to SOCKET`: load generation at full speed. K sessions are
/// simulated (and checked against the replay engine) first; then every session sent is one of
/// them under a new session id and shifted in time, written over several connections without
/// waiting for acknowledgements. The events stay valid UIKit; only the variety is limited to K.
struct SimulatedLoad {
    /// One template line cut around what a clone changes: its session id and its time.
    struct TemplateLine {
        var bytes: [UInt8]
        var sessionRange: Range<Int>
        var timestampRange: Range<Int>
        var timestamp: Int64
    }

    /// The templates, each the lines of one simulated session in order.
    var templates: [[TemplateLine]] = []
    /// How long the longest template lasts (µs), to spread clones in time.
    var span: Int64 = 1

    /// Simulates `count` sessions with `simulator` and cuts them into templates.
    init(_ simulator: inout StoryboardSimulator) throws {
        var bySession: [String: Int] = [:]
        var lines: [[UInt8]] = []
        while simulator.step(into: &lines) {}
        for line in lines {
            guard let cut = Self.cut(line) else { throw CLIError("the simulator wrote a line it cannot clone: \(String(decoding: line, as: UTF8.self))") }
            let session = String(decoding: line[cut.sessionRange], as: UTF8.self)
            let index =
                bySession[session]
                ?? {
                    templates.append([])
                    bySession[session] = templates.count - 1
                    return templates.count - 1
                }()
            templates[index].append(cut)
        }
        for template in templates {
            if let first = template.first?.timestamp, let last = template.last?.timestamp { span = max(span, last - first) }
        }
    }

    /// Finds the session id and the time in a line the simulator wrote (`"session":"…"` and `"ts":N`).
    static func cut(_ line: [UInt8]) -> TemplateLine? {
        func find(_ needle: StaticString, from start: Int = 0) -> Int? {
            let pattern = UnsafeRawBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
            guard line.count >= pattern.count else { return nil }
            var index = start
            while index <= line.count - pattern.count {
                if line[index..<(index + pattern.count)].elementsEqual(pattern) { return index + pattern.count }
                index += 1
            }
            return nil
        }
        guard let sessionStart = find(#""session":""#), let sessionEnd = line[sessionStart...].firstIndex(of: UInt8(ascii: "\"")),
            let timeStart = find(#""ts":"#, from: sessionEnd)
        else { return nil }
        var timeEnd = timeStart
        while timeEnd < line.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[timeEnd]) { timeEnd += 1 }
        guard let timestamp = Int64(String(decoding: line[timeStart..<timeEnd], as: UTF8.self)) else { return nil }
        return TemplateLine(bytes: line, sessionRange: sessionStart..<sessionEnd, timestampRange: timeStart..<timeEnd, timestamp: timestamp)
    }

    /// Appends clone `number` of its template to `output`.
    func appendClone(_ number: Int, seed: UInt64, to output: inout [UInt8]) {
        let template = templates[number % templates.count]
        let id = Array("load-\(seed)-\(number)".utf8)
        // Clones start spread over the templates' span, so live sessions overlap as in real traffic.
        let shift = Int64(number / templates.count) * span / 4 + Int64(number % 997) * 1_000
        JSONWriter.appending(to: &output) { json in
            for line in template {
                json.raw(line.bytes[..<line.sessionRange.lowerBound])
                json.raw(id)
                json.raw(line.bytes[line.sessionRange.upperBound..<line.timestampRange.lowerBound])
                json.integer(line.timestamp + shift)
                json.raw(line.bytes[line.timestampRange.upperBound...])
            }
        }
    }

    /// Events in `sessions` clones.
    func events(sessions: Int) -> Int {
        (0..<sessions).reduce(0) { $0 + templates[$1 % templates.count].count }
    }

    /// Sends `sessions` clones over `connections` connections at full speed (one thread each,
    /// no acknowledgements asked); returns when all is written.
    func send(sessions: Int, seed: UInt64, to socket: String, connections: Int) throws {
        let failure = FirstFailure()
        let done = DispatchGroup()
        for worker in 0..<connections {
            done.enter()
            Thread { [self] in
                defer { done.leave() }
                do {
                    let connection = try UnixSocket(path: socket)
                    var buffer: [UInt8] = []
                    buffer.reserveCapacity(1 << 20)
                    var number = worker
                    while number < sessions {
                        appendClone(number, seed: seed, to: &buffer)
                        if buffer.count >= 512 << 10 {
                            try buffer.withUnsafeBytes { try connection.write($0) }
                            buffer.removeAll(keepingCapacity: true)
                        }
                        number += connections
                    }
                    try buffer.withUnsafeBytes { try connection.write($0) }
                } catch {
                    failure.record(error)
                }
            }.start()
        }
        done.wait()
        if let error = failure.error { throw error }
    }
}

/// The first error any sender thread met.
final class FirstFailure: @unchecked Sendable {
    // `@unchecked`: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: (any Error)?

    func record(_ error: any Error) { lock.withLock { if stored == nil { stored = error } } }
    var error: (any Error)? { lock.withLock { stored } }
}
