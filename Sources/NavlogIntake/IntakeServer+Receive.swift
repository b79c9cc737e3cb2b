import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NavlogEvents

extension IntakeServer {
    /// `POST /v1/events`: authenticate, decode within the limits, rate-limit, relay, answer.
    ///
    /// The order is what makes the answers true: nothing is relayed before the whole body is
    /// decoded and checked, so 400, 401, 413 and 429 store nothing; 503 stores nothing unless
    /// navlogd failed in the middle of the body (then a resend stores the rest once).
    func receive(_ request: Request, context: IntakeRequestContext) async -> Response {
        let started = ContinuousClock.now
        let response = await answer(request, context: context)
        metrics.answered(status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }

    private func answer(_ request: Request, context: IntakeRequestContext) async -> Response {
        // 401 before reading a byte of the body.
        guard let secret = Self.bearerToken(request.headers[.authorization]) else {
            return IntakeResponses.unauthorized("No key: send 'Authorization: Bearer SECRET' with one of this intake's keys.")
        }
        guard let key = keys.keys.key(secret: secret.utf8) else {
            return IntakeResponses.unauthorized("The key is not one of this intake's keys (or it was revoked); check the app's configured secret.")
        }
        guard let encoding = BodyDecoder.Encoding(header: request.headers[.contentEncoding]) else {
            return IntakeResponses.error(
                .unsupportedMediaType, code: "encoding",
                "Content-Encoding \"\(request.headers[.contentEncoding] ?? "")\" is not one the intake reads; send gzip, zstd or no encoding.")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > configuration.maximumBodyBytes {
            return IntakeResponses.error(
                .contentTooLarge, code: "too-large", "The body has \(length) bytes; the limit is \(configuration.maximumBodyBytes). Send smaller batches.", close: true)
        }

        // The body, decoded as it arrives.
        let decoded: [UInt8]
        do {
            decoded = try await decode(request.body, encoding: encoding)
        } catch {
            switch error {
            case .tooLarge(let message): return IntakeResponses.error(.contentTooLarge, code: "too-large", message, close: true)
            case .malformed(let message): return IntakeResponses.error(.badRequest, code: "malformed-body", message)
            }
        }

        // Lines: each within the limit, the last one ended.
        let lines: BodyLines
        switch BodyLines.split(decoded, maximumLineBytes: configuration.maximumLineBytes) {
        case .success(let split): lines = split
        case .failure(let tooLong):
            return IntakeResponses.error(
                .contentTooLarge, code: "line-too-long",
                "Line \(tooLong.line) has \(tooLong.length) bytes; the limit is \(configuration.maximumLineBytes). Nothing of the body was stored; split or shorten the event.",
                line: tooLong.line)
        }
        if let apps = key.apps, let line = lines.firstSessionStart(outside: apps) {
            return IntakeResponses.error(
                .forbidden, code: "app-not-allowed",
                "Line \(line.number) starts a session of app \"\(line.app)\", which key \"\(key.id)\" may not send (its apps: \(apps.sorted().joined(separator: ", "))). Nothing of the body was stored.",
                line: line.number)
        }
        if lines.events == 0 {
            return IntakeResponses.accepted(RelayOutcome(rejected: lines.rejected))
        }

        // Rate limits: the key's, then the client address's; a refused body costs no tokens.
        let now = ContinuousClock.now.secondsSinceStart
        let keyRate = key.eventsPerSecond ?? configuration.keyEventsPerSecond
        let keyBurst = key.burst ?? max(configuration.keyBurst, keyRate)
        if case .refused(let retry) = keyLimits.take(lines.events, name: key.id, rate: keyRate, burst: keyBurst, now: now) {
            return IntakeResponses.error(
                .tooManyRequests, code: "rate-limited", "Key \"\(key.id)\" is over its rate of \(Int(keyRate)) events/s; nothing was stored. Resend after \(retry) s.",
                retryAfter: retry)
        }
        let address = clientAddress(request, context: context)
        if case .refused(let retry) = addressLimits.take(
            lines.events, name: address, rate: configuration.addressEventsPerSecond, burst: configuration.addressBurst, now: now)
        {
            keyLimits.refund(lines.events, name: key.id, burst: keyBurst)
            return IntakeResponses.error(
                .tooManyRequests, code: "rate-limited",
                "Client \(address) is over its rate of \(Int(configuration.addressEventsPerSecond)) events/s; nothing was stored. Resend after \(retry) s.",
                retryAfter: retry)
        }

        do {
            var outcome = try await relay.relay(keyID: key.id, body: lines.buffer, lines: lines.count)
            metrics.relayed(outcome)
            if !lines.rejected.isEmpty {
                outcome.rejected = (lines.rejected + outcome.rejected).sorted { $0.line < $1.line }
            }
            return IntakeResponses.accepted(outcome)
        } catch {
            metrics.failed(error)
            if error.storedBeforeFailure == 0 {
                keyLimits.refund(lines.events, name: key.id, burst: keyBurst)
                addressLimits.refund(lines.events, name: address, burst: configuration.addressBurst)
            }
            logger.warning("Answered 503: \(error.message).", metadata: ["key": "\(key.id)", "client": "\(address)"])
            let stored =
                error.storedBeforeFailure > 0
                ? " navlogd had stored \(error.storedBeforeFailure) of its events before; a resend stores the rest once." : " Nothing of the body was stored."
            return IntakeResponses.error(
                .serviceUnavailable, code: error.code == .storeRefused ? "store-unavailable" : "unavailable",
                "The intake cannot store events now: \(error.message).\(stored) Resend after \(configuration.unavailableRetryAfterSeconds) s.",
                retryAfter: configuration.unavailableRetryAfterSeconds)
        }
    }

    /// Reads and decodes the body, stopping at the first limit crossed.
    private func decode(_ body: RequestBody, encoding: BodyDecoder.Encoding) async throws(BodyDecoder.Failure) -> [UInt8] {
        let decoder = try BodyDecoder(
            encoding: encoding,
            limits: .init(
                maximumBodyBytes: configuration.maximumBodyBytes, maximumDecodedBytes: configuration.maximumDecodedBytes,
                maximumRatio: configuration.maximumCompressionRatio, ratioCheckAfterBytes: 1 << 20))
        do {
            for try await piece in body {
                try piece.withUnsafeReadableBytes { bytes throws(BodyDecoder.Failure) in try decoder.feed(bytes) }
            }
        } catch let failure as BodyDecoder.Failure {
            throw failure
        } catch {
            throw .malformed("The body ended early (\(error)).")
        }
        let sent = decoder.encodedBytes
        let decoded = try decoder.finish()
        metrics.body(sent: sent, decoded: decoded.count)
        return decoded
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the last
    /// address in `X-Forwarded-For` that is not one of the trusted proxies.
    func clientAddress(_ request: Request, context: IntakeRequestContext) -> String {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        guard configuration.trustedProxies.contains(peer), let forwarded = request.headers[.xForwardedFor] else { return peer }
        let hops = forwarded.split(separator: ",").map { String($0.trimmingCharacters(in: .whitespaces)) }
        return hops.last { !configuration.trustedProxies.contains($0) } ?? peer
    }

    /// The token of an `Authorization: Bearer TOKEN` header.
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`, set by a proxy in front of the intake.
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}

extension ContinuousClock.Instant {
    /// Seconds since an arbitrary fixed start, for the rate limiter's arithmetic.
    var secondsSinceStart: Double {
        let duration = self - ContinuousClock.Instant.processStart
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static let processStart = ContinuousClock.now
}
