// libFuzzer target for replay checkpoints (`SessionReplayer(checkpoint:)`): a checkpoint file
// beside the log may be damaged or foreign, and whatever decodes must be safe to resume from.
// Build and run it with tools/fuzz; built without `--sanitize=fuzzer` it is a program that
// does nothing.
//
// Input: `u16 n` (little endian), n bytes of checkpoint, then event lines (JSON Lines) to
// apply after it. For a checkpoint that decodes:
// 1. it is encoded again, and that encoding must decode and encode to the same bytes;
// 2. every output (JSON, tree, dot, focus path, visible set, anomalies) is produced;
// 3. a fixed set of events of every type, naming controllers the checkpoint knows and new
//    ones, is applied to it, each alone and then all in a row, then the input's own lines;
//    the engine must not crash, and the outputs and a checkpoint of the result are produced.
// A checkpoint that does not decode has its lines applied to a new replayer instead.
//
// With NAVLOG_FUZZ_SEEDS=<dir> and NAVLOG_FUZZ_FIXTURES=<Tests/Fixtures> the program writes
// seeds (states after events of the replay fixtures, with the lines that follow) and exits.
//
// No top-level code and no global variables: libFuzzer's `main` runs instead of this file's.
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogTesting

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    CheckpointFuzz.run(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}

/// libFuzzer calls this once before the first input: writes the seeds when asked to.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let seeds = getenv("NAVLOG_FUZZ_SEEDS"), let fixtures = getenv("NAVLOG_FUZZ_FIXTURES") {
        CheckpointSeeds.write(to: String(cString: seeds), fixtures: String(cString: fixtures))
        exit(0)
    }
    return 0
}

enum CheckpointFuzz {
    /// NAVLOG_FUZZ_TRACE=1 prints each template event before it is applied (to find which one
    /// a crash needs).
    static let trace = getenv("NAVLOG_FUZZ_TRACE") != nil
    static let receivedAt: Int64 = 1_763_712_000_000_000

