import NavlogEvents
import Testing

@Suite("The event codec")
struct CodecTests {
    static let peer = PeerCredentials(uid: 1, gid: 2, pid: 3)

    @Test(
        "RFC 3339 times become exact µs, offsets applied, extra digits truncated",
        arguments: [
            ("1970-01-01T00:00:00Z", Int64(0)),
            ("2025-11-21T10:00:00.123456Z", 1_763_719_200_123_456),
            ("2025-11-21T10:00:00.1234569Z", 1_763_719_200_123_456),
            ("2025-11-21T12:00:00.5+02:00", 1_763_719_200_500_000),
            ("2024-02-29T23:59:59.999999Z", 1_709_251_199_999_999),
            ("1969-12-31T23:59:59Z", -1_000_000),
        ])
    func rfc3339(text: String, micros: Int64) {
        #expect(RFC3339.microseconds(text) == micros)
    }

    @Test(
        "invalid RFC 3339 times are refused",
        arguments: [
            "2025-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2025-11-21 10:00:00Z", "2025-11-21T10:00:00",
            "2025-11-21t10:00:00z", "2025-11-21T24:00:00Z", "2025-11-21T10:00:60Z", "0000-01-01T00:00:00Z", "yesterday",
        ])
    func rfc3339Invalid(text: String) {
        #expect(RFC3339.microseconds(text) == nil)
    }

    @Test("formatting and parsing RFC 3339 are inverse")
    func rfc3339Format() {
        for micros: Int64 in [0, 1, 1_763_719_200_123_456, 253_402_300_799_999_999] {
            #expect(RFC3339.microseconds(RFC3339.format(microseconds: micros)) == micros)
        }
    }

    @Test("the parser fills the batch: envelope in the header, fields in order in the body")
    func batchContents() throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        let kind = try parser.parse(
            #"{"seq":7,"type":"present","session":"s-1","from":"0x1","vc":{"id":"0x2","class":"A"},"style":"popover","anchor":{"barButtonItem":"share"},"ts":"2025-11-21T10:00:00Z","_ignored":[1,{"x":2}]}"#,
            lineNumber: 9, receivedAt: 55, peer: Self.peer, into: &batch)
        #expect(kind == .event)
        let header = try #require(batch.headers.first)
        #expect(header.type == .present)
        #expect(header.sequence == 7)
        #expect(header.timestamp == 1_763_719_200_000_000)
        #expect(!header.timestampWasMissing)
        #expect(header.receivedAt == 55)
        #expect(header.peer == Self.peer)
        #expect(header.sourceLine == 9)
        #expect(batch.session(of: 0) == "s-1")
        // A missing ts is the receive time; hello and blank lines add nothing.
        _ = try parser.parse(#"{"type":"app.background","session":"s-1"}"#, receivedAt: 77, into: &batch)
        #expect(batch.headers[1].timestamp == 77 && batch.headers[1].timestampWasMissing)
        #expect(try parser.parse(#"{"hello":1,"client":"demo","ack":"durable"}"#, into: &batch) == .hello(HelloLine(version: 1, client: "demo", ack: .durable)))
        #expect(try parser.parse("   ", into: &batch) == .blank)
        #expect(batch.count == 2)
    }

    @Test("a rejected line leaves the batch untouched")
    func rejectionLeavesBatch() throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        _ = try parser.parse(#"{"type":"mark","session":"a","name":"n"}"#, into: &batch)
        let before = (batch.count, batch.bytes)
        #expect(throws: EventRejection.self) {
            try parser.parse(#"{"type":"mark","session":"a","name":"n","props":{"k":{}}}"#, into: &batch)
        }
        #expect(batch.count == before.0 && batch.bytes == before.1)
    }

    @Test("the framer numbers lines the same whatever the chunk sizes, and never keeps an over-long line")
    func framerChunking() {
        let text = Array("a\n\nbcd\r\n".utf8) + [UInt8](repeating: 0x78, count: 50) + Array("\nlast".utf8)
        var reference: [String] = []
        for chunk in [1, 2, 3, 7, 64, 1000] {
            var framer = LineFramer(maximumLineLength: 20)
            var seen: [String] = []
            var offset = 0
            let handle = { (number: Int, piece: LineFramer.Piece) in
                switch piece {
                case .line(let bytes): seen.append("\(number):\(String(decoding: bytes, as: UTF8.self))")
                case .tooLong(let length): seen.append("\(number):too long \(length)")
                }
            }
            while offset < text.count {
                let end = min(offset + chunk, text.count)
                text[offset..<end].withUnsafeBytes { framer.feed($0, handle) }
                offset = end
            }
            framer.finish(handle)
            if reference.isEmpty { reference = seen }
            #expect(seen == reference, "chunk size \(chunk)")
        }
        #expect(reference == ["1:a", "2:", "3:bcd\r", "4:too long 50", "5:last"])
    }
}
