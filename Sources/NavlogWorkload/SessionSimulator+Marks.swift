import NavlogJSON

// Analytics marks with their generated properties.

extension SessionSimulator {
    mutating func mark() {
        let template = catalog.marks[rng.below(catalog.marks.count)]
        open("mark")
        out.key("name")
        out.string(template.name)
        if rng.chance(0.96) {
            out.raw(",\"props\":{")
            var first = true
            for (key, value) in template.props {
                if !first && rng.chance(0.1) { continue }
                if !first { out.byte(UInt8(ascii: ",")) }
                first = false
                out.string(key)
                out.byte(UInt8(ascii: ":"))
                switch value {
                case .strings(let choices):
                    out.string(choices[rng.below(choices.count)])
                case .integer(let low, let high):
                    out.integer(UInt64(rng.between(low, high)))
                case .money(let low, let high):
                    out.decimal(hundredths: rng.between(low, high))
                case .tenths(let low, let high):
                    out.decimal(tenths: rng.between(low, high))
                case .flag(let p):
                    out.bool(rng.chance(p))
                case .identifier(let prefix, let digits):
                    var low = 1
                    for _ in 1..<digits { low *= 10 }
                    out.byte(UInt8(ascii: "\""))
                    out.raw(prefix)
                    out.integer(UInt64(rng.between(low, low * 10 - 1)))
                    out.byte(UInt8(ascii: "\""))
                }
            }
            out.byte(UInt8(ascii: "}"))
        }
        close()
    }
}
