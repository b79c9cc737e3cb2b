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
    /// Where the block is: the segment file as the owner opened and checked it (the one it
    /// holds, or one opened for this read), and the block's location in it.
    struct Ticket: Sendable {
        var file: HeldSegmentFile
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
        /// An I/O failure: the caller throws it.
        case failed(StoreError)
    }

    /// The worker's state: its reader, the block it reads into, and how its last read ended.
    private struct Work: ~Copyable {
        var reader: BlockReader
        var block = DecodedBlock()
        var outcome: Outcome = .read
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
            try work.reader.read(
                ticket.location, from: ticket.file.file, into: &work.block, session: ticket.session, receiveTimesAndPeers: ticket.receiveTimesAndPeers)
            return .read
        } catch  where error.code == .damaged {
            return .damaged(SegmentDamage(error, at: ticket.location, in: ticket.file.file.path))
        } catch {
            return .failed(error)
        }
    }
}
