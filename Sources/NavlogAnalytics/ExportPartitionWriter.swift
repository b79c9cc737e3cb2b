import CZlib
import Foundation
import NavlogJSON
import NavlogStore
import NavlogZstd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The partitions of every table being written: buffers, files, zstd frames.
final class ExportPartitionWriter {
    /// One output file.
    struct Partition {
        var table: SQLTable
        /// Relative to the export directory: the partition's directory.
        var directory: String
        /// The part number of the file being written.
        var part = 0
        /// Relative to the export directory, without the `.tmp` suffix.
        var path: String
        var buffer: [UInt8] = []
        var rows = 0
        var bytesWritten = 0
        var uncompressedBytes = 0
        /// Whether the file has been created (the first write truncates).
        var created = false
    }

    let options: ExportOptions
    private let compressor: ZstdBox?
    private var partitions: [Partition] = []
    /// Files closed because they reached ``ExportOptions/partSize``.
    private var closedParts: [Partition] = []
    /// Per table: day → partition index, and the last day seen (most rows repeat it).
    private var byDay: [[Int64: Int]] = Array(repeating: [:], count: SQLTable.allCases.count)
    private var lastDay = [Int64](repeating: .min, count: SQLTable.allCases.count)
    private var lastIndex = [Int](repeating: -1, count: SQLTable.allCases.count)
    /// Per table: the JSON keys of its columns, and its CSV header.
    private let keys: [[[UInt8]]]
    private let headers: [[UInt8]]
    /// Per table (by ordinal): whether it is written.
    private let wanted: [Bool]
    private var buffered = 0
    private var compressed: [UInt8] = []
    private(set) var failure: ExportError?
    private let suffix: String

    init(options: ExportOptions) throws {
        self.options = options
        if options.compression == .zstd {
            do { compressor = ZstdBox(try ZstdCompressor(level: options.level, contentChecksum: true)) } catch {
                throw ExportError("zstd: \(error)", code: .compression)
            }
        } else {
            compressor = nil
        }
        keys = SQLTable.allCases.map { table in
            table.columns.enumerated().map { index, column in
                var key = JSONWriter(bytes: index == 0 ? [UInt8(ascii: "{")] : [])
                key.key(escaping: column.name, first: index == 0)
                return key.bytes
            }
        }
        headers = SQLTable.allCases.map { table in
            var header: [UInt8] = []
            for (index, column) in table.columns.enumerated() {
                if index > 0 { header.append(UInt8(ascii: ",")) }
                appendCSVField(column.name, to: &header)
            }
            header.append(UInt8(ascii: "\n"))
            return header
        }
        suffix = "." + options.format.rawValue + options.compression.suffix
        wanted = SQLTable.allCases.map { options.tables.contains($0) }
    }

    /// Appends one row of `table` to the partition of `time`'s day.
    @inline(__always)
    func write(_ table: SQLTable, time: Int64, _ encode: (inout ExportRowEncoder) -> Void) {
        guard failure == nil, wanted[table.ordinal] else { return }
        let index = partition(table, time: time)
        var encoder = ExportRowEncoder(output: JSONWriter(), keys: keys[table.ordinal], csv: options.format == .csv)
        swap(&encoder.output.bytes, &partitions[index].buffer)
        let before = encoder.output.bytes.count
        encode(&encoder)
        encoder.finish()
        let added = encoder.output.bytes.count - before
        swap(&encoder.output.bytes, &partitions[index].buffer)
        partitions[index].rows += 1
        buffered += added
        if partitions[index].uncompressedBytes + partitions[index].buffer.count >= options.partSize {
            buffered -= partitions[index].buffer.count
            nextPart(index)
        } else if partitions[index].buffer.count >= options.chunkSize {
            buffered -= partitions[index].buffer.count
            flush(index, release: false)
        }
        if buffered > options.memoryBudget {
            for other in partitions.indices where !partitions[other].buffer.isEmpty { flush(other, release: true) }
            buffered = 0
        }
    }

