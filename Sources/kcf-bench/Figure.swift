/// One printed figure of a benchmark.
struct Figure {
    let name: String
    let value: Double
    let unit: String
}
