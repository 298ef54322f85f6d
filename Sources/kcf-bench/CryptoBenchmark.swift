import KeychainCrypto

/// `kcf-bench crypto`: throughput of every primitive through the public API, release build.
func runCryptoBenchmark(seconds: Double, json: Bool) throws {
    var report = Report(title: "kcf-bench crypto", machine: machineDescription())
    let key = SymmetricKey(data: (0..<32).map { UInt8($0) })

    for size in [64, 1 << 20] {
        let data = [UInt8](repeating: 0x61, count: size)
        let rate = measureRate(seconds: seconds) { blackHole(SHA256.hash(data: data)) }
        report.add("SHA-256 \(sizeLabel(size))", rate * Double(size) / 1e6, "MB/s")
    }

    let message = [UInt8](repeating: 0x62, count: 64)
    let keyed = HMAC<SHA256>(key: key)
    let hmacRate = measureRate(seconds: seconds) {
        var mac = keyed
        mac.update(data: message)
        blackHole(mac.finalize())
    }
    report.add("HMAC-SHA256 64 B (precomputed key)", hmacRate, "ops/s")
    let hmacOneShot = measureRate(seconds: seconds) { blackHole(HMAC<SHA256>.authenticationCode(for: message, using: key)) }
    report.add("HMAC-SHA256 64 B (one-shot)", hmacOneShot, "ops/s")

    let password = Array("correct horse battery staple".utf8)
    let salt = [UInt8](repeating: 0x5a, count: 32)
    let rounds = 600_000
    var pbkdf2Best = 0.0
    for _ in 0..<3 {
        let start = monotonicNanoseconds()
        blackHole(try KDF.Insecure.PBKDF2.deriveKey(from: password, salt: salt, using: .sha256, outputByteCount: 32, rounds: rounds))
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        pbkdf2Best = max(pbkdf2Best, Double(rounds) / elapsed)
    }
    report.add("PBKDF2-HMAC-SHA256", pbkdf2Best, "iterations/s")
    report.add("PBKDF2-HMAC-SHA256 600,000 rounds", Double(rounds) / pbkdf2Best * 1000, "ms")

    let info = Array("kcf bench".utf8)
    let hkdfRate = measureRate(seconds: seconds) {
        blackHole(try! HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: info, outputByteCount: 32))
    }
    report.add("HKDF-SHA256 32 B output", hkdfRate, "ops/s")

    let aad = [UInt8](repeating: 0x41, count: 16)
    let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 7, count: 12))
    for size in [64, 256, 4096, 16384, 1 << 20] {
        let plaintext = [UInt8](repeating: 0x63, count: size)
        let sealRate = measureRate(seconds: seconds) {
            blackHole(try! AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad))
        }
        let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        let openRate = measureRate(seconds: seconds) {
            blackHole(try! AES.GCM.open(box, using: key, authenticating: aad))
        }
        report.add("AES-256-GCM seal \(sizeLabel(size))", sealRate * Double(size) / 1e6, "MB/s")
        report.add("AES-256-GCM seal \(sizeLabel(size))", sealRate, "ops/s")
        report.add("AES-256-GCM open \(sizeLabel(size))", openRate * Double(size) / 1e6, "MB/s")
        report.add("AES-256-GCM open \(sizeLabel(size))", openRate, "ops/s")
    }
    report.print(json: json)
}

func sizeLabel(_ size: Int) -> String {
    if size >= 1 << 20 { return "\(size >> 20) MiB" }
    if size >= 1024 { return "\(size >> 10) KiB" }
    return "\(size) B"
}