    /// The partition index of `table` for `time`, made on first use.
    @inline(__always)
    private func partition(_ table: SQLTable, time: Int64) -> Int {
        let ordinal = table.ordinal
        let day = options.partitioning == .day ? Exporter.day(ofMicroseconds: time) : 0
        if day == lastDay[ordinal] { return lastIndex[ordinal] }
        let index: Int
        if let known = byDay[ordinal][day] {
            index = known
        } else {
            index = partitions.count
            var directory = table.name
            if let host = options.host { directory += "/host=" + host }
            if options.partitioning == .day { directory += "/day=" + Exporter.dayString(day) }
            var partition = Partition(table: table, directory: directory, path: fileName(directory, part: 0))
            if options.format == .csv { partition.buffer.append(contentsOf: headers[ordinal]) }
            buffered += partition.buffer.count
            partitions.append(partition)
            byDay[ordinal][day] = index
        }
        lastDay[ordinal] = day
        lastIndex[ordinal] = index
        return index
    }

    /// `directory/PREFIX#####.EXT`.
    private func fileName(_ directory: String, part: Int) -> String {
        let digits = String(part)
        return directory + "/" + options.filePrefix + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + suffix
    }

    /// Closes the partition's file and begins its next part.
    private func nextPart(_ index: Int) {
        flush(index, release: true)
        guard failure == nil else { return }
        closedParts.append(partitions[index])
        var next = Partition(table: partitions[index].table, directory: partitions[index].directory, path: "")
        next.part = partitions[index].part + 1
        next.path = fileName(next.directory, part: next.part)
        if options.format == .csv {
            next.buffer.append(contentsOf: headers[next.table.ordinal])
            buffered += next.buffer.count
        }
        partitions[index] = next
    }

    /// Writes a partition's buffer to its file (as one zstd frame when compressing).
    private func flush(_ index: Int, release: Bool) {
        guard failure == nil, !partitions[index].buffer.isEmpty else { return }
        let path = options.directory + "/" + partitions[index].path + ".tmp"
        if !partitions[index].created {
            let directory = String(path[..<path.lastIndex(of: "/")!])
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                failure = ExportError("cannot create \(directory): \(error.localizedDescription)")
                return
            }
        }
        let uncompressed = partitions[index].buffer.count
        var bytes = 0
        do {
            if let compressor {
                compressed.removeAll(keepingCapacity: true)
                try partitions[index].buffer.withUnsafeBytes { raw in
                    _ = try compressor.compressor.compress(raw, appendingTo: &compressed)
                }
                try append(compressed, to: path, truncate: !partitions[index].created)
                bytes = compressed.count
            } else if options.compression == .gzip {
                compressed.removeAll(keepingCapacity: true)
                try partitions[index].buffer.withUnsafeBytes { raw in try Gzip.compress(raw, level: 6, appendingTo: &compressed) }
                try append(compressed, to: path, truncate: !partitions[index].created)
                bytes = compressed.count
            } else {
                try append(partitions[index].buffer, to: path, truncate: !partitions[index].created)
                bytes = uncompressed
            }
        } catch let error as ExportError {
            failure = error
            return
        } catch {
            failure = ExportError("\(options.compression.rawValue): \(error)", code: .compression)
            return
        }
        partitions[index].created = true
        partitions[index].bytesWritten += bytes
        partitions[index].uncompressedBytes += uncompressed
        if release { partitions[index].buffer = [] } else { partitions[index].buffer.removeAll(keepingCapacity: true) }
    }

    /// Removes the files written so far, and the directories left empty (after a failure).
    func abandon() {
        for partition in closedParts + partitions {
            let path = options.directory + "/" + partition.path
            unlink(path + ".tmp")
            unlink(path)
            var directory = Substring(partition.path)
            while let slash = directory.lastIndex(of: "/") {
                directory = directory[..<slash]
                rmdir(options.directory + "/" + directory)
            }
        }
    }

    /// Flushes every buffer, renames the files into place and reports.
    func finish() throws(ExportError) -> ExportReport {
        for index in partitions.indices { flush(index, release: true) }
        if let failure { throw failure }
        var report = ExportReport()
        for partition in closedParts + partitions where partition.created {
            let path = options.directory + "/" + partition.path
            // On disk before its name says it is complete: a file renamed into place is whole after a crash.
            let descriptor = open(path + ".tmp", O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
            guard rename(path + ".tmp", path) == 0 else { throw ExportError("cannot rename \(path).tmp: \(String(cString: strerror(errno))).") }
            report.rows[partition.table, default: 0] += partition.rows
            report.files[partition.table, default: 0] += 1
            report.bytesWritten += partition.bytesWritten
            report.uncompressedBytes += partition.uncompressedBytes
            report.paths.append(partition.path)
        }
        for table in options.tables { report.rows[table] = report.rows[table] ?? 0 }
        report.paths.sort()
        for directory in Set((closedParts + partitions).map(\.directory)) {
            do { try DurableFile.syncDirectory(containing: options.directory + "/" + directory + "/x") } catch { throw ExportError(error.message) }
        }
        try writeSchemas()
        return report
    }
}

