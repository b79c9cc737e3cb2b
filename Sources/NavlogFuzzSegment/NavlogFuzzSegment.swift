// libFuzzer target for the segment and block reader: what `navlog cat`, `navlog verify`,
// `navlog replay` and a restarting navlogd do with a damaged data directory. Build and run it
// with tools/fuzz; built without `--sanitize=fuzzer` it is a program that does nothing.
//
// The input's first byte says how to read the rest (so a mutation can move between modes):
//
// | bits | meaning |
// |---|---|
// | 0–1 | 0: the rest is a segment file, written as is (checksums stop most mutations early) |
// |     | 1: a segment whose block header and data frame checksums (a grouped block's frame table's too) are recomputed first, so mutated sizes, LSNs, times and frames get past them |
// |     | 2: a block payload (decompressed): compressed into a one-block segment with a valid header |
// |     | 3: `u32 n`, an n-byte segment (checksums recomputed), then its `.idx` file (CRC recomputed) |
// | 2–3 | the segment's base LSN (its file name): 1, the first block's LSN, 2, or 2^64 − 1 |
// | 4   | also open the directory as a writer (crash recovery), close it, and read it again |
//
// Over the data directory: `LogReader` (catalogue, event count, LSN range) and `scan` with
// several queries, every event printed as JSON and replayed; blocks read for one session
// (`readBlock(…, session:)`), and by the index build's workers (`LocatedBlockReader`); then `LogVerifier`. Payloads are
// also decoded directly with `BlockHeader.decode` + `DecodedBlock.decode`. Damage must come
// back as damage reports or errors, never a crash.
//
// With NAVLOG_FUZZ_SEEDS=<dir> (and NAVLOG_FUZZ_FIXTURES=<Tests/Fixtures>) the program writes
// seed inputs made by the store itself into <dir> and exits.
//
// No top-level code and no global variables: libFuzzer's `main` runs instead of this file's.
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogWorkload
import NavlogZstd

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    SegmentFuzz.run(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}

/// libFuzzer calls this once before the first input: writes the seeds when asked to.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let seeds = getenv("NAVLOG_FUZZ_SEEDS") {
        SegmentSeeds.write(to: String(cString: seeds), fixtures: getenv("NAVLOG_FUZZ_FIXTURES").map { String(cString: $0) })
        exit(0)
    }
    return 0
}

enum SegmentFuzz {
    /// The data directory every input is written to (emptied first), in memory when possible.
    /// NAVLOG_FUZZ_DATA_DIR names it instead (to keep the files of a crashing input).
    nonisolated(unsafe) static let directory: String = {
        if let chosen = getenv("NAVLOG_FUZZ_DATA_DIR") {
            mkdir(chosen, 0o755)
            return String(cString: chosen)
        }
        let parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        var template = Array("\(parent)/navlog-fuzz-segment-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("cannot create a directory under \(parent)") }
        // Removed when libFuzzer exits normally (after -max_total_time or -runs); a crash keeps it.
        atexit { SegmentSeeds.removeTree(SegmentFuzz.directory) }
        return String(cString: made)
    }()
    static let headerMagic: UInt32 = 0x184D_2A5B

    static let firstTimestamp: Int64 = 1_763_712_000_000_000

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let flags = input.first else { return }
        let rest = Array(input[1...])
        let mode = flags & 3
        var segment: [UInt8]
        var index: [UInt8]?
        switch mode {
        case 0:
            segment = rest
        case 1:
            segment = rest
            fixChecksums(&segment)
        case 2:
            decodeDirectly(rest)
            segment = oneBlockSegment(payload: rest)
        default:
            guard rest.count >= 4 else { return }
            let length = min(Int(rest[0]) | Int(rest[1]) << 8 | Int(rest[2]) << 16 | Int(rest[3]) << 24, rest.count - 4)
            segment = Array(rest[4..<(4 + length)])
            fixChecksums(&segment)
            var idx = Array(rest[(4 + length)...])
            fixIndexChecksum(&idx)
            index = idx
        }
        let base: UInt64
        switch (flags >> 2) & 3 {
        case 0: base = 1
        case 1: base = firstLSN(segment) ?? 1
        case 2: base = 2
        default: base = .max
        }
        clearDirectory()
        let name = padded(base)
        writeFile(name + ".zst", segment)
        if let index { writeFile(name + ".idx", index) }
        readEverything()
        if flags & 0x10 != 0 {
            do {
                let log = try EventLog(directory: directory)
                _ = log.recovery.isClean
                try log.close()
            } catch {
                _ = error.description
            }
            readEverything()
        }
    }

