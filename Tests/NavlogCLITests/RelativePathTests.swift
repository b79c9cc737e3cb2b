import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// Relative paths are taken from the working directory the command runs in, and nothing is
/// written outside the data directory unless the user names the place (issue: "A relative
/// --data-dir escapes": `/d/replay` was created at the root, or `~/.cache` used silently).
@Suite("Relative paths and where files are written")
struct RelativePathTests {
    static func events(_ count: Int) -> Data {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 31))
        return Data(generator.lines(count).flatMap { $0 + [0x0A] })
    }

    @Test("ingest, sessions, query, replay and export with a relative --data-dir write only under it")
    func cliRelative() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let work = dir.appendingPathComponent("work")
            let home = dir.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            try Self.events(2_000).write(to: work.appendingPathComponent("ev.jsonl"))
            let navlog = TestEnvironment.binaries.appendingPathComponent("navlog")
            let environment = ["HOME": home.path, "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path]
            func run(_ arguments: [String]) throws -> ProcessResult {
                try ProcessRunner.run(navlog, arguments, environment: environment, currentDirectory: work)
            }
            let rootBefore = Set(try FileManager.default.contentsOfDirectory(atPath: "/"))
            #expect(try run(["ingest", "--quiet", "ev.jsonl", "--data-dir", "d"]).status == 0)
            for command in [["query", "screens"], ["sessions"], ["anomalies"], ["index"], ["query", "sql", "SELECT count(*) FROM sessions"]] {
                let result = try run(command + ["--data-dir", "d"])
                #expect(result.status == 0, "navlog \(command.joined(separator: " ")): \(result.errorOutput)")
            }
            let export = try run(["export", "--data-dir", "d", "--to", "out", "--format", "jsonl"])
            #expect(export.status == 0, "\(export.errorOutput)")
            // The replay index is in the data directory under the working directory; nothing at
            // the root, nothing in the home directory's cache; the export where it was asked for.
            #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("d/replay").path))
            #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("out/screen_visits").path))
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: "/")) == rootBefore)
            #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).isEmpty)
        }
    }

    @Test("a replay index place that cannot be used is an error that says so, and nothing goes elsewhere")
    func unusableIndexPlace() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let home = dir.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            try Self.events(500).write(to: dir.appendingPathComponent("ev.jsonl"))
            let navlog = TestEnvironment.binaries.appendingPathComponent("navlog")
            let environment = ["HOME": home.path, "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path]
            #expect(try ProcessRunner.run(navlog, ["ingest", "--quiet", "ev.jsonl", "--data-dir", "d"], environment: environment, currentDirectory: dir).status == 0)
            // A regular file where the index directory would go: it cannot be made (root can
            // write anywhere, so a read-only mode would not stop this test's user).
            try Data("not a directory".utf8).write(to: dir.appendingPathComponent("d/replay"))
            let sessions = try ProcessRunner.run(navlog, ["sessions", "--data-dir", "d"], environment: environment, currentDirectory: dir)
            #expect(sessions.status != 0)
            #expect(sessions.errorOutput.contains("--index-dir"), "\(sessions.errorOutput)")
            // query answers by replaying the log, writing nothing.
            let screens = try ProcessRunner.run(navlog, ["query", "screens", "--data-dir", "d"], environment: environment, currentDirectory: dir)
            #expect(screens.status == 0, "\(screens.errorOutput)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).isEmpty)
            // Named, the place is used.
            let named = try ProcessRunner.run(navlog, ["sessions", "--data-dir", "d", "--index-dir", "idx"], environment: environment, currentDirectory: dir)
            #expect(named.status == 0, "\(named.errorOutput)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("idx").path))
        }
    }

    @Test("navlogd and navlog send with a relative socket and data directory, from another working directory")
    func daemonRelative() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try RunningProcess(
                TestEnvironment.binaries.appendingPathComponent("navlogd"), ["--socket", "run/n.sock", "--data-dir", "store"], currentDirectory: dir)
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("run"), withIntermediateDirectories: true)
            let socket = dir.appendingPathComponent("run/n.sock").path
            var waited = 0
            while !FileManager.default.fileExists(atPath: socket), waited < 300 {
                usleep(20_000)
                waited += 1
            }
            #expect(FileManager.default.fileExists(atPath: socket), "navlogd did not create run/n.sock under its working directory")
            try Self.events(1_000).write(to: dir.appendingPathComponent("ev.jsonl"))
            let send = try ProcessRunner.run(
                TestEnvironment.binaries.appendingPathComponent("navlog"), ["send", "--socket", "run/n.sock", "ev.jsonl"], currentDirectory: dir)
            #expect(send.status == 0, "\(send.errorOutput)")
            let stopped = daemon.stop()
            #expect(stopped.status == 0, "\(stopped.errorOutput)")
            let verify = try ProcessRunner.run(
                TestEnvironment.binaries.appendingPathComponent("navlog"), ["verify", "--data-dir", "store"], currentDirectory: dir)
            #expect(verify.status == 0 && verify.output.contains("1000 events"), "\(verify.output)\(verify.errorOutput)")
        }
    }
}
