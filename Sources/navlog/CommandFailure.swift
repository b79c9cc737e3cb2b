import ArgumentParser
import NavlogEvents
import NavlogStore

/// Runs `body`; an error it throws is printed as `navlog COMMAND: what happened` on standard
/// error, and the command ends with a failure status. An `ExitCode` passes through untouched:
/// whoever threw it has said why.
func reportingFailure<Result>(_ command: String, _ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        printError("navlog \(command): \(error)")
        throw ExitCode.failure
    }
}

extension EventLog {
    /// Appends `batch` and empties it. When the log cannot take it, prints `navlog COMMAND:`,
    /// what happened and `advice` (what running the command again does), and fails the command.
    func append(_ batch: inout EventBatch, command: String, advice: String) throws {
        guard !batch.isEmpty else { return }
        do {
            try append(batch)
        } catch {
            printError("navlog \(command): \(error) \(advice)")
            throw ExitCode.failure
        }
        batch.removeAll()
    }
}
