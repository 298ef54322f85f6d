/// Welch's t over two classes of timings, accumulated online (Welford).
struct WelchAccumulator {
    var count = [0.0, 0.0]
    var mean = [0.0, 0.0]
    var m2 = [0.0, 0.0]

    mutating func add(_ value: Double, classIndex: Int) {
        count[classIndex] += 1
        let delta = value - mean[classIndex]
        mean[classIndex] += delta / count[classIndex]
        m2[classIndex] += delta * (value - mean[classIndex])
    }

    var t: Double {
        guard count[0] > 1, count[1] > 1 else { return 0 }
        let variance0 = m2[0] / (count[0] - 1)
        let variance1 = m2[1] / (count[1] - 1)
        let denominator = (variance0 / count[0] + variance1 / count[1]).squareRoot()
        return denominator > 0 ? (mean[0] - mean[1]) / denominator : 0
    }
}
