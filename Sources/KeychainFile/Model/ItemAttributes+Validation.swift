// The value rules of SPEC.md §7.3 and §8.2, shared by ItemAttributes, Query and the typed items.

extension ItemAttributes {
    /// Checks `value` for `attribute` in an item of `itemClass` and returns it in stored form.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the attribute and what is wrong.
    static func validated(
        _ value: AttributeValue, for attribute: Attribute, in itemClass: ItemClass
    ) throws(KeychainError) -> StoredAttributeValue {
        guard attribute.isAllowed(in: itemClass) else {
            throw .invalidParameter("\(attribute.name): not allowed in \(itemClass) items")
        }
        return try validated(value, for: attribute)
    }

    /// Checks that `value` has the type of `attribute` and is within its limits, whatever the class.
    static func validated(
        _ value: AttributeValue, for attribute: Attribute
    ) throws(KeychainError) -> StoredAttributeValue {
        guard value.type == attribute.type else {
            throw .invalidParameter("\(attribute.name): expected type \(attribute.type), got \(value.type)")
        }
        switch value {
        case .string(let text):
            let length = text.utf8.count
            guard length <= maximumValueByteCount else {
                throw .invalidParameter(
                    "\(attribute.name): \(length) bytes of UTF-8, more than \(maximumValueByteCount)")
            }
        case .bytes(let bytes):
            guard bytes.count <= maximumValueByteCount else {
                throw .invalidParameter("\(attribute.name): \(bytes.count) bytes, more than \(maximumValueByteCount)")
            }
        case .integer(let number):
            if let range = attribute.integerRange, !range.contains(number) {
                throw .invalidParameter(
                    "\(attribute.name): \(number) is outside \(range.lowerBound)…\(range.upperBound)")
            }
        case .boolean, .date:
            break
        }
        guard let stored = StoredAttributeValue(value) else {
            throw .invalidParameter("\(attribute.name): date too far from 1970 for 64-bit milliseconds")
        }
        return stored
    }
}
