import Foundation
import Testing
@testable import KeychainFile

/// The progress handler of an open (``Keychain/OpenOptions/progress``): called as the log's records are verified,
/// counting the bytes up to all of them, in both format versions; an open without one changes nothing.
@Suite("Progress of opening a keychain")
struct OpeningProgressTests {
    /// The reports a handler received, from whichever thread.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [OpeningProgress] = []
        func append(_ progress: OpeningProgress) { lock.withLock { values.append(progress) } }
        var all: [OpeningProgress] { lock.withLock { values } }
    }

    /// A keychain file of `count` generic passwords with 2 KiB secrets, of format `version`, written 200 items to a
    /// record: about 4 KiB a record for every two items.
    static func makeFile(in directory: TemporaryDirectory, count: Int, version: Int) throws -> String {
        var options = TestKeychain.options(formatVersion: version)
        options.autoCompaction = .disabled
        let path = directory.file("p.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: options)
        let secret = String(repeating: "s", count: 2_048)
        var added = 0
        while added < count {
            let end = min(count, added + 200)
            try keychain.batch { (batch) throws(KeychainError) in
                for number in added..<end { try batch.add(GenericPassword(service: "svc", account: "user\(number)", password: secret)) }
            }
            added = end
        }
        return path
    }

    static func open(_ path: String, reports: Reports?) throws -> Keychain {
        var options = Keychain.OpenOptions()
        if let reports { options.progress = { reports.append($0) } }
        return try Keychain.open(at: path, credential: TestKeychain.password, options: options)
    }

    @Test("Opening a file of several MiB reports the bytes verified, a MiB apart, growing, up to all of them; in both format versions",
          arguments: [2, 1])
    func severalMebibytes(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(in: directory, count: 3_200, version: version)
        let reports = Reports()
        let keychain = try Self.open(path, reports: reports)
        #expect(try keychain.statistics().itemCount == 3_200)
        let all = reports.all
        #expect(all.count >= 4, "\(all.count) reports: \(all)")
        guard let last = all.last else { return }
        // The total is the log: more than the secrets it holds, and no more than the file.
        #expect(last.total > 3_200 * 2_048)
        #expect(last.total <= (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0))
        #expect(last.completed == last.total)
        #expect(all.allSatisfy { $0.total == last.total })
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.completed < $1.completed }, "growing: \(all)")
        #expect(all.dropLast().allSatisfy { $0.completed < $0.total })
        // Thinned: a mebibyte at least between two reports, but the last.
        #expect(zip(all.dropLast(), all.dropLast().dropFirst()).allSatisfy { $1.completed - $0.completed >= 1 << 20 }, "\(all)")
        #expect(all[0].completed >= 1 << 20)
    }

    @Test("A small file's open reports once, everything verified; an open without a handler reports nothing to an earlier one",
          arguments: [2, 1])
    func smallFileAndNoHandler(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(in: directory, count: 10, version: version)
        let reports = Reports()
        _ = try Self.open(path, reports: reports)
        #expect(reports.all.count == 1)
        #expect(reports.all.first.map { $0.completed == $0.total && $0.total > 0 } == true, "\(reports.all)")
        #expect(reports.all.first?.fractionCompleted == 1)
        let plain = try Self.open(path, reports: nil)
        #expect(try plain.statistics().itemCount == 10)
        #expect(reports.all.count == 1)
        // openOrCreate's open reports as open's does.
        var options = Keychain.OpenOptions()
        options.progress = { reports.append($0) }
        _ = try Keychain.openOrCreate(at: path, credential: TestKeychain.password, options: options)
        #expect(reports.all.count == 2)
        #expect(reports.all.last == reports.all.first)
    }

    @Test("A failed open ends with no report that everything was verified")
    func failedOpen() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(in: directory, count: 10, version: 2)
        let reports = Reports()
        var options = Keychain.OpenOptions()
        options.progress = { reports.append($0) }
        #expect(throws: KeychainError.self) {
            _ = try Keychain.open(at: path, credential: .password("not the password"), options: options)
        }
        #expect(reports.all.isEmpty)
        #expect(OpeningProgress(completed: 0, total: 0).fractionCompleted == 1)
        #expect(OpeningProgress(completed: 1, total: 4).description == "1 of 4 bytes verified")
    }
}
