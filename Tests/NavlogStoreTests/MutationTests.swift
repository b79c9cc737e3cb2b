import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// Random damage to valid lines: the codec must answer every one (accept or reject with a
/// located reason) and whatever it accepts must come back out of the log as valid JSON.
@Suite("The codec under random mutation")
struct MutationTests {
    @Test("20,000 mutated lines: no crash, every rejection located, every accepted line round-trips")
    func mutatedLines() throws {
        let good = try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl")))
            .filter { $0.count < 4096 && $0.first == UInt8(ascii: "{") }
        var random = SplitMix64(seed: 2026)
        var parser = EventLineParser()
        var batch = EventBatch()
        var accepted = 0, rejected = 0
        for round in 0..<20_000 {
            var line = good[Int(random.next() % UInt64(good.count))]
            switch random.next() % 5 {
            case 0:  // flip a bit
                let bit = Int(random.next() % UInt64(line.count * 8))
                line[bit / 8] ^= 1 << UInt8(bit % 8)
            case 1:  // insert a random byte
                line.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(line.count + 1)))
            case 2:  // delete a byte
                line.remove(at: Int(random.next() % UInt64(line.count)))
            case 3:  // truncate
                line.removeLast(Int(random.next() % UInt64(line.count)))
            default:  // splice two lines
                let other = good[Int(random.next() % UInt64(good.count))]
                line = Array(line.prefix(Int(random.next() % UInt64(line.count)))) + Array(other.suffix(Int(random.next() % UInt64(other.count))))
            }
            let outcome: Result<EventLineParser.Line, EventRejection> = line.withUnsafeBytes { raw in
                do throws(EventRejection) {
                    return .success(try parser.parse(raw, lineNumber: round + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch))
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(.event): accepted += 1
            case .success: break
            case .failure(let rejection):
                rejected += 1
                #expect(rejection.line == round + 1)
                #expect(!rejection.reason.isEmpty)
            }
        }
        #expect(accepted > 1000 && rejected > 1000, "the mutations hit both sides (\(accepted) accepted, \(rejected) rejected)")
        // Everything accepted goes through the log and back out as JSON that parses.
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path)
            try log.append(batch)
            try log.close()
            let reader = try LogReader(directory: dir.path)
            var count = 0
            var bytes: [UInt8] = []
            try reader.scan(LogQuery()) { block, index in
                bytes.removeAll(keepingCapacity: true)
                try block.appendJSONLine(index, to: &bytes)
                #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil, "stored event \(count) is valid JSON")
                count += 1
                return true
            }
            #expect(count == accepted)
            #expect(reader.damage.isEmpty)
        }
    }
}
