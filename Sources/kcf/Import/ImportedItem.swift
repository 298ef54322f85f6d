import KeychainFile

/// One item an import will add: its attributes, its secret, and where it came from in the input (for
/// messages, such as `line 12 ("GitHub")` or `Social/github.com.gpg`).
struct ImportedItem {
    /// The item's attributes, validated.
    let attributes: ItemAttributes
    /// The secret: the password, a secure note's text, a certificate's DER.
    var secret: [UInt8]
    /// Where the item is in the input.
    let origin: String

    /// The attributes whose values may be left out when they cannot be stored (too long, not text), with a
    /// line in the report; any other attribute that cannot be stored leaves the whole item out.
    static let optionalAttributes: Set<Attribute> = [.label, .comment, .itemDescription]

    /// An item of `itemClass` with `values` and `secret`, or `nil` after reporting why it cannot be one.
    ///
    /// A secret over the library's limit (1 MiB) or a primary-key value it refuses skips the item; an optional
    /// attribute (label, comment, description) over the limit of an attribute (65,535 bytes) is left out and
    /// reported as not kept.
    static func make(
        _ itemClass: ItemClass, _ values: [Attribute: AttributeValue], secret: [UInt8], origin: String,
        report: inout ImportReport
    ) -> ImportedItem? {
        guard secret.count <= maximumSecretSize else {
            report.skip(origin, "its secret is \(secret.count) bytes; a keychain item holds at most \(maximumSecretSize)")
            return nil
        }
        var kept = values
        for attribute in optionalAttributes {
            guard case .string(let text)? = kept[attribute], text.utf8.count > ItemAttributes.maximumValueByteCount else { continue }
            kept[attribute] = nil
            report.notKept("\(Self.describe(attribute)) longer than \(ItemAttributes.maximumValueByteCount) bytes", in: origin)
        }
        do throws(KeychainError) {
            return ImportedItem(attributes: try ItemAttributes(itemClass: itemClass, values: kept), secret: secret, origin: origin)
        } catch {
            report.skip(origin, "\(error)")
            return nil
        }
    }

    /// The library's limit on a secret (SPEC.md §11).
    static let maximumSecretSize = 1_048_576

    /// How an attribute is named in the report: its library name and `security`'s code.
    static func describe(_ attribute: Attribute) -> String {
        "\(attribute.name) (\(AttributeCodes.code(of: attribute)))"
    }
}
