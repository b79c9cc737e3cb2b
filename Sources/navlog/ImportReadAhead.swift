import Foundation  // Thread
import NavlogImport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads `navlog import`'s files on a thread of its own, a few chunks ahead of the converter:
/// framing records and reading their JSON (about a third of an import's time) run on the
/// second core while the first converts and stores (docs/IMPORT.md has the figures).
///
/// The files are read in order, 1 MiB at a time; each chunk's records arrive as one
/// ``Delivery``, in order, and a file's end as one more. At most ``chunksAhead`` chunks wait.
final class ImportReadAhead: Sendable {
    /// What the reading thread hands over, in the order of the files' bytes.
    enum Delivery: Sendable {
        /// The records that end in one chunk of `file` (its name as messages give it), or, when
        /// `endsFile`, those its end cuts short.
        case records(ReadRecords, file: String, endsFile: Bool)
        /// A file could not be opened or read: what to print. Nothing after it is read.
        case failed(String)
    }

    /// Chunks read and not yet converted, at most.
    static let chunksAhead = 4

    /// A reading thread that finds the channel full waits until one chunk is left: each side then
    /// runs a few chunks before it wakes the other.
    private let deliveries = BlockingChannel<Delivery>(capacity: chunksAhead, lowWater: 1)
    /// Emptied deliveries coming back, so their storage (node tables, the item arrays) is reused.
    private let returned = BlockingChannel<ReadRecords>(capacity: chunksAhead + 4)

    /// Starts reading `files` (`-`: standard input), records of at most `maximumRecordBytes`.
    init(files: [String], maximumRecordBytes: Int) {
        let deliveries = self.deliveries
        let returned = self.returned
        Thread {
            Self.readFiles(files, maximumRecordBytes: maximumRecordBytes, deliveries: deliveries, returned: returned)
            deliveries.close()
        }.start()
    }

    /// The next delivery, waiting for it; `nil` once every file is read.
    func next() -> Delivery? { deliveries.receive() }

    /// Hands converted records back for their storage to be reused.
    func giveBack(_ records: ReadRecords) {
        _ = returned.send(records)
    }

    /// Stops reading (the converter stopped early): the thread ends at its next chunk.
    func stop() {
        deliveries.close()
    }

    private static func readFiles(_ files: [String], maximumRecordBytes: Int, deliveries: BlockingChannel<Delivery>, returned: BlockingChannel<ReadRecords>) {
        var reader = RecordReader(maximumRecordBytes: maximumRecordBytes)
        // One 1 MiB buffer for all the files: an export of thousands of one-event files does not
        // allocate one per file.
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for path in files {
            let name = path == "-" ? "<stdin>" : path
            let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                deliveries.send(
                    .failed(
                        "navlog import: cannot open \(path): \(String(cString: strerror(errno))). Sessions completed in earlier files are stored; check the path and run the command again (nothing is stored twice)."
                    ))
                return
            }
            defer { if descriptor != STDIN_FILENO { close(descriptor) } }
            while true {
                let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    deliveries.send(
                        .failed("navlog import: reading \(name) failed: \(String(cString: strerror(errno))). Run the command again once it can be read (nothing is stored twice)."))
                    return
                }
                if n == 0 { break }
                var records = returned.poll() ?? ReadRecords()
                chunk.withUnsafeBytes { reader.read(UnsafeRawBufferPointer(rebasing: $0[..<n]), into: &records) }
                guard deliveries.send(.records(records, file: name, endsFile: false)) else { return }
            }
            var records = returned.poll() ?? ReadRecords()
            reader.endFile(into: &records)
            guard deliveries.send(.records(records, file: name, endsFile: true)) else { return }
        }
    }
}