extension ExportPartitionWriter {
    /// Writes `TABLE/_schema.ENGINE` for every table exported: the column types each engine is
    /// to read the files with (``ExportReadStatements/schema(_:for:)``). Engines skip these
    /// files: Spark ignores names starting with `_`, and the read statements' globs match the
    /// data files' extension only.
    func writeSchemas() throws(ExportError) {
        for table in options.tables.sorted() {
            let directory = options.directory + "/" + table.name
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw ExportError("cannot create \(directory): \(error.localizedDescription)")
            }
            for engine in ExportEngine.allCases {
                let path = directory + "/_schema." + engine.schemaSuffix
                try append(Array((ExportReadStatements.schema(table, for: engine) + "\n").utf8), to: path + ".tmp", truncate: true)
                guard rename(path + ".tmp", path) == 0 else { throw ExportError("cannot rename \(path).tmp: \(String(cString: strerror(errno))).") }
            }
        }
    }
}

/// Appends `bytes` to the file at `path` (created, or emptied when `truncate`).
private func append(_ bytes: [UInt8], to path: String, truncate: Bool) throws(ExportError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND), 0o644)
    guard descriptor >= 0 else { throw ExportError("cannot open \(path): \(String(cString: strerror(errno))).") }
    defer { close(descriptor) }
    var written = 0
    var failed: Int32 = 0
    bytes.withUnsafeBytes { raw in
        while written < raw.count {
            let n = write(descriptor, raw.baseAddress! + written, raw.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                failed = errno
                return
            }
            written += n
        }
    }
    if failed != 0 { throw ExportError("cannot write \(path): \(String(cString: strerror(failed))).") }
}

/// Holds the non-copyable compressor in a class, so the writer can share it.
final class ZstdBox {
    let compressor: ZstdCompressor
    init(_ compressor: consuming ZstdCompressor) { self.compressor = compressor }
}

/// gzip through zlib: one complete gzip member per call (members concatenate into one stream).
enum Gzip {
    /// Appends the gzip member of `input` to `output`.
    static func compress(_ input: UnsafeRawBufferPointer, level: Int32, appendingTo output: inout [UInt8]) throws(ExportError) {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ExportError("gzip: zlib could not start a stream (\(String(cString: zError(Z_STREAM_ERROR)))).", code: .compression)
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: bound))
        let result: Int32 = output.withUnsafeMutableBytes { raw in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = raw.baseAddress!.advanced(by: start).assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(bound)
            return deflate(&stream, Z_FINISH)
        }
        guard result == Z_STREAM_END else {
            output.removeLast(bound)
            throw ExportError("gzip: deflate failed (\(String(cString: zError(result)))).", code: .compression)
        }
        output.removeLast(Int(stream.avail_out))
    }
}
