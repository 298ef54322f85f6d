import KeychainCrypto

/// `kcf-bench ct`: a dudect-style timing-leakage check (Reparaz, Balasch and Verbauwhede, "Dude, is my code
/// constant time?", 2017).
///
/// Each test times single calls of an operation on inputs from two classes, interleaved in a random order:
/// class 0 uses one fixed input, class 1 a fresh random input per call. Welch's t-statistic compares the
/// two timing distributions; |t| above 4.5 is the usual sign of a leak. As in dudect, t is also computed
/// over the measurements below several percentiles of the pooled timings, which removes interrupt and
/// scheduling outliers that only add noise; the largest |t| is the verdict.
///
/// `only` keeps the checks whose name contains it (the control always runs, so a quiet result can be trusted).
func runLeakageCheck(callsPerClass: Int, only filter: String?, json: Bool) throws {
    var report = Report(title: "kcf-bench ct (dudect-style, \(callsPerClass) timed calls per class)", machine: machineDescription())
    var random = SystemRandomNumberGenerator()
    func selected(_ name: String) -> Bool { filter.map { name.contains($0) } ?? true }

    // AES-256 block encryption, key schedule included: a fixed key vs a random key per call. Both classes
    // get a freshly allocated key object, so they differ only in the key's value.
    let aesName = "AES-256 encrypt, fixed vs random key"
    if selected(aesName) {
        let fixedKeyBytes = [UInt8](repeating: 0, count: 32)
        let plaintext = [UInt8](repeating: 0x42, count: 16)
        let aesResult = measureLeakage(
            callsPerClass: callsPerClass, using: &random,
            makeInput: { (isRandomClass, generator) -> SymmetricKey in
                isRandomClass ? SymmetricKey(size: .bits256, using: &generator) : SymmetricKey(data: fixedKeyBytes)
            },
            operation: { key in
                var block = plaintext
                try! AES.permute(&block, key: key)
                blackHole(block)
            })
        aesResult.add(to: &report, name: aesName)
    }

    // AES-GCM open with a wrong tag: a fixed tag differing from the right one only in its last byte (the
    // slowest case for an early-exit comparison) vs a random tag per call, each in a fresh sealed box.
    let gcmKey = SymmetricKey(size: .bits256, using: &random)
    let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 1, count: 12))
    let sealed = try AES.GCM.seal([UInt8](repeating: 0x33, count: 64), using: gcmKey, nonce: nonce)
    var nearMissTag = sealed.tag
    nearMissTag[15] ^= 0x01
    let ciphertext = sealed.ciphertext
    let rightTag = sealed.tag
    let gcmName = "AES-256-GCM open, wrong tag: near-miss vs random"
    if selected(gcmName) {
        let gcmResult = measureLeakage(
            callsPerClass: callsPerClass, using: &random,
            makeInput: { (isRandomClass, generator) -> AES.GCM.SealedBox in
                var tag = nearMissTag
                if isRandomClass {
                    for index in 0..<16 { tag[index] = UInt8.random(in: 0...255, using: &generator) }
                    if tag == rightTag { tag[0] ^= 1 }  // must stay wrong (chance 2^-128)
                }
                return try! AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
            },
            operation: { box in
                do {
                    _ = try AES.GCM.open(box, using: gcmKey)
                    fatalError("a wrong tag verified")
                } catch {}
            })
        gcmResult.add(to: &report, name: gcmName)
    }

    // AES-GCM seal of 256 bytes: a fixed plaintext (all zeros) vs a random one per call, under one key and
    // nonce. The ciphertext GHASH multiplies by the powers of H changes with the plaintext, so this times the
    // GHASH kernels on data of both classes (and the CTR XOR).
    // Both classes get a freshly allocated plaintext, so that they differ only in its bytes.
    let sealName = "AES-256-GCM seal 256 B: zero vs random plaintext"
    if selected(sealName) {
        let sealResult = measureLeakage(
            callsPerClass: callsPerClass, using: &random,
            makeInput: { (isRandomClass, generator) -> [UInt8] in
                var plaintext = [UInt8](repeating: 0, count: 256)
                if isRandomClass {
                    for index in 0..<256 { plaintext[index] = UInt8.random(in: 0...255, using: &generator) }
                }
                return plaintext
            },
            operation: { plaintext in blackHole(try! AES.GCM.seal(plaintext, using: gcmKey, nonce: nonce).tag) })
        sealResult.add(to: &report, name: sealName)
    }

    // X25519 shared secret: a fixed private key (32 zero bytes, which clamps to 2^254, the scalar with the
    // fewest bits set) vs a random private key per call, both against one peer public key. Both classes
    // get a freshly allocated key object, so they differ only in the key's value.
    let x25519Name = "X25519 shared secret, fixed vs random private key"
    if selected(x25519Name) {
        let peerPublicKey = try X25519.publicKey(for: SymmetricKey(size: .bits256, using: &random))
        let fixedPrivateBytes = [UInt8](repeating: 0, count: 32)
        let x25519Result = measureLeakage(
            callsPerClass: callsPerClass, using: &random,
            makeInput: { (isRandomClass, generator) -> SymmetricKey in
                isRandomClass ? SymmetricKey(size: .bits256, using: &generator) : SymmetricKey(data: fixedPrivateBytes)
            },
            operation: { key in blackHole(try! X25519.sharedSecret(privateKey: key, peerPublicKey: peerPublicKey)) })
        x25519Result.add(to: &report, name: x25519Name)
    }

    // Positive control: the same two classes of tags compared with an early-exit loop, which returns at
    // the first differing byte. It must be flagged; if it is not, the measurement cannot see leaks here.
    let controlResult = measureLeakage(
        callsPerClass: callsPerClass, using: &random,
        makeInput: { (isRandomClass, generator) -> [UInt8] in
            var tag = nearMissTag
            if isRandomClass {
                for index in 0..<16 { tag[index] = UInt8.random(in: 0...255, using: &generator) }
            }
            return tag
        },
        operation: { tag in blackHole(earlyExitEquals(tag, rightTag)) })
    controlResult.add(to: &report, name: "control (must leak): early-exit tag comparison", expectLeak: true)

    report.print(json: json)
}

