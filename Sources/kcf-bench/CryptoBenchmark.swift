import KeychainCrypto

/// One measurement of `kcf-bench crypto`: a name to select it by and the code that measures it.
struct Measurement {
    let name: String
    let run: (_ seconds: Double) throws -> [Figure]
}

/// `kcf-bench crypto`: throughput of every primitive through the public API, release build.
///
/// Each figure is the best of several timed trials (see `measureRate`): on a shared machine, slower
/// trials measure the neighbours, not the code.
func runCryptoBenchmark(seconds: Double, only filter: String?, json: Bool) throws {
    var report = Report(title: "kcf-bench crypto", machine: machineDescription())
    for measurement in cryptoMeasurements() where filter.map({ measurement.name.contains($0) }) ?? true {
        report.figures += try measurement.run(seconds)
    }
    report.print(json: json)
}

func cryptoMeasurements() -> [Measurement] {
    let key = SymmetricKey(data: (0..<32).map { UInt8($0) })
    let salt = [UInt8](repeating: 0x5a, count: 32)
    var list: [Measurement] = []

    list.append(Measurement(name: "reference loop") { seconds in
        [Figure(name: "reference loop (dependent add + xor)", value: referenceLoopGigahertz(seconds: seconds), unit: "GHz-equivalent")]
    })

    for size in [64, 1 << 20] {
        list.append(Measurement(name: "SHA-256 \(sizeLabel(size))") { seconds in
            let data = [UInt8](repeating: 0x61, count: size)
            let rate = measureRate(seconds: seconds) { blackHole(SHA256.hash(data: data)) }
            return [Figure(name: "SHA-256 \(sizeLabel(size))", value: rate * Double(size) / 1e6, unit: "MB/s")]
        })
    }

    list.append(Measurement(name: "HMAC-SHA256 64 B") { seconds in
        let message = [UInt8](repeating: 0x62, count: 64)
        let keyed = HMAC<SHA256>(key: key)
        let precomputed = measureRate(seconds: seconds) {
            var mac = keyed
            mac.update(data: message)
            blackHole(mac.finalize())
        }
        let oneShot = measureRate(seconds: seconds) { blackHole(HMAC<SHA256>.authenticationCode(for: message, using: key)) }
        return [
            Figure(name: "HMAC-SHA256 64 B (precomputed key)", value: precomputed, unit: "ops/s"),
            Figure(name: "HMAC-SHA256 64 B (one-shot)", value: oneShot, unit: "ops/s"),
        ]
    })

    list.append(Measurement(name: "PBKDF2-HMAC-SHA256") { seconds in
        let password = Array("correct horse battery staple".utf8)
        let rounds = 600_000
        var best = 0.0
        let trials = max(3, Int(seconds * 8))
        for _ in 0..<trials {
            let start = monotonicNanoseconds()
            blackHole(try KDF.Insecure.PBKDF2.deriveKey(from: password, salt: salt, using: .sha256, outputByteCount: 32, rounds: rounds))
            best = max(best, Double(rounds) / (Double(monotonicNanoseconds() - start) / 1e9))
        }
        return [
            Figure(name: "PBKDF2-HMAC-SHA256", value: best, unit: "iterations/s"),
            Figure(name: "PBKDF2-HMAC-SHA256 600,000 rounds", value: Double(rounds) / best * 1000, unit: "ms"),
        ]
    })

    list.append(Measurement(name: "HKDF-SHA256") { seconds in
        let info = Array("kcf bench".utf8)
        let rate = measureRate(seconds: seconds) {
            blackHole(try! HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: info, outputByteCount: 32))
        }
        return [Figure(name: "HKDF-SHA256 32 B output", value: rate, unit: "ops/s")]
    })

    // Argon2id at m = 64 MiB: the fill rate in MiB·passes per second (one pass, p = 1 and p = 4), and the
    // time of one derivation at t = 3, p = 4 (RFC 9106 §4's second recommendation).
    list.append(Measurement(name: "Argon2id") { seconds in
        let password = Array("correct horse battery staple".utf8)
        let memoryKiB = 64 * 1024
        func bestSeconds(iterations: Int, parallelism: Int, trials: Int) throws -> Double {
            var best = Double.infinity
            for _ in 0..<trials {
                let start = monotonicNanoseconds()
                blackHole(try KDF.Argon2id.deriveKey(
                    from: password, salt: salt, outputByteCount: 32, iterations: iterations,
                    memoryKiB: memoryKiB, parallelism: parallelism))
                best = min(best, Double(monotonicNanoseconds() - start) / 1e9)
            }
            return best
        }
        let trials = max(3, Int(seconds * 8))
        let single = try bestSeconds(iterations: 1, parallelism: 1, trials: trials)
        let four = try bestSeconds(iterations: 1, parallelism: 4, trials: trials)
        let recommended = try bestSeconds(iterations: 3, parallelism: 4, trials: max(3, Int(seconds * 3)))
        return [
            Figure(name: "Argon2id m = 64 MiB, t = 1, p = 1", value: 64 / single, unit: "MiB·passes/s"),
            Figure(name: "Argon2id m = 64 MiB, t = 1, p = 4", value: 64 / four, unit: "MiB·passes/s"),
            Figure(name: "Argon2id m = 64 MiB, t = 3, p = 4", value: recommended * 1000, unit: "ms"),
        ]
    })

    for size in [64, 256, 4096, 16384, 1 << 20] {
        list.append(Measurement(name: "AES-256-GCM \(sizeLabel(size))") { seconds in
            let aad = [UInt8](repeating: 0x41, count: 16)
            let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 7, count: 12))
            let plaintext = [UInt8](repeating: 0x63, count: size)
            let sealRate = measureRate(seconds: seconds) {
                blackHole(try! AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad))
            }
            let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
            let openRate = measureRate(seconds: seconds) {
                blackHole(try! AES.GCM.open(box, using: key, authenticating: aad))
            }
            let label = sizeLabel(size)
            return [
                Figure(name: "AES-256-GCM seal \(label)", value: sealRate * Double(size) / 1e6, unit: "MB/s"),
                Figure(name: "AES-256-GCM seal \(label)", value: sealRate, unit: "ops/s"),
                Figure(name: "AES-256-GCM open \(label)", value: openRate * Double(size) / 1e6, unit: "MB/s"),
                Figure(name: "AES-256-GCM open \(label)", value: openRate, unit: "ops/s"),
            ]
        })
    }

    // X25519: one shared secret (a full ladder and inversion, plus the all-zero check) and one public key.
    list.append(Measurement(name: "X25519") { seconds in
        let privateKey = SymmetricKey(data: (0..<32).map { UInt8(0x40 &+ $0) })
        let peer = try X25519.publicKey(for: SymmetricKey(data: [UInt8](repeating: 0x77, count: 32)))
        let sharedRate = measureRate(seconds: seconds) {
            blackHole(try! X25519.sharedSecret(privateKey: privateKey, peerPublicKey: peer))
        }
        let publicRate = measureRate(seconds: seconds) { blackHole(try! X25519.publicKey(for: privateKey)) }
        return [
            Figure(name: "X25519 shared secret", value: sharedRate, unit: "ops/s"),
            Figure(name: "X25519 public key", value: publicRate, unit: "ops/s"),
        ]
    })
    return list
}

