import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// A viewer request about a session that cannot be answered as asked.
struct ViewerRequestError: Error, Sendable {
    /// HTTP status: 400 for a malformed request, 404 for something that does not exist.
    var status: Int
    /// What was wrong and what to do, as a sentence.
    var message: String
}

extension ViewerEngine {
    /// The session's events from position `from` on, each with what the rules made of it, as the
    /// JSON of `GET /api/sessions/{id}/events`: the page's timeline. Nil when the log holds no
    /// event of the session.
    func timeline(session: String, from: Int) throws -> [UInt8]? {
        try catchUp()
        let current = try indexIsCurrent(for: session)
        var json = JSONBuffer()
        var anomalyCount = 0
        var emitted = 0
        json.raw("{\"events\":[")
        let found = try seeker.replay(session: session, to: .end, useCheckpoints: false, indexIsCurrent: current) { block, position, state, resolution in
            let raised = state.anomalies[anomalyCount...]
            anomalyCount = state.anomalies.count
            let number = state.eventCount - 1
            guard number >= from else { return true }
            if emitted > 0 { json.raw(",") }
            emitted += 1
            json.raw("{\"index\":\(number),\"seq\":")
            json.number(block.sequence(position))
            json.raw(",\"ts\":\(block.timestamps[position]),\"lsn\":\(block.lsn(position)),\"type\":")
            json.string(block.types[position].name)
            json.raw(",\"event\":")
            var line: [UInt8] = []
            if (try? block.appendJSONLine(position, to: &line)) != nil {
                if line.last == 0x0A { line.removeLast() }
                json.raw(line)
            } else {
                json.raw("null")
            }
            json.key("resolution")
            json.string(resolution.map { state.describe($0) })
            json.key("action")
            json.string(resolution?.action)
            // Which rule resolved the intent, and which intent an operation's `cause` confirmed.
            let sequence = block.sequence(position)
            json.key("rule")
            json.string(resolution != nil ? sequence.flatMap { state.rememberedIntentRule(sequence: $0) } : nil)
            let cause = block.withBody(position) { $0.field(.cause)?.integer }
            json.key("confirms")
            if let cause, cause >= 0, resolution == nil {
                json.raw("{\"seq\":\(cause),\"rule\":")
                json.string(state.rememberedIntentRule(sequence: UInt64(cause)))
                json.raw("}")
            } else {
                json.raw("null")
            }
            json.key("focus")
            json.string(state.focus.map { state.id(of: $0) })
            json.key("focusClass")
            json.string(state.focus.flatMap { state.controllers[$0].className })
            json.key("anomalies")
            var anomalies: [UInt8] = [UInt8(ascii: "[")]
            for (count, anomaly) in raised.enumerated() {
                if count > 0 { anomalies.append(UInt8(ascii: ",")) }
                state.appendAnomalyJSON(anomaly, session: session, to: &anomalies)
            }
            anomalies.append(UInt8(ascii: "]"))
            json.raw(anomalies)
            json.raw("}")
            return true
        }
        guard let found else { return nil }
        let summary = found.info
        json.raw("]")
        json.key("session")
        json.string(session)
        json.key("count")
        json.number(found.eventCount)
        json.key("from")
        json.number(from)
        json.key("app")
        json.string(summary.app)
        json.key("version")
        json.string(summary.version)
        json.key("device")
        json.string(summary.device)
        json.key("idiom")
        json.string(summary.idiom == .unknown ? nil : summary.idiom.description)
        json.key("first")
        json.number(summary.firstTimestamp)
        json.key("last")
        json.number(summary.lastTimestamp)
        json.key("ended")
        json.bool(summary.ended)
        json.key("lateEvents")
        json.number(found.lateEvents)
        json.key("through")
        json.number(newestLSN)
        json.raw("}")
        return json.bytes
    }

    /// The session's hierarchy after the event at position `index` (`navlog replay --index`),
    /// or after its last event when `index` is nil, as the JSON of `navlog replay --format json`.
    func state(session: String, index position: Int?) throws -> [UInt8] {
        try catchUp()
        let current = try indexIsCurrent(for: session)
        guard let state = try seeker.replay(session: session, to: position.map { .index($0) } ?? .end, indexIsCurrent: current) else {
            throw ViewerRequestError(status: 404, message: "The log holds no events of session \(session).")
        }
        if let position, state.eventCount <= position {
            throw ViewerRequestError(
                status: 404, message: "Session \(session) has \(state.eventCount) events (index 0 to \(state.eventCount - 1)); \(position) is past its end.")
        }
        var output: [UInt8] = []
        state.appendJSON(session: session, to: &output)
        return output
    }

    /// The session's hierarchy after its event with this `seq` (`navlog replay --seq`).
    func state(session: String, sequence: UInt64) throws -> [UInt8] {
        try catchUp()
        let current = try indexIsCurrent(for: session)
        guard let state = try seeker.replay(session: session, to: .sequence(sequence), indexIsCurrent: current) else {
            throw ViewerRequestError(status: 404, message: "The log holds no events of session \(session) up to seq \(sequence).")
        }
        guard state.position?.sequence == sequence else {
            let nearest = state.position?.sequence.map { "the nearest earlier event has seq \($0)" } ?? "its events before it carry no seq"
            throw ViewerRequestError(status: 404, message: "Session \(session) has no event with seq \(sequence); \(nearest).")
        }
        var output: [UInt8] = []
        state.appendJSON(session: session, to: &output)
        return output
    }

    /// How many events of `session` the log holds past LSN `after`, and the newest LSN: what a
    /// live page polls (a scan of the blocks appended since, through the session's postings).
    func newEvents(session: String, after: UInt64) throws -> (count: Int, newest: UInt64) {
        try catchUp()
        let newest = newestLSN
        guard newest > after else { return (0, newest) }
        var query = LogQuery(session: session)
        query.fromLSN = after + 1
        var count = 0
        try reader.scan(query) { _, _ in
            count += 1
            return true
        }
        return (count, newest)
    }
}
