import Dispatch
import Synchronization

/// Reads one block for one session on another thread while its owner reads another: a seek
/// that needs several blocks of a session reads them two at a time (on two cores, about half
/// the wait; a read for one session is mostly zstd and decoding).
///
/// Used through ``LogReader/startReadingAhead(segment:block:session:receiveTimesAndPeers:with:)``
/// and ``LogReader/finishReadingAhead(_:into:)``; one read at a time, and every read started
/// must be finished (taken or dropped) before the next one starts.
public final class BlockPrefetcher: Sendable {
    /// Where the block is and how to open its file.
    struct Ticket: Sendable {
        /// The segment file held open by the reader (sealed segments it catalogued), or nil.
        var held: HeldSegmentFile?
        /// The segment file's path (opened by the worker when not held).
        var path: String
        /// A sealed segment's size as catalogued: a file of another size was written again.
        var sealedSize: Int?
        var location: BlockLocation
        var session: [UInt8]
        var receiveTimesAndPeers: Bool
    }

    /// How a read ended.
    enum Outcome: Sendable {
        /// The block was read into the worker's block.
        case read
        /// The block is damaged (the caller records it and skips the block).
        case damaged(SegmentDamage)
        /// The segment file is gone (deleted by retention).
        case gone
        /// An I/O failure, or the segment was written again: the caller throws it.
        case failed(StoreError)
    }

    /// The worker's state: its reader, the block it reads into, and how its last read ended.
    private struct Work: ~Copyable {
        var reader: BlockReader
        var block = DecodedBlock()
        var outcome: Outcome = .gone
    }

    // The worker holds the lock for the whole read, the owner to take the block.
    private let work: Mutex<Work>
    private let finished = DispatchSemaphore(value: 0)
    private let queue = DispatchQueue(label: "navlog.block-prefetch", qos: .userInitiated)

    /// Creates a prefetcher (its worker thread starts with its first read).
    /// - Throws: ``StoreError`` when zstd cannot allocate a context.
    public init() throws(StoreError) {
        work = Mutex(Work(reader: try BlockReader()))
    }

    /// Starts reading `ticket`'s block.
    func start(_ ticket: Ticket) {
        queue.async { [self] in
            work.withLock { work in
                work.outcome = Self.read(ticket, work: &work)
            }
            finished.signal()
        }
    }

    /// Waits for the read started last and swaps its block with `block` (so neither
    /// reallocates). - Returns: how the read ended.
    func finish(into block: inout DecodedBlock) -> Outcome {
        finished.wait()
        return work.withLock { work in
            swap(&work.block, &block)
            return work.outcome
        }
    }

    private static func read(_ ticket: Ticket, work: inout Work) -> Outcome {
        do throws(StoreError) {
            if let held = ticket.held {
                try work.reader.read(
                    ticket.location, from: held.file, into: &work.block, session: ticket.session, receiveTimesAndPeers: ticket.receiveTimesAndPeers)
                return .read
            }
            guard let file = try LogReader.openIfPresent(ticket.path) else { return .gone }
            if let sealedSize = ticket.sealedSize, try file.size() != sealedSize {
                return .failed(LogReader.writtenAgain(ticket.path))
            }
            try work.reader.read(ticket.location, from: file, into: &work.block, session: ticket.session, receiveTimesAndPeers: ticket.receiveTimesAndPeers)
            return .read
        } catch  where error.code == .damaged {
            return .damaged(SegmentDamage(path: ticket.path, offset: error.offset ?? ticket.location.offset, reason: error.message))
        } catch {
            return .failed(error)
        }
    }
}