    /// Everything a reader does with the directory.
    static func readEverything() {
        var firstSession: String?
        var firstTimestamp: Int64?
        do {
            let reader = try LogReader(directory: directory)
            _ = reader.eventCount
            _ = reader.lsnRange
            var replayers: [String: SessionReplayer] = [:]
            var line: [UInt8] = []
            try reader.scan(LogQuery()) { block, index in
                let session = block.session(index)
                if firstSession == nil { (firstSession, firstTimestamp) = (session, block.timestamps[index]) }
                line.removeAll(keepingCapacity: true)
                try? block.appendJSONLine(index, to: &line)
                if replayers[session] != nil || replayers.count < 16 {
                    var replayer = replayers[session] ?? SessionReplayer()
                    replay(block, index, &replayer)
                    replayers[session] = replayer
                }
                return true
            }
            for (session, replayer) in replayers {
                line.removeAll(keepingCapacity: true)
                replayer.appendJSON(session: session, to: &line)
            }
            let queries = [
                LogQuery(session: firstSession ?? "S1", fromLSN: 2),
                LogQuery(since: firstTimestamp ?? 0, until: (firstTimestamp ?? 0) &+ 1_000_000, types: [.navPush, .present, .segue, .mark]),
            ]
            for query in queries {
                try reader.scan(query) { block, index in
                    line.removeAll(keepingCapacity: true)
                    try? block.appendJSONLine(index, to: &line)
                    return true
                }
            }
            // Blocks read for one session (what a seek reads: of a grouped block, the spine and
            // the session's group), every event decoded for it printed.
            var decoded = DecodedBlock()
            var positions: [Int32] = []
            for (segment, number) in reader.blocks(matching: LogQuery()).prefix(8) {
                for session in replayers.keys.sorted().prefix(4) + ["no-such-session"] {
                    guard try reader.readBlock(segment: segment, block: number, into: &decoded, session: Array(session.utf8)) else { continue }
                    for index in 0..<decoded.count where decoded.isDecoded(index) {
                        line.removeAll(keepingCapacity: true)
                        try? decoded.appendJSONLine(index, to: &line)
                    }
                    // As a replay reads it: the spine only through its session column.
                    guard try reader.readBlock(segment: segment, block: number, into: &decoded, session: Array(session.utf8), receiveTimesAndPeers: false),
                        let reference = decoded.sessionReadFor
                    else { continue }
                    decoded.positions(ofSession: reference, into: &positions)
                    for position in positions.map(Int.init) {
                        _ = decoded.withBody(position) { body in body.tokens.count } + Int(decoded.timestamps[position] & 1)
                    }
                }
            }
            // Blocks read by the replay index build's workers (each the groups of its sessions'
            // hash residue, on a thread of its own), every event decoded for it printed.
            var workerReader = try LocatedBlockReader()
            for segment in reader.segments.indices {
                guard let located = try reader.locateBlocks(segment: segment, 0..<min(8, reader.segments[segment].blocks.count)) else { continue }
                for position in located.numbers.indices {
                    for (residue, modulus) in [(0, 2), (1, 2), (3, 4)] {
                        guard try workerReader.read(located, at: position, into: &decoded, residue: residue, modulus: modulus) == nil else { continue }
                        for index in 0..<decoded.count where decoded.isDecoded(index) {
                            line.removeAll(keepingCapacity: true)
                            try? decoded.appendJSONLine(index, to: &line)
                        }
                    }
                }
            }
            _ = reader.damage.map(\.description)
        } catch {
            _ = "\(error)"
        }
        do {
            let report = try LogVerifier.verify(directory: directory)
            _ = report.problems.map(\.description)
        } catch {
            _ = error.description
        }
    }

