import Foundation
import Testing
@testable import KeychainFile

@Suite("The text form of a head (SPEC.md §15.4)")
struct HeadTextTests {
    static let head = Head(epoch: 3, sequence: 42, chainValue: Array(0..<16))
    static let text = "3.42.000102030405060708090a0b0c0d0e0f"

    /// The reason `Head(text)` gives for refusing `text`, or `nil` when it does not throw.
    static func refusal(_ text: String) -> String? {
        do {
            _ = try Head(text)
            return nil
        } catch {
            guard case .invalidParameter(let reason) = error else { return "not invalidParameter: \(error)" }
            return reason
        }
    }

    @Test("The head round-trips through its text form; whitespace around it, as a file read back has, is ignored")
    func roundTrip() throws {
        #expect(Self.head.description == Self.text)
        #expect(try Head(Self.text) == Self.head)
        for padded in [Self.text + "\n", Self.text + "\r\n", " \t" + Self.text + "\n\n", "\n" + Self.text + " "] {
            #expect(try Head(padded) == Self.head, "\(padded.debugDescription)")
        }
        #expect(try Head("3.42.000102030405060708090A0B0C0D0E0F") == Self.head, "upper-case hex is read too")
        #expect(try Head("18446744073709551615.0." + String(repeating: "ff", count: 16))
                == Head(epoch: .max, sequence: 0, chainValue: [UInt8](repeating: 0xFF, count: 16)))
    }

    @Test("Malformed text throws invalidParameter saying what is wrong", arguments: [
        ("", "empty"),
        ("   \n", "empty"),
        ("garbage", "3 parts"),                                                 // no dots
        ("3.42", "3 parts"),                                                    // a part missing
        ("3.42.000102030405060708090a0b0c0d0e0f.7", "3 parts"),                 // an extra part
        ("3..000102030405060708090a0b0c0d0e0f", "sequence"),                    // empty sequence
        ("x.42.000102030405060708090a0b0c0d0e0f", "epoch"),                     // not a number
        ("+3.42.000102030405060708090a0b0c0d0e0f", "epoch"),                    // a sign UInt64(_:) would take
        ("3.-42.000102030405060708090a0b0c0d0e0f", "sequence"),
        ("18446744073709551616.42.000102030405060708090a0b0c0d0e0f", "epoch"),  // 2^64
        ("3.42.00", "32 hexadecimal digits"),                                   // too short
        ("3.42.000102030405060708090a0b0c0d0e0f00", "32 hexadecimal digits"),   // too long
        ("3.42.000102030405060708090a0b0c0d0e0g", "hexadecimal"),               // not hex
        ("3.42.+00102030405060708090a0b0c0d0e0f", "hexadecimal"),
        ("3.42.０00102030405060708090a0b0c0d0e0f", "hexadecimal"),              // a full-width digit
        ("3.42.000102030405060708090a0b0c0d0e0f x", "hexadecimal"),             // text after a space
        ("3.42.000102030405060708\n090a0b0c0d0e0f", "hexadecimal"),             // a newline inside
    ])
    func malformed(text: String, mentions: String) {
        let reason = Self.refusal(text)
        #expect(reason != nil, "\(text.debugDescription) was accepted")
        #expect(reason?.contains(mentions) == true, "\(text.debugDescription): \(reason ?? "accepted")")
    }

    @Test("A pin read back from a file with its newline still refuses a rolled-back copy")
    func pinFromFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        let older = try fileBytes(path)
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "2"))
        let pinFile = directory.file("head.txt")
        try Data((keychain.head.description + "\n").utf8).write(to: URL(fileURLWithPath: pinFile))
        try writeFileBytes(older, to: path + ".restore")
        _ = rename(path + ".restore", path)

        let pin = try String(contentsOfFile: pinFile, encoding: .utf8)
        #expect(throws: KeychainError.rolledBack(expected: keychain.head, found: keychain.head)) {
            try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: try Head(pin)))
        }
    }

    /// A pin built with the memberwise initialisers can hold what no keychain writes: it is refused as a parameter,
    /// naming the part, not checked against the file (where it was refused as `rolledBack`, blaming the file, or —
    /// for a later epoch — passed unsaid).
    @Test("A pin that cannot be a head is refused as a parameter, naming what is wrong", arguments: [0, 1, 2, 3])
    func malformedPinRefused(kind: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        let head = keychain.head
        let tag = [UInt8](repeating: 7, count: 16)
        let (pin, mentions): (Head, String) = switch kind {
        case 0: (Head(epoch: head.epoch, sequence: head.sequence, chainValue: Array(head.chainValue.prefix(3))), "chain value is 3 bytes")
        case 1: (Head(epoch: 0, sequence: 0, chainValue: head.chainValue, groups: [
            .init(keyID: 2, startEpoch: 1, sequence: 0, lastTag: tag), .init(keyID: 1, startEpoch: 1, sequence: 0, lastTag: tag)]), "key id 1")
        case 2: (Head(epoch: 0, sequence: 0, chainValue: head.chainValue, groups: [.init(keyID: 0, startEpoch: 1, sequence: 0, lastTag: tag)]), "key id 0")
        default: (Head(epoch: 0, sequence: 0, chainValue: head.chainValue, groups: [.init(keyID: 1, startEpoch: 1, sequence: 0, lastTag: [1])]), "tag of 1 bytes")
        }
        var reason: String? = nil
        do {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin))
        } catch {
            if case .invalidParameter(let message) = error { reason = message } else { reason = "\(error)" }
        }
        #expect(reason?.contains(mentions) == true, "\(pin): \(reason ?? "accepted")")
    }
}
