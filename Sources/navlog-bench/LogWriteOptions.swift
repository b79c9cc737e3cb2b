import ArgumentParser
import NavlogStore

/// How the benchmarks write the logs they make (the codec and replay benchmarks take these).
struct LogWriteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Events per block (default \(LogOptions().maximumEventsPerBlock)).", valueName: "n"))
    var blockEvents: Int?

    @Option(help: ArgumentHelp("Events per session group of a block (default \(LogOptions().eventsPerSessionGroup)).", valueName: "n"))
    var eventsPerGroup: Int?

    @Option(help: ArgumentHelp("zstd level of the blocks, 1 to 22 (default \(LogOptions().compressionLevel)).", valueName: "level"))
    var level: Int?

    func validate() throws {
        if let blockEvents, blockEvents < 1 { throw ValidationError("--block-events must be a positive number of events (got \(blockEvents)).") }
        if let eventsPerGroup, eventsPerGroup < 1 { throw ValidationError("--events-per-group must be a positive number of events (got \(eventsPerGroup)).") }
        if let level, !(1...22).contains(level) { throw ValidationError("--level takes a zstd level from 1 to 22 (got \(level)).") }
    }

    /// The store's options with these applied.
    var logOptions: LogOptions {
        var options = LogOptions()
        if let blockEvents { options.maximumEventsPerBlock = blockEvents }
        if let eventsPerGroup { options.eventsPerSessionGroup = eventsPerGroup }
        if let level { options.compressionLevel = Int32(level) }
        return options
    }
}