    static func replay(_ block: borrowing DecodedBlock, _ index: Int, _ replayer: inout SessionReplayer) {
        block.withBody(index) { body in
            let event = ReplayEvent(
                type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body)
            replayer.apply(event)
        }
    }

    /// A payload decoded without files: header from `oneBlockHeader`, then every event printed.
    static func decodeDirectly(_ payload: [UInt8]) {
        let header = oneBlockHeader(payload: payload, frame: [])
        guard case .success(let decodedHeader) = header.withUnsafeBytes({ BlockHeader.decode($0) }) else {
            fatalError("a header the harness built does not decode")
        }
        var block = DecodedBlock()
        do {
            try block.decode(payload: payload, header: decodedHeader)
        } catch {
            _ = error.description
            return
        }
        guard block.count == decodedHeader.eventCount else { fatalError("a decoded block has \(block.count) events; its header says \(decodedHeader.eventCount)") }
        var line: [UInt8] = []
        var replayer = SessionReplayer()
        for index in 0..<block.count {
            _ = block.session(index)
            line.removeAll(keepingCapacity: true)
            try? block.appendJSONLine(index, to: &line)
            replay(block, index, &replayer)
        }
    }

    // MARK: - Building segments

    /// A segment of one block holding `payload` (an unsealed, active segment).
    static func oneBlockSegment(payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        do {
            let compressor = try ZstdCompressor(level: 1)
            _ = try payload.withUnsafeBytes { (raw) throws(ZstdError) in try compressor.compress(raw, appendingTo: &frame) }
        } catch {
            fatalError("zstd could not compress \(payload.count) bytes: \(error)")
        }
        return oneBlockHeader(payload: payload, frame: frame) + frame
    }

    /// A valid header frame for `payload` compressed into `frame` (the event count as the
    /// payload says, LSN 1, times from ``firstTimestamp``).
    static func oneBlockHeader(payload: [UInt8], frame: [UInt8]) -> [UInt8] {
        var count = 1
        payload.withUnsafeBytes { raw in
            var reader = ByteReader(raw, offset: 1)
            if let value = reader.readVarint(), value > 0, value <= UInt64(UInt32.max) { count = Int(value) }
        }
        var body: [UInt8] = []
        Varint.appendUInt32(BlockHeader.blockMagic, to: &body)
        body += [1, 0, 0, 0]
        appendUInt64(1, &body)
        Varint.appendUInt32(UInt32(count), to: &body)
        Varint.appendUInt32(UInt32(frame.count), to: &body)
        Varint.appendUInt32(UInt32(truncatingIfNeeded: payload.count), to: &body)
        Varint.appendUInt32(CRC32C.checksum(frame), to: &body)
        for value in [firstTimestamp, firstTimestamp + 3_600_000_000, firstTimestamp, firstTimestamp + 3_600_000_000] {
            appendUInt64(UInt64(bitPattern: value), &body)
        }
        body += [8, 0, 0, 0]
        body += [UInt8](repeating: 0xFF, count: 8)
        var header: [UInt8] = []
        Varint.appendUInt32(headerMagic, to: &header)
        Varint.appendUInt32(UInt32(body.count + 4), to: &header)
        header += body
        Varint.appendUInt32(CRC32C.checksum(body), to: &header)
        return header
    }

