import NavlogJSON

// Writing events: the envelope every event opens with, taking back what the session's
// recording style does not record, controller references and the fields events share.

extension SessionSimulator {
    /// Opens an event: `{"type":…,"session":…,"ts":…,"seq":…` at `clock + delay`.
    @inline(__always)
    mutating func open(_ type: StaticString, after delay: Int64) {
        clock &+= delay
        seq &+= 1
        eventStart = out.bytes.count
        openType = type
        openIsWill = false
        describedInEvent.removeAll(keepingCapacity: true)
        out.raw("{\"type\":\"")
        out.raw(type)
        out.raw("\",\"session\":\"")
        out.raw(sessionID)
        out.raw("\",\"ts\":")
        out.integer(clock)
        out.raw(",\"seq\":")
        out.integer(seq)
    }

    /// Opens an event a moment after the previous one.
    @inline(__always)
    mutating func open(_ type: StaticString) { open(type, after: quick()) }

    /// Closes the open event, with `cause` when it is not 0.
    @inline(__always)
    mutating func close(cause: UInt64 = 0) {
        // Not recorded by this app: the event never existed (its seq is the next one's). An
        // operation that confirms an intent (`cause`) is one a tracker without intents does not
        // see as separate: it records the intent (a segue, show) and navlog resolves it.
        if style != .full && (cause > 0 || !records(openType, will: openIsWill)) {
            out.bytes.removeSubrange(eventStart...)
            seq &-= 1
            for handle in describedInEvent { ctlMentioned[Int(handle)] = false }
            return
        }
        if cause > 0 && style == .full {
            out.key("cause")
            out.integer(cause)
        }
        out.byte(UInt8(ascii: "}"))
        ends.append(out.bytes.count)
        stamps.append(clock)
        emitted += 1
    }

    /// Counts a gesture the user started and let go of (a swipe back, a sheet swipe-down). UIKit
    /// calls `popViewController` / `dismiss` when the gesture begins, so every style records the
    /// call, a navigation-only tracker included (../shared/workload.md); only the callbacks
    /// after it, where recorded, show it was cancelled (E6). In a navigation-only session
    /// nothing does but what the user does next (E7), so where the user is afterwards cannot
    /// be told from its events: readers that compare screens leave such sessions out.
    mutating func noteCancelledGesture() {
        cancelledGestures += 1
    }

    /// Whether this session's style records an event of `type` (`will`: an appearance callback's will phase).
    func records(_ type: StaticString, will: Bool) -> Bool {
        // Compared as bytes: this runs for every event of such a session.
        let (appearance, transition) = type.withUTF8Buffer { name in
            (name.elementsEqual("vc.appear".utf8) || name.elementsEqual("vc.disappear".utf8), name.starts(with: "transition.".utf8))
        }
        switch style {
        case .full: return true
        case .didOnly: return !transition && !(appearance && will)
        case .willAndDid: return !transition
        case .navigationOnly: return !transition && !appearance
        }
    }

