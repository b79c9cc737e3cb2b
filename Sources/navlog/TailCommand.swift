import ArgumentParser
import NavlogEvents
import NavlogStore

#if canImport(Glibc)
    import Glibc
#endif

/// `navlog tail`: the newest events, and with `-f` every new one as it is stored.
struct TailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the newest events; with -f keep printing new ones (like journalctl -f).",
        discussion: """
            Reads the data directory directly (no lock, safe while navlogd runs). navlogd writes \
            buffered events at least every flushIntervalSeconds (1 s by default) and at once for \
            clients that asked for acknowledgements, so -f shows events within about a second.
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    @Flag(name: .shortAndLong, help: "Keep printing new events until interrupted.")
    var follow = false

    @Option(name: [.customShort("n"), .long], help: ArgumentHelp("How many of the newest events to print first.", valueName: "count"))
    var lines = 10

    @Option(help: "Only events of this session.")
    var session: String?

    @Option(name: .customLong("type"), parsing: .singleValue, help: ArgumentHelp("Only events of this type (repeat or separate with commas).", valueName: "type"))
    var types: [String] = []

    @Option(help: ArgumentHelp("Seconds between checks for new events with -f.", valueName: "seconds"))
    var interval = 0.2

    func run() throws {
        let typeSet = try parseEventTypes(types)
        let reader = try data.openReader(command: "tail")
        var output = OutputBuffer()
        // The newest `lines` matching events: without filters, straight from the LSN range.
        var query = LogQuery(session: session, types: typeSet)
        if session == nil && typeSet == nil, let range = reader.lsnRange {
            query.fromLSN = range.upperBound >= UInt64(lines) ? max(range.lowerBound, range.upperBound - UInt64(lines) + 1) : range.lowerBound
        }
        var recent: [[UInt8]] = []
        var next = (reader.lsnRange?.upperBound ?? 0) + 1
        try reader.scan(query) { block, index in
            var line: [UInt8] = []
            try block.appendJSONLine(index, to: &line)
            recent.append(line)
            if recent.count > lines { recent.removeFirst(recent.count - lines) }
            next = max(next, block.lsn(index) + 1)
            return true
        }
        for line in recent { output.bytes.append(contentsOf: line) }
        output.flush()
        guard follow else { return }
        while true {
            usleep(useconds_t(interval * 1_000_000))
            try reader.refresh()
            var followQuery = LogQuery(session: session, types: typeSet)
            followQuery.fromLSN = next
            try reader.scan(followQuery) { block, index in
                try block.appendJSONLine(index, to: &output.bytes)
                next = block.lsn(index) + 1
                output.flushIfNeeded()
                return true
            }
            // Events that did not match still advance the position.
            if let upper = reader.lsnRange?.upperBound, upper >= next { next = upper + 1 }
            output.flush()
        }
    }
}
