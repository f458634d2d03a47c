import SwitchyardProtocol

// MARK: - Statistics

func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))
    return Double(sorted[index])
}

func median(_ values: [Double]) -> Double {
    let sorted = values.filter { !$0.isNaN }.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

// MARK: - Rows

/// One row of the report: Switchyard's figure, the floor's (measured in the same run), their ratio, the target.
struct Row {
    let section: String
    let measure: String
    let unit: String
    let switchyard: Double
    let floor: Double
    let floorName: String
    let target: String?
    var higherIsBetter = false
    /// Whether the target holds (nil: no target, or not a ratio the bench can judge).
    var met: Bool?
    /// The lowest and highest of the per-run ratios, where the measure has runs.
    var spread: (low: Double, high: Double)?

    var ratio: Double { higherIsBetter ? floor / switchyard : switchyard / floor }

    var json: JSONValue {
        [
            "section": .string(section), "measure": .string(measure), "unit": .string(unit),
            "switchyard": .double(switchyard),
            "floor": .double(floor), "floorName": .string(floorName), "ratio": .double(ratio),
            "target": target.map(JSONValue.string) ?? .null, "met": met.map(JSONValue.bool) ?? .null,
            "ratioLow": spread.map { .double($0.low) } ?? .null, "ratioHigh": spread.map { .double($0.high) } ?? .null,
        ]
    }
}

extension Row {
    /// A row read back from a `latest.json` (nil when a field is missing), for `--merge`.
    init?(json: JSONValue) {
        guard let section = json["section"]?.stringValue, let measure = json["measure"]?.stringValue,
            let unit = json["unit"]?.stringValue, let switchyard = json["switchyard"]?.doubleValue,
            let floor = json["floor"]?.doubleValue, let floorName = json["floorName"]?.stringValue
        else { return nil }
        self.init(
            section: section, measure: measure, unit: unit, switchyard: switchyard, floor: floor, floorName: floorName,
            target: json["target"]?.stringValue)
        if let ratio = json["ratio"]?.doubleValue {
            higherIsBetter = abs(ratio - floor / switchyard) < abs(ratio - switchyard / floor)
        }
        met = json["met"]?.boolValue
        if let low = json["ratioLow"]?.doubleValue, let high = json["ratioHigh"]?.doubleValue { spread = (low, high) }
    }
}

/// `fresh` rows merged into `previous` (`--merge`): each replaces the previous row of the same section and measure
/// in place; a new row goes after the last row of its section, or at the end with a new section.
func merged(_ previous: [Row], _ fresh: [Row]) -> [Row] {
    var rows = previous
    for row in fresh {
        if let index = rows.firstIndex(where: { $0.section == row.section && $0.measure == row.measure }) {
            rows[index] = row
        } else if let last = rows.lastIndex(where: { $0.section == row.section }) {
            rows.insert(row, at: last + 1)
        } else {
            rows.append(row)
        }
    }
    return rows
}

func format(_ value: Double) -> String {
    guard value.isFinite else { return "—" }
    if value >= 100_000 { return String(Int(value.rounded())) }
    if value >= 100 { return String(Int(value.rounded())) }
    if value >= 10 { return String((value * 10).rounded() / 10) }
    return String((value * 100).rounded() / 100)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// The range of per-run ratios `values[i] / floors[i]` (`floors[i] / values[i]` when higher is better).
func ratioSpread(_ values: [Double], _ floors: [Double], higherIsBetter: Bool = false) -> (low: Double, high: Double)? {
    let ratios = zip(values, floors).map { higherIsBetter ? $1 / $0 : $0 / $1 }.filter(\.isFinite)
    guard ratios.count > 1, let low = ratios.min(), let high = ratios.max() else { return nil }
    return (low, high)
}

/// The table, as printed and committed (Markdown, so the README can show it as is).
func table(_ rows: [Row]) -> String {
    var text = "| measure | switchyard | floor | ratio (range over runs) | target |\n| --- | --- | --- | --- | --- |\n"
    var section = ""
    for row in rows {
        if row.section != section {
            section = row.section
            text += "| **\(section)** | | | | |\n"
        }
        let verdict = row.met.map { $0 ? " ✓" : " ✗" } ?? ""
        let spread = row.spread.map { " (\(format($0.low))–\(format($0.high)))" } ?? ""
        text +=
            "| \(row.measure) | \(format(row.switchyard)) \(row.unit) | \(format(row.floor)) \(row.unit) (\(row.floorName)) | \(format(row.ratio))×\(spread) | \(row.target ?? "")\(verdict) |\n"
    }
    return text
}

// MARK: - The latency picture

/// A CDF of two latency samples as a self-contained SVG (no dependencies, readable in a browser and on GitHub).
func cdfSVG(title: String, series: [(name: String, color: String, samples: [UInt64])]) -> String {
    let width = 720.0, height = 420.0, left = 64.0, right = 20.0, top = 40.0, bottom = 56.0
    let plotWidth = width - left - right, plotHeight = height - top - bottom
    let all = series.flatMap(\.samples).sorted()
    let maxX = max(1, percentile(all, 0.999) / 1_000)
    func x(_ microseconds: Double) -> Double { left + min(1, microseconds / maxX) * plotWidth }
    func y(_ fraction: Double) -> Double { top + (1 - fraction) * plotHeight }
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="14">\(title)</text>

        """
    // Grid and axes.
    for step in 0...5 {
        let fraction = Double(step) / 5
        svg +=
            "<line x1=\"\(left)\" y1=\"\(y(fraction))\" x2=\"\(width - right)\" y2=\"\(y(fraction))\" stroke=\"#ddd\"/>"
        svg += "<text x=\"\(left - 8)\" y=\"\(y(fraction) + 4)\" text-anchor=\"end\">\(Int(fraction * 100))%</text>\n"
    }
    let tick = niceTick(maxX / 6)
    var value = 0.0
    while value <= maxX + 0.0001 {
        svg += "<line x1=\"\(x(value))\" y1=\"\(top)\" x2=\"\(x(value))\" y2=\"\(height - bottom)\" stroke=\"#eee\"/>"
        svg += "<text x=\"\(x(value))\" y=\"\(height - bottom + 18)\" text-anchor=\"middle\">\(format(value))</text>\n"
        value += tick
    }
    svg +=
        "<text x=\"\(left + plotWidth / 2)\" y=\"\(height - 14)\" text-anchor=\"middle\">round trip, µs (up to the 99.9th percentile)</text>\n"
    svg +=
        "<line x1=\"\(left)\" y1=\"\(height - bottom)\" x2=\"\(width - right)\" y2=\"\(height - bottom)\" stroke=\"black\"/>"
    svg += "<line x1=\"\(left)\" y1=\"\(top)\" x2=\"\(left)\" y2=\"\(height - bottom)\" stroke=\"black\"/>\n"
    for (index, entry) in series.enumerated() {
        let sorted = entry.samples.sorted()
        guard !sorted.isEmpty else { continue }
        var points: [String] = []
        let steps = 400
        for step in 0...steps {
            let fraction = Double(step) / Double(steps) * 0.999
            points.append("\(format(x(percentile(sorted, fraction) / 1_000))),\(format(y(fraction)))")
        }
        svg +=
            "<polyline fill=\"none\" stroke=\"\(entry.color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>\n"
        let legendY = top + 18 + Double(index) * 18
        svg +=
            "<line x1=\"\(width - right - 250)\" y1=\"\(legendY - 4)\" x2=\"\(width - right - 226)\" y2=\"\(legendY - 4)\" stroke=\"\(entry.color)\" stroke-width=\"3\"/>"
        svg +=
            "<text x=\"\(width - right - 220)\" y=\"\(legendY)\">\(entry.name) (p50 \(format(percentile(sorted, 0.5) / 1_000)) µs, p99 \(format(percentile(sorted, 0.99) / 1_000)) µs)</text>\n"
    }
    return svg + "</svg>\n"
}

private func niceTick(_ raw: Double) -> Double {
    guard raw > 0 else { return 1 }
    var magnitude = 1.0
    while magnitude * 10 <= raw { magnitude *= 10 }
    while magnitude > raw { magnitude /= 10 }
    for factor in [1.0, 2.0, 5.0, 10.0] where magnitude * factor >= raw { return magnitude * factor }
    return magnitude * 10
}
