public import NavlogJSON

extension StoryboardCoverage.Unexpected {
    /// Appends the transition's members without the braces around them: `"from"`, `"to"`,
    /// `"how"`, `"count"`, then the example's `"session"` and `"seq"` (null when it has none).
    ///
    /// `navlog storyboard coverage --format json` writes a `"record"` member before them, the
    /// viewer's `GET /api/storyboards` none: the same row either way.
    public func appendJSONMembers(to json: inout JSONWriter) {
        json.key("from", first: true)
        json.string(from)
        json.member("to", to)
        json.member("how", how)
        json.member("count", count)
        json.member("session", example.session)
        json.member("seq", example.sequence)
    }
}