    /// Recomputes every block header's checksum and its data frame's checksum, wherever a
    /// header frame with a plausible size starts.
    static func fixChecksums(_ bytes: inout [UInt8]) {
        var offset = 0
        while offset + 8 <= bytes.count {
            guard loadUInt32(bytes, offset) == headerMagic else {
                offset += 1
                continue
            }
            let size = Int(loadUInt32(bytes, offset + 4))
            guard size >= 72, size <= bytes.count - offset - 8 else {
                offset += 1
                continue
            }
            let bodyStart = offset + 8
            let bodyEnd = offset + 8 + size - 4
            let frameStart = offset + 8 + size
            let frameSize = Int(loadUInt32(bytes, bodyStart + 20))
            let frameFits = frameSize <= bytes.count - frameStart
            if frameFits {
                storeUInt32(&bytes, bodyStart + 28, bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[frameStart..<(frameStart + frameSize)])) })
                fixFrameTable(&bytes, bodyStart: bodyStart, bodyEnd: bodyEnd, frameStart: frameStart, frameSize: frameSize)
            }
            storeUInt32(&bytes, bodyEnd, bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[bodyStart..<bodyEnd])) })
            offset = frameFits ? frameStart + frameSize : frameStart
        }
    }

    /// Recomputes the checksum of each frame a grouped block's frame table lists (block format
    /// 2), so mutated spines and group parts reach the decoder.
    static func fixFrameTable(_ bytes: inout [UInt8], bodyStart: Int, bodyEnd: Int, frameStart: Int, frameSize: Int) {
        guard bytes[bodyStart + 4] == 2 else { return }
        let filterSize = Int(bytes[bodyStart + 64]) | Int(bytes[bodyStart + 65]) << 8
        let frames = Int(bytes[bodyStart + 66])
        let table = bodyStart + 68 + filterSize
        guard table + 12 * frames <= bodyEnd else { return }
        var offset = frameStart
        for frame in 0..<frames {
            let size = Int(loadUInt32(bytes, table + 12 * frame))
            guard size <= frameStart + frameSize - offset else { return }
            storeUInt32(&bytes, table + 12 * frame + 8, bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + size)])) })
            offset += size
        }
    }

    /// Recomputes an index file's trailing CRC.
    static func fixIndexChecksum(_ bytes: inout [UInt8]) {
        guard bytes.count >= 28 else { return }
        let end = bytes.count - 4
        storeUInt32(&bytes, end, bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end])) })
    }

    /// The first LSN of the block header at the start of `segment`, if one is there.
    static func firstLSN(_ segment: [UInt8]) -> UInt64? {
        guard segment.count >= 24, loadUInt32(segment, 0) == headerMagic else { return nil }
        return UInt64(loadUInt32(segment, 16)) | UInt64(loadUInt32(segment, 20)) << 32
    }

    static func loadUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    static func loadUInt64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        UInt64(loadUInt32(bytes, offset)) | UInt64(loadUInt32(bytes, offset + 4)) << 32
    }

    static func storeUInt32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for shift in 0..<4 { bytes[offset + shift] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(shift))) }
    }

    static func appendUInt64(_ value: UInt64, _ bytes: inout [UInt8]) {
        Varint.appendUInt32(UInt32(truncatingIfNeeded: value), to: &bytes)
        Varint.appendUInt32(UInt32(truncatingIfNeeded: value >> 32), to: &bytes)
    }

    static func padded(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    // MARK: - Files

    static func clearDirectory() {
        guard let dir = opendir(directory) else { fatalError("cannot list \(directory)") }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names { unlink(directory + "/" + name) }
    }

    static func writeFile(_ name: String, _ bytes: [UInt8]) {
        writeFile(path: directory + "/" + name, bytes)
    }

    static func writeFile(path: String, _ bytes: [UInt8]) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { fatalError("cannot create \(path)") }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            guard result > 0 else { fatalError("cannot write \(path)") }
            written += result
        }
    }
}