    /// Writes a controller reference: the full object at its first mention, the bare id after.
    mutating func ref(_ handle: Int32) {
        let i = Int(handle)
        if ctlMentioned[i] {
            out.pointer(ctlAddress[i])
            return
        }
        ctlMentioned[i] = true
        describedInEvent.append(handle)
        let c = Int(ctlClass[i])
        out.raw("{\"id\":")
        out.pointer(ctlAddress[i])
        out.raw(",\"class\":")
        out.string(classes[c].name)
        let kind = classes[c].kind
        if kind.utf8CodeUnitCount > 0 && (classes[c].kindRequired || rng.chance(0.8)) {
            out.key("kind")
            out.raw("\"")
            out.raw(kind)
            out.raw("\"")
        }
        let sbid = classes[c].sbid
        if sbid.utf8CodeUnitCount > 0 && rng.chance(0.75) {
            out.raw(",\"storyboard\":\"Main\",\"sbid\":")
            out.string(sbid)
        }
        let ownTitle = ctlTitle[i]
        if ownTitle.utf8CodeUnitCount > 0 {
            out.key("title")
            out.string(ownTitle)
        } else if classes[c].title.utf8CodeUnitCount > 0 && rng.chance(0.6) {
            out.key("title")
            out.string(classes[c].title)
        }
        if classes[c].unwindAction.utf8CodeUnitCount > 0 {
            out.raw(",\"unwindActions\":[")
            out.string(classes[c].unwindAction)
            out.raw("]")
        }
        if classes[c].definesContext {
            out.raw(",\"definesContext\":true")
        }
        if sbid.utf8CodeUnitCount > 0 && rng.chance(0.04) {
            out.key("restorationId")
            out.string(sbid)
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// Writes `,"key":<ref>`.
    @inline(__always)
    mutating func field(_ key: StaticString, ref handle: Int32) {
        out.key(key)
        ref(handle)
    }

    /// Writes `,"key":"value"` for a value that needs no escaping.
    @inline(__always)
    mutating func field(_ key: StaticString, plain value: StaticString) {
        out.key(key)
        out.byte(UInt8(ascii: "\""))
        out.raw(value)
        out.byte(UInt8(ascii: "\""))
    }

    /// Writes `,"key":true|false`.
    @inline(__always)
    mutating func field(_ key: StaticString, bool value: Bool) {
        out.key(key)
        out.bool(value)
    }

    /// Writes `,"key":[<ref>,…]`.
    mutating func field(_ key: StaticString, refs handles: some Sequence<Int32>) {
        out.key(key)
        out.byte(UInt8(ascii: "["))
        var first = true
        for handle in handles {
            if !first { out.byte(UInt8(ascii: ",")) }
            first = false
            ref(handle)
        }
        out.byte(UInt8(ascii: "]"))
    }

    /// Writes `,"animated":…` most of the time (a recorder does not always know).
    @inline(__always)
    mutating func animatedField(_ value: Bool) {
        if rng.chance(0.9) { field("animated", bool: value) }
    }

    /// Writes a transition id such as `"pop-3"`.
    mutating func transitionID(_ prefix: StaticString, _ number: UInt64) {
        out.key("id")
        out.byte(UInt8(ascii: "\""))
        out.raw(prefix)
        out.byte(UInt8(ascii: "-"))
        out.integer(number)
        out.byte(UInt8(ascii: "\""))
    }

    /// Writes an anchor object.
    mutating func anchor(_ spec: AnchorSpec) {
        out.key("anchor")
        switch spec {
        case .barButton(let name):
            out.raw("{\"barButtonItem\":")
            out.string(name)
            out.byte(UInt8(ascii: "}"))
        case .sourceView(let name):
            out.raw("{\"sourceView\":")
            out.string(name)
            out.raw(",\"sourceRect\":{\"x\":")
            if rng.chance(0.3) { out.decimal(tenths: rng.between(0, 3_400)) } else { out.integer(UInt64(rng.between(0, 340))) }
            out.raw(",\"y\":")
            out.integer(UInt64(rng.between(0, 900)))
            out.raw(",\"width\":")
            out.integer(UInt64(rng.chance(0.7) ? 44 : rng.between(20, 320)))
            out.raw(",\"height\":")
            if rng.chance(0.2) { out.decimal(tenths: rng.between(200, 600)) } else { out.integer(44) }
            out.raw("}}")
        case .none:
            out.raw("{\"barButtonItem\":\"moreButton\"}")
        }
    }

    /// Writes a complete `segue` event; returns its seq.
    @discardableResult
    mutating func segue(
        kind: StaticString, source: Int32, identifier: StaticString, destination: Int32, phase: StaticString,
        result: Bool? = nil, style: PresentationStyle? = nil, transition: StaticString = "",
        anchor anchorSpec: AnchorSpec? = nil, action: StaticString = "", animated: Bool? = nil,
        segueClass: StaticString = ""
    ) -> UInt64 {
        open("segue")
        field("kind", plain: kind)
        field("source", ref: source)
        if identifier.utf8CodeUnitCount > 0 {
            out.key("identifier")
            out.string(identifier)
        }
        if destination >= 0 { field("destination", ref: destination) }
        if let style { field("style", plain: style.name) }
        if transition.utf8CodeUnitCount > 0 { field("transition", plain: transition) }
        if let anchorSpec { anchor(anchorSpec) }
        if action.utf8CodeUnitCount > 0 {
            out.key("action")
            out.string(action)
        }
        if let animated { field("animated", bool: animated) }
        if segueClass.utf8CodeUnitCount > 0 { field("segueClass", plain: segueClass) }
        field("phase", plain: phase)
        if let result { field("result", bool: result) }
        close()
        return seq
    }

    /// Writes a storyboard segue's phases before `perform`: `should`, asked with probability
    /// `asked` and refused with probability `refused`, then `prepare` with probability `prepared`.
    /// - Returns: false when `should` said no (the segue stops there).
    mutating func segueShouldAndPrepare(
        kind: StaticString, source: Int32, identifier: StaticString, destination: Int32, asked: Double, refused: Double, prepared: Double
    ) -> Bool {
        if rng.chance(asked) {
            let ok = !rng.chance(refused)
            segue(kind: kind, source: source, identifier: identifier, destination: destination, phase: "should", result: ok)
            if !ok { return false }
        }
        if rng.chance(prepared) {
            segue(kind: kind, source: source, identifier: identifier, destination: destination, phase: "prepare")
        }
        return true
    }

    /// Writes an intent made in code (`show`, `showDetail`) to show `vc` from `source`.
    /// - Returns: its seq, the `cause` of the operation that carries it out.
    mutating func intent(_ type: StaticString, from source: Int32, vc: Int32) -> UInt64 {
        open(type)
        field("from", ref: source)
        field("vc", ref: vc)
        close()
        return seq
    }
}
