struct LeakageResult {
    var tAll: Double
    var cropped: [(percentile: Double, t: Double)]
    var meanNanoseconds: (Double, Double)
    var callsPerClass: (Int, Int)

    var maximumAbsoluteT: Double {
        ([abs(tAll)] + cropped.map { abs($0.t) }).max() ?? 0
    }

    func add(to report: inout Report, name: String, expectLeak: Bool = false) {
        let verdict: String
        switch (maximumAbsoluteT < 4.5, expectLeak) {
        case (true, false): verdict = "(no leak detected, < 4.5)"
        case (false, false): verdict = "(LEAK SUSPECTED, ≥ 4.5)"
        case (false, true): verdict = "(leak detected, as it must be: the check can see leaks)"
        case (true, true): verdict = "(CONTROL NOT DETECTED: this run cannot be trusted)"
        }
        report.add("\(name): max |t|", maximumAbsoluteT, verdict)
        report.add("\(name): |t| all calls", abs(tAll), "")
        for crop in cropped {
            report.add("\(name): |t| below p\(Int(crop.percentile * 100))", abs(crop.t), "")
        }
        report.add("\(name): mean time fixed / random", meanNanoseconds.0, "ns / \(formatValue(meanNanoseconds.1)) ns")
        report.add("\(name): timed calls fixed / random", Double(callsPerClass.0), "/ \(formatValue(Double(callsPerClass.1)))")
    }
}