/// Seeds made by the store: segments (raw, with an index, with recovery) and block payloads.
enum SegmentSeeds {
    static func write(to output: String, fixtures: String?) {
        mkdir(output, 0o755)
        var sources: [(String, [[UInt8]], LogOptions, Bool)] = []
        /// Sources whose events came through a trusted relay (payload versions 5 and 6).
        var relayed: Set<String> = []
        var small = LogOptions()
        small.maximumEventsPerBlock = 16
        if let fixtures {
            let good = lines(ofFile: fixtures + "/corpus/good.jsonl").filter { $0.count < 2048 }
            sources.append(("good-unsealed", Array(good.prefix(40)), small, false))
            sources.append(("good-sealed", Array(good.prefix(40)), small, true))
            sources.append(("good-tail", Array(good.suffix(12)), LogOptions(), false))
            for fixture in ["R1-show", "R3-present", "R13-tabs", "R14-split", "R17-unwind", "F4-foreground"] {
                sources.append((fixture, lines(ofFile: fixtures + "/replay/\(fixture).jsonl"), small, fixture.hasPrefix("R1")))
            }
        }
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 7))
        var workloadOptions = LogOptions()
        workloadOptions.maximumEventsPerBlock = 32
        sources.append(("workload-sealed", generator.lines(96), workloadOptions, true))
        sources.append(("workload-unsealed", generator.lines(24), workloadOptions, false))
        // Grouped blocks: 32 events in 4 session groups.
        var groupedOptions = workloadOptions
        groupedOptions.eventsPerSessionGroup = 8
        sources.append(("workload-grouped", generator.lines(96), groupedOptions, true))
        // Relayed events, under two keys and none (peers with relay keys: versions 5 and 6).
        sources.append(("workload-relayed", generator.lines(48), workloadOptions, true))
        sources.append(("workload-grouped-relayed", generator.lines(96), groupedOptions, false))
        relayed.formUnion(["workload-relayed", "workload-grouped-relayed"])
        var written = 0
        for (name, lines, options, seal) in sources where !lines.isEmpty {
            let directory = SegmentFuzz.directory + "/seed-" + name
            SegmentFuzz.clearDirectory()
            do {
                let log = try EventLog(directory: directory, options: options)
                try log.append(batch(lines, relayed: relayed.contains(name)))
                if seal { try log.seal() }
                try log.close()
                // A sealed segment's index is written by the first reader.
                var payloads: [[UInt8]] = []
                try LogReader(directory: directory).scan(LogQuery()) { block, index in
                    if index == 0 && payloads.count < 3 { payloads.append(block.payload) }
                    return true
                }
                let segment = try contents(ofFile: directory + "/" + SegmentFuzz.padded(1) + ".zst")
                save(output, "\(name)-raw", [0x00] + segment)
                save(output, "\(name)-fixed", [0x01] + segment)
                save(output, "\(name)-recover", [0x11] + segment)
                if let index = try? contents(ofFile: directory + "/" + SegmentFuzz.padded(1) + ".idx") {
                    let length = UInt32(segment.count)
                    let prefix: [UInt8] = [0x03, UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
                    save(output, "\(name)-indexed", prefix + segment + index)
                }
                for (number, payload) in payloads.enumerated() { save(output, "\(name)-payload-\(number)", [0x02] + payload) }
                written += 1
            } catch {
                print("seed \(name): \(error)")
            }
            removeTree(directory)
        }
        print("wrote segment seeds from \(written) logs to \(output)")
    }

    /// `relayed`: the events as a relay passes them on, a third without a key, the others
    /// under one of two keys.
    static func batch(_ lines: [[UInt8]], relayed: Bool = false) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        let keys = [RelayKey.none, RelayKey("ios-prod")!, RelayKey("android.beta_2")!]
        for (number, line) in lines.enumerated() {
            let peer = PeerCredentials(uid: 501, gid: 20, pid: 4242, relayKey: relayed ? keys[number % keys.count] : .none)
            _ = line.withUnsafeBytes { raw in
                try? parser.parse(raw, lineNumber: number + 1, receivedAt: SegmentFuzz.firstTimestamp + Int64(number), peer: peer, into: &batch)
            }
        }
        return batch
    }

    static func lines(ofFile path: String) -> [[UInt8]] {
        guard let bytes = try? contents(ofFile: path) else { return [] }
        return bytes.split(separator: 0x0A).map { Array($0) }.filter { $0.first == UInt8(ascii: "{") }
    }

    struct ReadFailure: Error {}

    static func contents(ofFile path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ReadFailure() }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            guard count >= 0 else { throw ReadFailure() }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    static func save(_ directory: String, _ name: String, _ bytes: [UInt8]) {
        SegmentFuzz.writeFile(path: directory + "/" + name, bytes)
    }

    static func removeTree(_ directory: String) {
        guard let dir = opendir(directory) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink(directory + "/" + name) }
        }
        closedir(dir)
        rmdir(directory)
    }
}
