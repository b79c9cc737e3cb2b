import ArgumentParser
import Foundation
import NavlogClient

/// `navlog stats`: navlogd's counters.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show navlogd's counters: connections, events, rejections, duplicates, losses, backpressure, fsync and ack latency."
    )

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket: String = NavlogClient.defaultSocketPath

    @Option(help: ArgumentHelp("Output format: table or json.", valueName: "format"))
    var format: String = "table"

    func run() throws {
        let connection: UnixSocket
        do { connection = try UnixSocket(path: socket) } catch {
            FileHandle.standardError.write(Data("navlog stats: \(error)\n".utf8))
            throw ExitCode.failure
        }
        try Array("{\"control\":\"stats\"}\n".utf8).withUnsafeBytes { try connection.write($0) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var reply: [UInt8] = []
        while !reply.contains(0x0A) {
            let n = connection.read(into: &buffer)
            if n == 0 { break }
            reply.append(contentsOf: buffer[..<n])
        }
        guard let line = reply.split(separator: 0x0A).first, let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            FileHandle.standardError.write(Data("navlog stats: navlogd sent no statistics.\n".utf8))
            throw ExitCode.failure
        }
        if format == "json" {
            print(String(decoding: line, as: UTF8.self))
            return
        }
        for key in object.keys.sorted() {
            let value = object[key]!
            let text: String
            if let dictionary = value as? [String: Any] {
                text = dictionary.isEmpty ? "-" : dictionary.keys.sorted().map { "\($0)=\(dictionary[$0]!)" }.joined(separator: " ")
            } else {
                text = "\(value)"
            }
            print(key.padding(toLength: 24, withPad: " ", startingAt: 0) + text)
        }
    }
}
