import NavlogEvents
import Testing

/// `{"relay":"KEY-ID"}`: a relay's line saying which key sent the events after it.
@Suite("relay lines")
struct RelayLineTests {
    static let peer = PeerCredentials(uid: 1, gid: 2, pid: 3)

    static func parse(_ line: String, peer: PeerCredentials = peer) throws(EventRejection) -> (EventLineParser.Line, EventBatch) {
        var parser = EventLineParser()
        var batch = EventBatch()
        let result = try parser.parse(line, lineNumber: 7, peer: peer, into: &batch)
        return (result, batch)
    }

    @Test(
        "a relay line names a key id or null and appends nothing",
        arguments: [
            (#"{"relay":"ios-prod"}"#, "ios-prod"),
            (#" { "relay" : "A.b_c-9" } "#, "A.b_c-9"),
            (#"{"relay":"\#(String(repeating: "x", count: 64))"}"#, String(repeating: "x", count: 64)),
            (#"{"relay":null}"#, nil),
            // Any line with a relay member is a relay line, whatever else it holds.
            (#"{"type":"mark","session":"s","name":"n","relay":"k"}"#, "k"),
        ] as [(String, String?)])
    func valid(line: String, key: String?) throws {
        let (result, batch) = try Self.parse(line)
        #expect(result == .relay(key.map { RelayKey($0)! } ?? .none))
        #expect(batch.isEmpty)
        if let key { #expect(RelayKey(key)?.name == key) }
    }

    @Test(
        "a malformed key id is rejected with the field relay",
        arguments: [
            (#"{"relay":""}"#, "empty"),
            (#"{"relay":"\#(String(repeating: "x", count: 65))"}"#, "range"),
            (#"{"relay":"ios prod"}"#, "pattern"),
            (#"{"relay":"ios/prod"}"#, "pattern"),
            (#"{"relay":"clé"}"#, "pattern"),
            (#"{"relay":"a\nb"}"#, "pattern"),
            (#"{"relay":5}"#, "type"),
            (#"{"relay":true}"#, "type"),
            (#"{"relay":["ios-prod"]}"#, "type"),
            (#"{"relay":{"id":"ios-prod"}}"#, "type"),
        ])
    func malformed(line: String, code: String) {
        #expect {
            _ = try Self.parse(line)
        } throws: { error in
            guard let rejection = error as? EventRejection else { return false }
            return rejection.code.name == code && rejection.path == "relay" && rejection.line == 7 && !rejection.reason.isEmpty
        }
    }

    @Test("an event parsed with a relay key carries it in its header; a client's _key is ignored")
    func keyedEvent() throws {
        let key = RelayKey("ios-prod")!
        var keyed = Self.peer
        keyed.relayKey = key
        let (result, batch) = try Self.parse(#"{"type":"app.foreground","session":"s","seq":4,"_key":"forged"}"#, peer: keyed)
        #expect(result == .event)
        #expect(batch.headers.first?.peer.relayKey == key)
        // Without a relay's key, _key is just an ignored key.
        let (_, plain) = try Self.parse(#"{"type":"app.foreground","session":"s","seq":4,"_key":"forged"}"#)
        #expect(plain.headers.first?.peer.relayKey == RelayKey.none)
        #expect(plain.bytes == batch.bytes, "the body holds no _key")
    }

    @Test("an event a relay passes on with a key needs seq; without a key it does not")
    func keyedEventNeedsSeq() throws {
        var keyed = Self.peer
        keyed.relayKey = RelayKey("ios-prod")!
        #expect {
            _ = try Self.parse(#"{"type":"app.foreground","session":"s"}"#, peer: keyed)
        } throws: { error in
            guard let rejection = error as? EventRejection else { return false }
            return rejection.code == .missing && rejection.path == "seq" && rejection.reason.contains("stored once")
        }
        #expect(try Self.parse(#"{"type":"app.foreground","session":"s"}"#).0 == .event)
    }

    @Test("key ids intern to one number per name, and the checks agree with the parser")
    func interning() {
        #expect(RelayKey("ios-prod") == RelayKey("ios-prod"))
        #expect(RelayKey("ios-prod") != RelayKey("ios-dev"))
        #expect(RelayKey("") == nil && RelayKey("a b") == nil && RelayKey(String(repeating: "k", count: 65)) == nil)
        #expect(RelayKey.none.isNone && RelayKey.none.name == nil && RelayKey.none.bytes.isEmpty)
        #expect(RelayKey("ios-prod")!.bytes == Array("ios-prod".utf8))
    }
}
