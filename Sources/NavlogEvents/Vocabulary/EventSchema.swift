/// The shape a field's value must have (see `schemas/README.md`, "Value kinds").
enum ValueRule: Sendable {
    case string, nonEmptyString, bool, uint, number, ref, refs, refOrNull, anchor, traits, props, stringArray, rectangle
    /// One of a fixed set of strings.
    case oneOf(StringSet)
    /// The protocol version: the integer 1.
    case protocolVersion
}

/// A small fixed set of allowed strings, compared as bytes.
///
/// A class, so a ``ValueRule`` carrying one is copied with one reference count, not three.
final class StringSet: Sendable {
    let name: String
    let values: [[UInt8]]
    private let table: NameTable
    init(_ name: String, _ values: [String]) {
        self.name = name
        self.values = values.map { Array($0.utf8) }
        self.table = NameTable(values.enumerated().map { ($0.element, UInt8($0.offset)) })
    }
    @inline(__always)
    func contains(_ bytes: UnsafeRawBufferPointer) -> Bool {
        table.lookup(bytes) != nil
    }
    var list: String {
        values.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ", ")
    }
}

/// A field an event type allows, and whether it must be present.
struct FieldRule: Sendable {
    let field: FieldName
    let rule: ValueRule
    let required: Bool
}

/// The fields of one event type.
struct TypeSchema: Sendable {
    let rules: [FieldRule]
    /// Bit i set = rules[i] is required.
    let requiredMask: UInt32
    /// FieldName raw value → index in ``rules``, or -1 when the type has no such field.
    let slots: [Int8]

    init(_ rules: [FieldRule]) {
        self.rules = rules
        var slots = [Int8](repeating: -1, count: 128)
        for (index, rule) in rules.enumerated() { slots[Int(rule.field.rawValue)] = Int8(index) }
        self.slots = slots
        var mask: UInt32 = 0
        for (index, rule) in rules.enumerated() where rule.required { mask |= 1 << UInt32(index) }
        self.requiredMask = mask
    }

    @inline(__always)
    func index(of field: FieldName) -> Int? {
        for index in rules.indices where rules[index].field == field { return index }
        return nil
    }
}

enum Vocabulary {
    static let sizeClass = StringSet("size class", ["compact", "regular"])
    static let idiom = StringSet("idiom", ["phone", "pad", "mac", "tv", "vision"])
    static let presentationStyle = StringSet(
        "presentation style", ["fullScreen", "pageSheet", "formSheet", "currentContext", "overFullScreen", "overCurrentContext", "popover", "custom", "automatic"])
    static let transitionStyle = StringSet("transition style", ["coverVertical", "flipHorizontal", "crossDissolve", "partialCurl"])
    static let alertStyle = StringSet("alert style", ["alert", "actionSheet"])
    static let segueKind = StringSet(
        "segue kind", ["show", "showDetail", "presentation", "popoverPresentation", "embed", "unwind", "custom", "relationship", "push", "modal", "replace", "popover"])
    static let relationship = StringSet(
        "relationship", ["rootViewController", "viewControllers", "masterViewController", "detailViewController", "supplementaryViewController", "compactViewController"])
    static let seguePhase = StringSet("segue phase", ["should", "prepare", "perform"])
    static let appearancePhase = StringSet("appearance phase", ["will", "did"])
    static let controllerKind = StringSet("controller kind", ["navigation", "tab", "split", "page", "alert", "plain"])