/// A deliberately leaky comparison for the positive control: stops at the first differing byte.
@inline(never)
func earlyExitEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for index in lhs.indices where lhs[index] != rhs[index] { return false }
    return true
}

/// Times `callsPerClass` calls of `operation` on inputs of each class, in random order.
///
/// Inputs are made by `makeInput` (`true` = random-input class) in chunks before any of them is timed, so
/// that making them (random generation, allocation) never overlaps the timed calls, and both classes'
/// inputs are made and laid out in memory the same way.
func measureLeakage<Input, Generator: RandomNumberGenerator>(
    callsPerClass: Int, using generator: inout Generator,
    makeInput: (_ isRandomClass: Bool, _ generator: inout Generator) -> Input,
    operation: (Input) -> Void
) -> LeakageResult {
    let chunkSize = 10_000

    // Percentile thresholds come from a first, discarded chunk, as in dudect.
    var calibration: [Double] = []
    let warmUp = (0..<chunkSize).map { _ in makeInput(Bool.random(using: &generator), &generator) }
    for input in warmUp {
        let start = monotonicNanoseconds()
        operation(input)
        calibration.append(Double(monotonicNanoseconds() - start))
    }
    calibration.sort()
    let percentiles = [0.5, 0.75, 0.9, 0.99]
    let thresholds = percentiles.map { calibration[Int(Double(calibration.count - 1) * $0)] }

    var all = WelchAccumulator()
    var croppedAccumulators = Array(repeating: WelchAccumulator(), count: percentiles.count)
    var remaining = [callsPerClass, callsPerClass]
    var classes: [Int] = []
    var inputs: [Input] = []
    var timings = [Double](repeating: 0, count: chunkSize)
    while remaining[0] + remaining[1] > 0 {
        classes.removeAll(keepingCapacity: true)
        inputs.removeAll(keepingCapacity: true)
        while classes.count < chunkSize && remaining[0] + remaining[1] > 0 {
            var classIndex = Int(generator.next() & 1)
            if remaining[classIndex] == 0 { classIndex ^= 1 }
            remaining[classIndex] -= 1
            classes.append(classIndex)
            inputs.append(makeInput(classIndex == 1, &generator))
        }
        for index in inputs.indices {
            let start = monotonicNanoseconds()
            operation(inputs[index])
            timings[index] = Double(monotonicNanoseconds() - start)
        }
        for index in inputs.indices {
            let elapsed = timings[index]
            all.add(elapsed, classIndex: classes[index])
            for cut in thresholds.indices where elapsed < thresholds[cut] {
                croppedAccumulators[cut].add(elapsed, classIndex: classes[index])
            }
        }
    }
    return LeakageResult(
        tAll: all.t,
        cropped: zip(percentiles, croppedAccumulators).map { ($0, $1.t) },
        meanNanoseconds: (all.mean[0], all.mean[1]),
        callsPerClass: (Int(all.count[0]), Int(all.count[1])))
}
