/// An element of an XML document read by ``XMLReader``: its name, attributes, the text directly inside it
/// (character data and CDATA, joined) and its child elements in document order.
struct XMLTreeElement: Equatable {
    /// The element's name, as written (with any prefix).
    let name: String
    /// The attributes, in document order.
    var attributes: [(name: String, value: String)] = []
    /// The text directly inside the element, entities resolved.
    var text = ""
    /// The child elements, in order.
    var children: [XMLTreeElement] = []

    init(name: String) {
        self.name = name
    }

    /// The value of the attribute `name`, if the element has it.
    func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// The first child named `name`.
    func child(_ name: String) -> XMLTreeElement? {
        children.first { $0.name == name }
    }

    /// The children named `name`, in order.
    func children(_ name: String) -> [XMLTreeElement] {
        children.filter { $0.name == name }
    }

    static func == (lhs: XMLTreeElement, rhs: XMLTreeElement) -> Bool {
        lhs.name == rhs.name && lhs.text == rhs.text && lhs.children == rhs.children
            && lhs.attributes.map(\.name) == rhs.attributes.map(\.name) && lhs.attributes.map(\.value) == rhs.attributes.map(\.value)
    }
}