    /// Index = EventType raw value. The envelope fields `v` and `cause` are added to every type.
    static let schemas: [TypeSchema] = {
        func r(_ field: FieldName, _ rule: ValueRule) -> FieldRule { FieldRule(field: field, rule: rule, required: true) }
        func o(_ field: FieldName, _ rule: ValueRule) -> FieldRule { FieldRule(field: field, rule: rule, required: false) }
        let envelope = [o(.v, .protocolVersion), o(.cause, .uint)]
        let anchored = [o(.animated, .bool)]
        var table = [TypeSchema](repeating: TypeSchema([]), count: EventType.allCases.count + 1)
        func define(_ type: EventType, _ rules: [FieldRule], envelope: [FieldRule] = envelope) {
            table[Int(type.rawValue)] = TypeSchema(rules + envelope)
        }
        define(.sessionStart, [r(.app, .string), o(.version, .string), o(.build, .string), o(.os, .string), o(.device, .string), o(.idiom, .oneOf(idiom)), o(.traits, .traits)])
        define(.sessionEnd, [o(.reason, .string)])
        define(.appForeground, [])
        define(.appBackground, [])
        // In traits.change `v` is the vertical size class (events.md), so the protocol version
        // cannot be stated there; it is 1.
        define(.traitsChange, [r(.h, .oneOf(sizeClass)), r(.v, .oneOf(sizeClass))], envelope: [o(.cause, .uint)])
        define(.windowRoot, [o(.window, .string), r(.vc, .ref)])
        define(.navPush, [r(.nav, .ref), r(.vc, .ref)] + anchored)
        define(.navPop, [r(.nav, .ref), o(.vc, .ref)] + anchored)
        define(.navPopTo, [r(.nav, .ref), r(.vc, .ref)] + anchored)
        define(.navPopToRoot, [r(.nav, .ref)] + anchored)
        define(.navSet, [r(.nav, .ref), r(.vcs, .refs)] + anchored)
        define(.tabSet, [r(.tab, .ref), r(.vcs, .refs), o(.selected, .uint)])
        define(.tabSelect, [r(.tab, .ref), o(.index, .uint), o(.vc, .ref), o(.byUser, .bool)])
        define(.splitSet, [r(.split, .ref), o(.primary, .ref), o(.secondary, .ref), o(.supplementary, .ref)])
        define(.splitCollapse, [r(.split, .ref)])
        define(.splitExpand, [r(.split, .ref)])
        define(
            .present,
            [
                r(.from, .ref), r(.vc, .ref), o(.style, .oneOf(presentationStyle)), o(.transition, .oneOf(transitionStyle)), o(.animated, .bool), o(.anchor, .anchor),
                o(.alertStyle, .oneOf(alertStyle)),
            ])
        define(.dismiss, [r(.vc, .ref), o(.animated, .bool)])
        define(.show, [r(.from, .ref), r(.vc, .ref)])
        define(.showDetail, [r(.from, .ref), r(.vc, .ref)])
        define(
            .segue,
            [
                r(.kind, .oneOf(segueKind)), r(.source, .ref), o(.identifier, .string), o(.destination, .ref),
                o(.style, .oneOf(presentationStyle)), o(.transition, .oneOf(transitionStyle)), o(.animated, .bool),
                o(.anchor, .anchor), o(.action, .string), o(.relationship, .oneOf(relationship)),
                o(.phase, .oneOf(seguePhase)), o(.result, .bool), o(.segueClass, .string),
            ])
        define(.unwind, [r(.source, .ref), r(.action, .string), o(.target, .ref)])
        define(.childAdd, [r(.parent, .ref), r(.vc, .ref), o(.slot, .string)])
        define(.childRemove, [r(.vc, .ref), o(.parent, .ref), o(.slot, .string)])
        define(.childWillMove, [r(.vc, .ref), o(.parent, .refOrNull), o(.slot, .string)])
        define(.childDidMove, [r(.vc, .ref), o(.parent, .refOrNull), o(.slot, .string)])
        define(.vcAppear, [r(.vc, .ref), r(.phase, .oneOf(appearancePhase)), o(.animated, .bool)])
        define(.vcDisappear, [r(.vc, .ref), r(.phase, .oneOf(appearancePhase)), o(.animated, .bool)])
        define(.transitionBegin, [r(.id, .nonEmptyString), o(.interactive, .bool)])
        define(.transitionEnd, [r(.id, .nonEmptyString), o(.interactive, .bool), o(.completed, .bool)])
        define(.mark, [r(.name, .string), o(.props, .props)])
        return table
    }()

    static let traits = ObjectShape("traits object {\"h\", \"v\"}", [.h: .oneOf(sizeClass), .v: .oneOf(sizeClass)], required: [.h, .v])
    static let anchor = ObjectShape(
        "anchor object {\"barButtonItem\", \"sourceView\", \"sourceRect\"}", [.barButtonItem: .string, .sourceView: .string, .sourceRect: .rectangle], required: [])
    static let rectangle = ObjectShape(
        "rectangle {\"x\", \"y\", \"width\", \"height\"}", [.x: .number, .y: .number, .width: .number, .height: .number], required: [.x, .y, .width, .height])

    /// Keys a controller reference object may have.
    static let reference = ObjectShape(
        "controller reference",
        [
            .id: .nonEmptyString, .class: .string, .sbid: .string, .storyboard: .string, .title: .string,
            .kind: .oneOf(controllerKind), .definesContext: .bool, .unwindActions: .stringArray, .restorationId: .string,
        ], required: [.id, .class])
}

/// The keys a nested object (a controller reference, traits, an anchor, a rectangle) may have.
///
/// Rules are looked up by the key's byte in a flat table: checking the objects of every event
/// (each names controllers) must not hash.
final class ObjectShape: Sendable {
    /// What the object is called in messages.
    let what: String
    /// FieldName raw value → rule, `nil` where the key is not allowed.
    let rules: [ValueRule?]
    /// The keys that must be present, in the order a missing one is reported.
    let required: [FieldName]
    let requiredMask: UInt128
    /// The allowed keys, sorted, for messages.
    let allowedList: String

    init(_ what: String, _ allowed: [FieldName: ValueRule], required: [FieldName]) {
        self.what = what
        var rules = [ValueRule?](repeating: nil, count: 128)
        for (field, rule) in allowed { rules[Int(field.rawValue)] = rule }
        self.rules = rules
        self.required = required
        requiredMask = required.reduce(0) { $0 | 1 << UInt128($1.rawValue) }
        allowedList = allowed.keys.map(\.name).sorted().joined(separator: ", ")
    }
}