/// The speed of a loop-carried add-then-xor chain (two cycles per iteration on any x86-64 or arm64 core),
/// expressed as the clock rate that would give it: a yardstick for how fast the machine was running
/// while the other figures were taken (on shared virtual machines it varies from minute to minute).
func referenceLoopGigahertz(seconds: Double) -> Double {
    let iterations = 20_000_000
    var best = 0.0
    var sink: UInt64 = 0
    for _ in 0..<max(3, Int(seconds * 10)) {
        let start = monotonicNanoseconds()
        sink ^= addXorChain(seed: start, iterations: iterations)
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        best = max(best, 2.0 * Double(iterations) / elapsed / 1e9)
    }
    blackHole(sink)
    return best
}

/// `iterations` rounds of value = (value + a) ⊕ b, each depending on the previous one. Not inlined, so
/// the optimiser sees neither the seed nor the use of the result and cannot shorten the chain.
@inline(never)
func addXorChain(seed: UInt64, iterations: Int) -> UInt64 {
    var value = seed
    let addend = seed | 1, mask = seed >> 3
    for _ in 0..<iterations { value = (value &+ addend) ^ mask }
    return value
}

func sizeLabel(_ size: Int) -> String {
    if size >= 1 << 20 { return "\(size >> 20) MiB" }
    if size >= 1024 { return "\(size >> 10) KiB" }
    return "\(size) B"
}
