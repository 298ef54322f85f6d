import Foundation
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read of a version 2 file that fails with EIO is tried again a few times before its bytes count as lost
/// (SPEC §19.5): a read that fails for a moment costs nothing; one that keeps failing is repaired from parity
/// as erasures, or, beyond what parity rebuilds, is an I/O error that names the bytes — never an empty or
/// shorter keychain, and never written over.
@Suite("Healing: a read that fails with EIO is tried again")
struct HealingLogReadRetryTests {
    /// A compacted version 2 file of 300 items whose records fill chunk 0 and part of chunk 1, its items, and
    /// its log's written end.
    static func file(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], logEnd: Int) {
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 300, perBatch: 50, secretSize: 200)
        try keychain.compact()
        let logEnd = try V2Keychain.log(keychain).state.log.writtenEnd
        #expect(logEnd > ChunkParity.dataLength && logEnd < 2 * ChunkParity.dataLength, "one complete chunk and a last one")
        return (directory.file("v2.kcf"), expected, logEnd)
    }

    /// The 512-byte sector of the file that holds log byte `logical`.
    static func sector(holding logical: Int) -> Range<Int> {
        let start = HealingLayout.physical(logical) / 512 * 512
        return start..<(start + 512)
    }

    @Test("A sector of an acknowledged record that fails twice with EIO and then reads opens the keychain whole, nothing repaired")
    func transientErrorInACompleteChunk() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _) = try Self.file(directory)
        let pristine = try fileBytes(path)
        let faulty = FaultyFileSystem()
        faulty.failReads(of: path, touching: Self.sector(holding: 9_000), times: 2)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: faulty)
        #expect(faulty.failedReads == 2, "the injected reads failed")
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.repairs.isEmpty, "the bytes were read, not rebuilt: \(keychain.repairs)")
        #expect(keychain.tornTail == nil)
        #expect(try fileBytes(path) == pristine)
    }

    @Test("A sector of the last chunk that fails twice with EIO while the log is opened does not stop the next write")
    func transientErrorInTheLastChunk() throws {
        let directory = TemporaryDirectory()
        let (path, expected, logEnd) = try Self.file(directory)
        let faulty = FaultyFileSystem()
        faulty.failReads(of: path, touching: Self.sector(holding: logEnd - 100), times: 2)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: faulty)
        #expect(faulty.failedReads == 2, "the injected reads failed")
        #expect(try liveSecrets(keychain) == expected)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "a write after the read error"))
        var withNew = expected
        withNew["after"] = Array("a write after the read error".utf8)
        #expect(try liveSecrets(V2Keychain.open(path)) == withNew)
    }

    @Test("A sector that never reads (EIO every time) is rebuilt from parity and reported; the failed reads are few")
    func persistentErrorWithinParity() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _) = try Self.file(directory)
        let pristine = try fileBytes(path)
        let faulty = FaultyFileSystem()
        faulty.failReads(of: path, touching: Self.sector(holding: 9_000), times: nil)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: faulty)
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.repairs.chunks.map(\.chunk) == [0], "\(keychain.repairs)")
        #expect(faulty.failedReads > 0 && faulty.failedReads <= 16, "\(faulty.failedReads) failed reads")
        #expect(try fileBytes(path) == pristine, "an open writes nothing")
    }

    @Test("12 KiB that never read (EIO every time), beyond what parity rebuilds: an I/O error naming the bytes, never a shorter keychain; once they read again, the keychain opens whole")
    func persistentErrorBeyondParity() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _) = try Self.file(directory)
        let pristine = try fileBytes(path)
        let start = Self.sector(holding: 9_000).lowerBound
        let faulty = FaultyFileSystem()
        faulty.failReads(of: path, touching: start..<(start + 12_288), times: nil)
        let error = #expect(throws: KeychainError.io(operation: "", errno: EIO, path: "")) {
            try Keychain.openForTesting(at: path, fileSystem: faulty)
        }
        guard case .io(let operation, let code, _)? = error else { return }
        #expect(code == EIO)
        #expect(operation.contains("file bytes"), "\(operation)")
        #expect(operation.contains("could not be read"), "\(operation)")
        #expect(faulty.failedReads > 0 && faulty.failedReads <= 200, "\(faulty.failedReads) failed reads")
        #expect(try fileBytes(path) == pristine, "nothing was written over the bytes that did not read")
        faulty.heal()
        #expect(try liveSecrets(Keychain.openForTesting(at: path, fileSystem: faulty)) == expected)
    }
}
