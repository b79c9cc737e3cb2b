import Foundation
import Synchronization

/// The keys devices authenticate with (`Authorization: Bearer SECRET`), read from a JSON file:
/// `{"keys":[{"id":"ios-prod","secret":"…","eventsPerSecond":5000,"burst":20000,"apps":["Cookbook"]}]}`.
///
/// Each key's `id` is what navlogd stores with every event it sent (the trusted `_key`); its
/// secret never leaves the intake. Unknown members are allowed (a deployment tool may keep its
/// own notes there).
public struct IntakeKeys: Sendable {
    /// One key.
    public struct Key: Sendable, Equatable {
        /// The key's name, stored with each event it sent: 1–64 letters, digits, `.`, `_`, `-`.
        public var id: String
        /// The bearer secret devices send.
        var secret: [UInt8]
        /// This key's own rate limit in events per second (nil: the intake's default).
        public var eventsPerSecond: Double?
        /// This key's burst in events (nil: the intake's default).
        public var burst: Double?
        /// The apps (`session.start`'s `app`) this key may send sessions of; nil: any.
        public var apps: Set<String>?
    }

    /// Why the key file cannot be used; the intake refuses to start (or keeps its old keys on
    /// SIGHUP) and says this.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        /// What was wrong and what to do.
        public var message: String
        public var description: String { message }
    }

    /// The keys by id.
    public private(set) var keys: [Key]
    private var bySecretDigest: [Digest: Int]

    /// A secret's fixed-size digest: keys are found by it, so a lookup's time does not depend on
    /// how much of a wrong secret matches a right one.
    private struct Digest: Hashable {
        var a: UInt64
        var b: UInt64
    }

    /// Keys from memory (tests).
    public init(keys: [(id: String, secret: String)]) throws(LoadError) {
        try self.init(validating: keys.map { Key(id: $0.id, secret: Array($0.secret.utf8)) }, source: "the given keys")
    }

    private init(validating keys: [Key], source: String) throws(LoadError) {
        self.keys = keys
        bySecretDigest = [:]
        var ids = Set<String>()
        for (index, key) in keys.enumerated() {
            guard Self.isValidID(key.id) else {
                throw LoadError(message: "\(source): key \(index + 1) has id \"\(key.id)\"; an id is 1 to 64 letters, digits, '.', '_' or '-'.")
            }
            guard ids.insert(key.id).inserted else {
                throw LoadError(message: "\(source): the id \"\(key.id)\" is given twice; each key needs its own id.")
            }
            guard key.secret.count >= 16 else {
                throw LoadError(message: "\(source): the secret of key \"\(key.id)\" has \(key.secret.count) bytes; use at least 16 random bytes (e.g. `openssl rand -hex 32`).")
            }
            let digest = Self.digest(key.secret)
            guard bySecretDigest[digest] == nil else {
                throw LoadError(message: "\(source): keys \"\(keys[bySecretDigest[digest]!].id)\" and \"\(key.id)\" have the same secret; give each key its own.")
            }
            bySecretDigest[digest] = index
        }
    }

    /// Reads and checks the key file at `path`.
    ///
    /// - Throws: ``LoadError`` when the file is missing, has any permission for users outside
    ///   its owner and group, is not JSON of the expected shape, or a key is invalid.
    public static func load(path: String) throws(LoadError) -> IntakeKeys {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw LoadError(
                message:
                    "The key file \(path) cannot be read (\(error.localizedDescription)). Give --keys the path of a JSON file like {\"keys\":[{\"id\":\"ios-prod\",\"secret\":\"…\"}]}."
            )
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw LoadError(message: "The key file \(path) is not a regular file.")
        }
        // Secrets readable by everyone on the machine are not secrets.
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        if mode & 0o007 != 0 {
            throw LoadError(
                message:
                    "The key file \(path) is open to other users (mode \(String(mode, radix: 8))); run `chmod o-rwx \(path)` (0600, or 0640 with the intake's group) and start again."
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LoadError(message: "The key file \(path) cannot be read (permission denied?).")
        }
        return try parse(data, source: path)
    }

    /// Parses a key file's bytes; `source` names it in errors.
    static func parse(_ data: Data, source: String) throws(LoadError) -> IntakeKeys {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw LoadError(message: "\(source) is not valid JSON (\(error.localizedDescription)); it should look like {\"keys\":[{\"id\":\"ios-prod\",\"secret\":\"…\"}]}.")
        }
        guard let object = root as? [String: Any], let list = object["keys"] as? [Any] else {
            throw LoadError(message: "\(source) has no \"keys\" array; it should look like {\"keys\":[{\"id\":\"ios-prod\",\"secret\":\"…\"}]}.")
        }
        var keys: [Key] = []
        for (index, item) in list.enumerated() {
            let place = "\(source): key \(index + 1)"
            guard let entry = item as? [String: Any] else { throw LoadError(message: "\(place) is not an object.") }
            guard let id = entry["id"] as? String else { throw LoadError(message: "\(place) has no string \"id\".") }
            guard let secret = entry["secret"] as? String else { throw LoadError(message: "\(place) (\"\(id)\") has no string \"secret\".") }
            var key = Key(id: id, secret: Array(secret.utf8))
            if let value = entry["eventsPerSecond"] {
                guard let number = value as? NSNumber, !(value is Bool), number.doubleValue > 0 else {
                    throw LoadError(message: "\(place) (\"\(id)\"): \"eventsPerSecond\" must be a number above 0.")
                }
                key.eventsPerSecond = number.doubleValue
            }
            if let value = entry["burst"] {
                guard let number = value as? NSNumber, !(value is Bool), number.doubleValue >= 1 else {
                    throw LoadError(message: "\(place) (\"\(id)\"): \"burst\" must be a number of events, at least 1.")
                }
                key.burst = number.doubleValue
            }
            if let value = entry["apps"] {
                guard let apps = value as? [String] else {
                    throw LoadError(message: "\(place) (\"\(id)\"): \"apps\" must be an array of app names (session.start's \"app\").")
                }
                key.apps = Set(apps)
            }
            keys.append(key)
        }
        return try IntakeKeys(validating: keys, source: source)
    }

    /// The key whose secret is `secret`, if any, compared in constant time.
    public func key(secret: some Collection<UInt8>) -> Key? {
        let bytes = Array(secret)
        guard let index = bySecretDigest[Self.digest(bytes)] else { return nil }
        let key = keys[index]
        guard key.secret.count == bytes.count else { return nil }
        var difference: UInt8 = 0
        for (a, b) in zip(key.secret, bytes) { difference |= a ^ b }
        return difference == 0 ? key : nil
    }

    /// Whether `id` may name a key (and so be stored as `_key`).
    static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }

    /// FNV-1a over the secret in two lanes: a digest for the table, not a security boundary (the
    /// constant-time comparison after it is).
    private static func digest(_ bytes: [UInt8]) -> Digest {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b &+ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
        }
        return Digest(a: a, b: b)
    }
}

/// The keys in force, replaced whole on SIGHUP: requests already authenticated keep the key
/// they were checked against; the next request sees the new file.
public final class IntakeKeyStore: Sendable {
    private let current: Mutex<IntakeKeys>
    /// Where the keys come from (nil: given in memory).
    public let path: String?

    /// Keys from a file, loaded now.
    public init(path: String) throws(IntakeKeys.LoadError) {
        self.path = path
        current = Mutex(try IntakeKeys.load(path: path))
    }

    /// Keys given in memory.
    public init(keys: IntakeKeys) {
        path = nil
        current = Mutex(keys)
    }

    /// The keys in force.
    public var keys: IntakeKeys { current.withLock { $0 } }

    /// Reads the file again; on an error the keys in force stay and the error is thrown.
    /// - Returns: how many keys are now in force.
    @discardableResult
    public func reload() throws(IntakeKeys.LoadError) -> Int {
        guard let path else { return keys.keys.count }
        let fresh = try IntakeKeys.load(path: path)
        current.withLock { $0 = fresh }
        return fresh.keys.count
    }
}
