import ArgumentParser
import NavlogStore

/// `navlog verify`: checks a data directory end to end.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every block, LSN continuity, seek tables and indexes of a data directory.",
        discussion: """
            Reads everything: block and data checksums, decompression, decoding, LSN continuity \
            within and across segments, seek tables, and that each index agrees with its segment. \
            Prints each problem with its file and byte offset and exits 1 if there is any. It \
            changes nothing; safe while navlogd is running.
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    func run() throws {
        let report: LogVerifier.Report
        do {
            report = try LogVerifier.verify(directory: data.dataDirectory)
        } catch {
            printError("navlog verify: \(error.message)")
            throw ExitCode.failure
        }
        for problem in report.problems { print("damaged: \(problem)") }
        let lsns = report.lsns.map { ", LSNs \($0.lowerBound)–\($0.upperBound)" } ?? ""
        let summary = "\(report.segments) segments, \(report.blocks) blocks, \(report.events) events\(lsns)"
        if report.isClean {
            print("ok: \(summary)")
        } else {
            print("FAILED: \(report.problems.count) problems; \(summary) readable")
            throw ExitCode.failure
        }
    }
}
