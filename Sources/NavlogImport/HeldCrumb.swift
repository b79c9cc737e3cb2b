/// A Sentry crumb kept until its session is written: what it shows, and what identifies it when
/// the events of one session are merged (a crumb repeated in a later event's ring buffer is
/// kept once). Repeats are found when the session is written, over its crumbs in the order they
/// were read, so that crumbs held in memory and crumbs spilled to disk (``SessionSpill``) are
/// merged alike.
struct HeldCrumb: Sendable {
    /// What the crumb shows.
    enum Outcome: Sendable {
        /// `app.lifecycle` `background`.
        case background
        /// `app.lifecycle` `foreground`.
        case foreground
        /// A `ui.lifecycle` crumb of a container or a UIKit internal: no screen.
        case notScreen
        /// A `ui.lifecycle` crumb of a screen, placed as its data proves.
        case appear(ImportedController, ImportedObservation.Placement)
    }

    /// A crumb's identity for merging events of one session.
    struct Key: Hashable {
        var timestamp: Int64
        var category: String
        var value: String

        /// The time alone: crumbs of one session seldom share a time unless they are the same
        /// crumb, and equality still compares every field; this keeps the strings' bytes out
        /// of each insertion's hash.
        func hash(into hasher: inout Hasher) {
            hasher.combine(timestamp)
        }
    }

    /// The crumb's time (µs).
    var timestamp: Int64
    /// Its place in the input, for crumbs of the same time.
    var order: Int
    /// `data.screen` as written, for a `ui.lifecycle` crumb; empty for `app.lifecycle`.
    var screen: String
    var outcome: Outcome

    /// The identity a repeat has too.
    var key: Key {
        switch outcome {
        case .background: Key(timestamp: timestamp, category: "app.lifecycle", value: "background")
        case .foreground: Key(timestamp: timestamp, category: "app.lifecycle", value: "foreground")
        case .notScreen, .appear: Key(timestamp: timestamp, category: "ui.lifecycle", value: screen)
        }
    }

    /// The observation it makes, or `nil` for a crumb of no screen.
    var observation: ImportedObservation? {
        switch outcome {
        case .background: ImportedObservation(timestamp: timestamp, kind: .background, order: order)
        case .foreground: ImportedObservation(timestamp: timestamp, kind: .foreground, order: order)
        case .notScreen: nil
        case .appear(let controller, let placement): ImportedObservation(timestamp: timestamp, kind: .appear(controller, placement), order: order)
        }
    }

    // MARK: Spilled form

    /// Appends the crumbs' bytes (the block ``decode(_:into:)`` reads).
    static func encode(_ crumbs: [HeldCrumb], into bytes: inout [UInt8]) {
        for crumb in crumbs {
            append(UInt64(bitPattern: crumb.timestamp), to: &bytes)
            append(UInt64(bitPattern: Int64(crumb.order)), to: &bytes)
            switch crumb.outcome {
            case .background: bytes.append(0)
            case .foreground: bytes.append(1)
            case .notScreen:
                bytes.append(2)
                append(crumb.screen, to: &bytes)
            case .appear(let controller, let placement):
                bytes.append(3)
                bytes.append(placements.firstIndex(of: placement).map(UInt8.init) ?? 0)
                append(crumb.screen, to: &bytes)
                append(controller.id, to: &bytes)
                append(controller.className, to: &bytes)
                bytes.append(controller.title == nil ? 0 : 1)
                if let title = controller.title { append(title, to: &bytes) }
            }
        }
    }

    /// Reads the crumbs of a block ``encode(_:into:)`` wrote, in order; `strings` keeps one copy
    /// of each class name and title read back.
    static func decode(_ bytes: [UInt8], strings: inout StringInterner, _ body: (HeldCrumb) -> Void) {
        bytes.withUnsafeBytes { raw in
            var position = 0
            func uint64() -> UInt64 {
                defer { position += 8 }
                return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            }
            func string() -> String {
                let length = Int(uint64())
                defer { position += length }
                return strings.intern(String(decoding: UnsafeRawBufferPointer(rebasing: raw[position..<(position + length)]), as: UTF8.self))
            }
            func byte() -> UInt8 {
                defer { position += 1 }
                return raw[position]
            }
            while position < raw.count {
                let timestamp = Int64(bitPattern: uint64())
                let order = Int(Int64(bitPattern: uint64()))
                switch byte() {
                case 0: body(HeldCrumb(timestamp: timestamp, order: order, screen: "", outcome: .background))
                case 1: body(HeldCrumb(timestamp: timestamp, order: order, screen: "", outcome: .foreground))
                case 2: body(HeldCrumb(timestamp: timestamp, order: order, screen: string(), outcome: .notScreen))
                default:
                    let placement = placements[Int(byte())]
                    let screen = string()
                    let id = string()
                    let className = string()
                    let title = byte() == 1 ? string() : nil
                    body(HeldCrumb(timestamp: timestamp, order: order, screen: screen, outcome: .appear(ImportedController(id: id, className: className, title: title), placement)))
                }
            }
        }
    }

    private static let placements: [ImportedObservation.Placement] = [.screen, .presented, .insidePresentation, .child]

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        append(UInt64(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }
}
