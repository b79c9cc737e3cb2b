import Foundation
import Glibc
import NIOCore
import NavlogEvents

/// A decoded body cut into lines and made ready for navlogd's socket: every line ended by a
/// newline, none over the line limit, and no transport line (hello, control, relay) left in
/// it: on the intake's connection navlogd would take those as the intake's own, so a device
/// could switch the key its events are stored under. Such lines are blanked (navlogd skips a
/// blank line, and the line numbers stay the body's) and reported as rejected by the intake.
struct BodyLines {
    /// The lines, each ending in `\n`, as they go to navlogd.
    var buffer: ByteBuffer
    /// Lines in the body (blank ones included: navlogd numbers them too).
    var count: Int
    /// Lines that are not blank: what the rate limit counts.
    var events: Int
    /// Lines the intake refused itself (transport lines).
    var rejected: [RelayOutcome.Rejection]
    /// `session.start` lines, for a key limited to some apps: (line, its bytes' range).
    private var sessionStarts: [(line: Int, range: Range<Int>)]

    /// A line over the limit.
    struct LineTooLong: Error {
        /// Its number within the body, from 1.
        var line: Int
        /// Its length in bytes.
        var length: Int
    }

    /// Cuts `body` into lines.
    static func split(_ body: [UInt8], maximumLineBytes: Int) -> Result<BodyLines, LineTooLong> {
        var buffer = ByteBufferAllocator().buffer(capacity: body.count + 1)
        var lines = BodyLines(buffer: buffer, count: 0, events: 0, rejected: [], sessionStarts: [])
        var parser = EventLineParser(maximumLineLength: maximumLineBytes)
        var scratch = EventBatch()
        let peer = PeerCredentials(uid: 0, gid: 0, pid: 0)
        let failure: LineTooLong? = body.withUnsafeBytes { bytes -> LineTooLong? in
            var start = 0
            while start < bytes.count {
                let end = Self.newline(in: bytes, from: start)
                lines.count += 1
                let length = end - start
                if length > maximumLineBytes { return LineTooLong(line: lines.count, length: length) }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                var transport: String?
                do {
                    switch try parser.parse(line, lineNumber: lines.count, receivedAt: 0, peer: peer, into: &scratch) {
                    case .event:
                        lines.events += 1
                        if let header = scratch.headers.last, header.type == .sessionStart {
                            lines.sessionStarts.append((lines.count, buffer.writerIndex..<(buffer.writerIndex + length)))
                        }
                    case .blank: break
                    case .hello: transport = "hello"
                    case .control: transport = "control"
                    case .relay: transport = "relay"
                    }
                } catch {
                    // navlogd rejects it with the same reason; it is still a line to count.
                    lines.events += 1
                }
                scratch.removeAll()
                if let transport {
                    lines.rejected.append(
                        RelayOutcome.Rejection(
                            line: lines.count, code: "forbidden", field: transport, column: nil,
                            reason: "a \"\(transport)\" line speaks to navlogd's socket; a device sends only events through the intake"))
                    buffer.writeInteger(UInt8(0x0A))
                } else {
                    buffer.writeBytes(line)
                    buffer.writeInteger(UInt8(0x0A))
                }
                start = end + 1
            }
            return nil
        }
        if let failure { return .failure(failure) }
        lines.buffer = buffer
        return .success(lines)
    }

    /// The index of the first newline at or after `start`, or the end.
    private static func newline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start) else { return bytes.count }
        return UnsafeRawPointer(found) - base
    }

    /// The first `session.start` whose `app` is not in `apps`.
    func firstSessionStart(outside apps: Set<String>) -> (number: Int, app: String)? {
        for start in sessionStarts {
            guard let bytes = buffer.getBytes(at: start.range.lowerBound, length: start.range.count),
                let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            else { continue }
            let app = object["app"] as? String ?? ""
            if !apps.contains(app) { return (start.line, app) }
        }
        return nil
    }
}
