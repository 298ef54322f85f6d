/// One item of the text `security dump-keychain` prints: its class, its attributes as printed, its data.
struct SecurityDumpItem {
    /// One attribute line: `"acct"<blob>="ann"`, `0x00000007 <blob>="Mail"`.
    struct Attribute {
        /// The tag: a four-character code such as `acct`, or a number such as 7 (the print name).
        let tag: UInt32
        /// The format in angle brackets: `blob`, `uint32`, `sint32`, `timedate`, `string`, …
        let format: String
        /// The value's bytes, `nil` for `<NULL>`.
        let value: [UInt8]?
        /// The line it is on.
        let line: Int
    }

    /// The line of its `keychain:` line.
    let line: Int
    /// The class: a four-character code (`genp`, `inet`) or a CSSM record type (0x80001000 for certificates).
    var itemClass: UInt32?
    /// The attributes, in the order printed.
    var attributes: [Attribute] = []
    /// The item's data (its secret), `nil` when the dump was made without `-d`.
    var data: [UInt8]?
    /// Whether an access control list (`dump-keychain -a`) was printed for it.
    var hadAccessList = false

    init(line: Int) {
        self.line = line
    }
}
