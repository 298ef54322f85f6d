extension Query {
    /// A query prepared for matching many items: its attribute values converted to their stored form once,
    /// in tag order, so that each item costs a few comparisons and no allocation.
    ///
    /// ``Query/matches(_:)`` is `Matcher(query).matches(attributes)`; a search builds one matcher and runs it
    /// over every candidate.
    struct Matcher {
        private struct Condition {
            let attribute: Attribute
            /// The wanted value in stored form; `nil` for a value no item can have (it matches nothing).
            let value: StoredAttributeValue?
        }

        private let queryClass: QueryClass
        private let synchronizable: SynchronizableMatch
        private let conditions: [Condition]

        init(_ query: Query) {
            queryClass = query.itemClass
            synchronizable = query.synchronizable
            var conditions: [Condition] = []
            conditions.reserveCapacity(query.attributes.count)
            for (attribute, wanted) in query.attributes where attribute != .synchronizable {
                conditions.append(Condition(attribute: attribute, value: StoredAttributeValue(wanted)))
            }
            conditions.sort { $0.attribute.tag < $1.attribute.tag }
            self.conditions = conditions
        }

        /// The value the query wants for `attribute` in stored form; `nil` when the query does not give one
        /// (or gives a date no item can have). A secondary index is looked up with these values.
        func wantedValue(_ attribute: Attribute) -> StoredAttributeValue? {
            for condition in conditions where condition.attribute == attribute { return condition.value }
            return nil
        }

        /// Whether an item with `attributes` matches, exactly as ``Query/matches(_:)`` documents.
        func matches(_ attributes: ItemAttributes) -> Bool {
            let itemClass = attributes.itemClass
            guard Query.searches(queryClass, itemClass) else { return false }
            let flag = attributes.boolean(.synchronizable) ?? false
            switch synchronizable {
            case .no: guard !flag else { return false }
            case .yes: guard flag else { return false }
            case .any: break
            }
            for condition in conditions {
                // An identity query's attributes of the other half are compared on that half.
                if queryClass == .identity && !condition.attribute.isAllowed(in: itemClass) { continue }
                guard let wanted = condition.value else { return false }
                if let equal = attributes.value(condition.attribute.tag, equals: wanted) {
                    guard equal else { return false }
                } else {
                    guard Query.implicitValue(of: condition.attribute, in: itemClass) == wanted else { return false }
                }
            }
            return true
        }
    }
}