    static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        let length = min(Int(input[0]) | Int(input[1]) << 8, input.count - 2)
        let checkpoint = UnsafeRawBufferPointer(rebasing: input[2..<(2 + length)])
        let eventLines = UnsafeRawBufferPointer(rebasing: input[(2 + length)...])
        guard let state = SessionReplayer(checkpoint: checkpoint) else {
            var replayer = SessionReplayer()
            apply(parse(eventLines), to: &replayer)
            outputs(replayer)
            return
        }
        let encoded = encode(state)
        guard let again = encoded.withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) else {
            fatalError("a decoded checkpoint, encoded again, does not decode (\(encoded.count) bytes)")
        }
        let reencoded = encode(again)
        guard reencoded == encoded else { fatalError("a checkpoint encoded, decoded and encoded again changed (\(encoded.count) → \(reencoded.count) bytes)") }
        outputs(state)
        // The engine's walks rely on it (checkpoint-inconsistent-hierarchy looped forever).
        guard HierarchyOracle.isConsistent(state.hierarchy) else { fatalError("a checkpoint whose hierarchy links disagree (or loop) decoded") }

        let lines = templateLines(for: state, seed: checkpoint.reduce(0) { $0 &* 31 &+ Int($1) })
        let templates = parse(lines)
        var block = DecodedBlock()
        roundTrip(templates, into: &block)
        for index in 0..<block.count {
            if trace { say("alone: \(block.count == lines.count ? lines[index] : "template \(index)")") }
            var alone = state
            apply(block, index, to: &alone)
            _ = alone.focusPath
        }
        if trace { say("then all of them in a row, then the input's lines") }
        var sequence = state
        for index in 0..<block.count {
            if trace { say("in a row: \(block.count == lines.count ? lines[index] : "template \(index)")") }
            apply(block, index, to: &sequence)
        }
        apply(parse(eventLines), to: &sequence)
        outputs(sequence)
        // The engine's own state after a decoded checkpoint may be rejected as a checkpoint
        // (then it is rebuilt from the events), but writing and reading it must not crash.
        _ = encode(sequence).withUnsafeBytes { SessionReplayer(checkpoint: $0) }
    }

    /// A line on standard error, unbuffered (a hang's last line is the one that hangs).
    static func say(_ text: String) {
        let line = text + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    static func encode(_ state: SessionReplayer) -> [UInt8] {
        var bytes: [UInt8] = []
        state.encodeCheckpoint(into: &bytes)
        return bytes
    }

    /// Every output the CLI and analytics read from a state.
    static func outputs(_ state: SessionReplayer) {
        var json: [UInt8] = []
        state.appendJSON(session: "s", to: &json)
        for anomaly in state.anomalies.prefix(8) { state.appendAnomalyJSON(anomaly, session: "s", to: &json) }
        _ = state.tree(session: "s")
        _ = state.dot(session: "s")
        _ = state.visible
        _ = state.focus
        _ = state.focusedWindow
        if let handle = state.focusedScreenHandle { _ = state.id(of: handle) }
    }

    // MARK: - Events

    static func parse(_ text: UnsafeRawBufferPointer) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        var number = 0
        var framer = LineFramer()
        let deliver = { (lineNumber: Int, piece: LineFramer.Piece) in
            guard case .line(let line) = piece, number < 64 else { return }
            number += 1
            _ = try? parser.parse(line, lineNumber: lineNumber, receivedAt: receivedAt + Int64(lineNumber), peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
        }
        framer.feed(text, deliver)
        framer.finish(deliver)
        return batch
    }

    static func parse(_ lines: [String]) -> EventBatch {
        let text = Array(lines.joined(separator: "\n").utf8)
        return text.withUnsafeBytes { parse($0) }
    }

    static func roundTrip(_ batch: EventBatch, into block: inout DecodedBlock) {
        var codec = InMemoryBlockCodec()
        do {
            try codec.roundTrip(batch, firstLSN: 1, into: &block)
        } catch {
            fatalError("the block codec could not decode what it encoded: \(error)")
        }
    }

    static func apply(_ batch: EventBatch, to replayer: inout SessionReplayer) {
        guard !batch.isEmpty else { return }
        var block = DecodedBlock()
        roundTrip(batch, into: &block)
        for index in 0..<block.count { apply(block, index, to: &replayer) }
    }

    static func apply(_ block: DecodedBlock, _ index: Int, to replayer: inout SessionReplayer) {
        block.withBody(index) { body in
            let event = ReplayEvent(type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body)
            replayer.apply(event)
        }
    }

    /// Events of every type naming two controllers the state knows (chosen by `seed`) and a new one.
    static func templateLines(for state: SessionReplayer, seed: Int) -> [String] {
        let known = state.controllers.controllers.map(\.id)
        let pick = { (salt: Int) -> String in known.isEmpty ? "fz-\(salt)" : known[abs((seed &+ salt * 7919) % known.count)] }
        let a = quoted(pick(1))
        let b = quoted(pick(2))
        let c = quoted(state.focusedScreenHandle.map { state.id(of: $0) } ?? pick(3))
        let n = "{\"id\":\"fz-new\",\"class\":\"FuzzViewController\"}"
        let bodies = [
            "\"type\":\"nav.push\",\"nav\":\(a),\"vc\":\(b),\"animated\":true",
            "\"type\":\"nav.push\",\"nav\":\(c),\"vc\":\(n)",
            "\"type\":\"nav.pop\",\"nav\":\(a),\"animated\":true",
            "\"type\":\"nav.popTo\",\"nav\":\(a),\"vc\":\(b)",
            "\"type\":\"nav.popToRoot\",\"nav\":\(a)",
            "\"type\":\"nav.set\",\"nav\":\(a),\"vcs\":[\(b),\(n)],\"animated\":false",
            "\"type\":\"tab.set\",\"tab\":\(a),\"vcs\":[\(b),\(c)],\"selected\":1",
            "\"type\":\"tab.select\",\"tab\":\(a),\"index\":0,\"byUser\":true",
            "\"type\":\"tab.select\",\"tab\":\(a),\"vc\":\(b)",
            "\"type\":\"split.set\",\"split\":\(a),\"primary\":\(b),\"secondary\":\(c)",
            "\"type\":\"split.collapse\",\"split\":\(a)",
            "\"type\":\"split.expand\",\"split\":\(a)",
            "\"type\":\"present\",\"from\":\(a),\"vc\":\(b),\"style\":\"formSheet\"",
            "\"type\":\"present\",\"from\":\(c),\"vc\":\(n),\"style\":\"popover\",\"anchor\":{\"barButtonItem\":\"x\"}",
            "\"type\":\"dismiss\",\"vc\":\(b),\"animated\":true",
            "\"type\":\"dismiss\",\"vc\":\(c)",
            "\"type\":\"show\",\"from\":\(c),\"vc\":\(b)",
            "\"type\":\"showDetail\",\"from\":\(a),\"vc\":\(n)",
            "\"type\":\"segue\",\"kind\":\"show\",\"identifier\":\"f\",\"source\":\(a),\"destination\":\(b),\"phase\":\"should\",\"result\":true",
            "\"type\":\"segue\",\"kind\":\"show\",\"identifier\":\"f\",\"source\":\(a),\"destination\":\(b),\"phase\":\"perform\"",
            "\"type\":\"segue\",\"kind\":\"presentation\",\"identifier\":\"p\",\"source\":\(c),\"destination\":\(n),\"style\":\"fullScreen\"",
            "\"type\":\"segue\",\"kind\":\"relationship\",\"relationship\":\"rootViewController\",\"source\":\(a),\"destination\":\(b)",
            "\"type\":\"segue\",\"kind\":\"custom\",\"identifier\":\"c\",\"source\":\(a),\"destination\":\(b),\"segueClass\":\"FuzzSegue\"",
            "\"type\":\"segue\",\"kind\":\"unwind\",\"identifier\":\"u\",\"source\":\(c),\"action\":\"back:\"",
            "\"type\":\"unwind\",\"source\":\(b),\"action\":\"back:\"",
            "\"type\":\"child.add\",\"parent\":\(a),\"vc\":\(b),\"slot\":\"s\"",
            "\"type\":\"child.willMove\",\"vc\":\(b),\"parent\":null",
            "\"type\":\"child.didMove\",\"vc\":\(b),\"parent\":\(a)",
            "\"type\":\"child.remove\",\"vc\":\(b),\"parent\":\(a)",
            "\"type\":\"window.root\",\"window\":\"main\",\"vc\":\(b)",
            "\"type\":\"window.root\",\"window\":\"ext\",\"vc\":\(c)",
            "\"type\":\"vc.appear\",\"vc\":\(a),\"phase\":\"will\",\"animated\":true",
            "\"type\":\"vc.appear\",\"vc\":\(a),\"phase\":\"did\"",
            "\"type\":\"vc.disappear\",\"vc\":\(c),\"phase\":\"will\"",
            "\"type\":\"transition.begin\",\"id\":\"t1\",\"interactive\":true",
            "\"type\":\"transition.end\",\"id\":\"t1\",\"interactive\":true,\"completed\":false",
            "\"type\":\"traits.change\",\"h\":\"regular\",\"v\":\"compact\"",
            "\"type\":\"app.background\"",
            "\"type\":\"app.foreground\"",
            "\"type\":\"mark\",\"name\":\"fuzz\"",
            "\"type\":\"session.end\"",
        ]
        let firstSequence = (state.position?.sequence ?? 0) &+ 1
        let firstTime = max(state.position?.timestamp ?? receivedAt, 0)
        return bodies.enumerated().map { number, body in
            "{\(body),\"session\":\"s\",\"seq\":\(firstSequence &+ UInt64(number)),\"ts\":\(firstTime &+ Int64(number) * 1000)}"
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// Seeds: the states after events of the replay fixtures and the corpus, each with the lines
/// that follow it.
enum CheckpointSeeds {
    static func write(to output: String, fixtures: String) {
        mkdir(output, 0o755)
        var files = ["corpus/good.jsonl"]
        if let dir = opendir(fixtures + "/replay") {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".jsonl") { files.append("replay/" + name) }
            }
            closedir(dir)
        }
        var written = 0
        for file in files.sorted() {
            let lines = readLines(fixtures + "/" + file).filter { $0.first == UInt8(ascii: "{") && $0.count < 4096 }
            var bySession: [String: [[UInt8]]] = [:]
            var order: [String] = []
            for line in lines {
                let batch = line.withUnsafeBytes { CheckpointFuzz.parse($0) }
                guard batch.count == 1 else { continue }
                let session = batch.session(of: 0)
                if bySession[session] == nil { order.append(session) }
                bySession[session, default: []].append(line)
            }
            for session in order.prefix(3) {
                let sessionLines = bySession[session]!
                var replayer = SessionReplayer()
                let stride = max(1, sessionLines.count / 6)
                for (index, line) in sessionLines.enumerated() {
                    CheckpointFuzz.apply(line.withUnsafeBytes { CheckpointFuzz.parse($0) }, to: &replayer)
                    guard index % stride == stride - 1 || index == sessionLines.count - 1 else { continue }
                    let checkpoint = CheckpointFuzz.encode(replayer)
                    guard checkpoint.count < 60_000 else { continue }
                    var seed: [UInt8] = [UInt8(checkpoint.count & 0xFF), UInt8(checkpoint.count >> 8)] + checkpoint
                    for next in sessionLines.dropFirst(index + 1).prefix(3) { seed += next + [0x0A] }
                    let name = file.split(separator: "/").last!.dropLast(".jsonl".count) + "-\(written)"
                    let path = output + "/" + name
                    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                    guard descriptor >= 0 else { fatalError("cannot create \(path)") }
                    _ = seed.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
                    close(descriptor)
                    written += 1
                }
            }
        }
        print("wrote \(written) checkpoint seeds to \(output)")
    }

    static func readLines(_ path: String) -> [[UInt8]] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes.split(separator: 0x0A).map { Array($0) }
    }
}
