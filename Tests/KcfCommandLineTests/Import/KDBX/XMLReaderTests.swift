import Testing
@testable import kcf

@Suite("XMLReader")
struct XMLReaderTests {
    static func parse(_ text: String) throws(XMLParseError) -> XMLTreeElement {
        try XMLReader.parse(Array(text.utf8))
    }

    @Test("elements, attributes, text with the five entities and character references, CDATA, comments, the declaration")
    func wellFormed() throws {
        let root = try Self.parse("""
            \u{FEFF}<?xml version="1.0" encoding="utf-8" standalone="yes"?>
            <!-- written by KeePass -->
            <KeePassFile a='1' b="x &amp; &quot;y&quot;">
              <Value Protected="True">&lt;&gt;&amp;&apos;&quot; &#65;&#x1F511;<![CDATA[<raw & text>]]></Value>
              <Empty/><!-- c --><Empty />
            </KeePassFile>
            """)
        #expect(root.name == "KeePassFile")
        #expect(root.attribute("a") == "1")
        #expect(root.attribute("b") == "x & \"y\"")
        #expect(root.children.map(\.name) == ["Value", "Empty", "Empty"])
        #expect(root.child("Value")?.text == "<>&'\" A🔑<raw & text>")
        #expect(root.child("Value")?.attribute("Protected") == "True")
    }

    @Test("malformed documents are errors naming the problem", arguments: [
        ("<a><b></a>", "the end tag </a> does not match <b>"),
        ("<a>&nbsp;</a>", "the reference &nbsp; is not one XML defines"),
        ("<a>&#0;</a>", "the character reference names U+0, not an XML character"),
        ("<a>&#xD800;</a>", "the character reference names U+D800, not an XML character"),
        ("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>", "a document type declaration is not read (KeePass does not write one)"),
        ("<a x='1' x='2'/>", "the attribute x is given twice"),
        ("<a>", "the document ends inside an element"),
        ("<a/><b/>", "content after the root element"),
        ("", "the document has no root element"),
        ("<a x=1/>", "an attribute value is not quoted"),
        ("<a><!-- x -- y --></a>", "\"--\" inside a comment"),
        ("<![CDATA[x]]>", "a CDATA section outside the root element"),
        ("<a>]]></a>", "\"]]>\" in text"),
    ])
    func malformed(document: String, reason: String) {
        do {
            _ = try Self.parse(document)
            Issue.record("\(document) was read")
        } catch {
            #expect(error.reason == reason, "\(document)")
        }
    }

    @Test("bytes that are not UTF-8 are refused")
    func notUTF8() {
        #expect(throws: XMLParseError(offset: 0, reason: "the document is not valid UTF-8")) { try XMLReader.parse([0x3C, 0x61, 0xFF, 0x2F, 0x3E]) }
    }

    @Test("nesting deeper than the bound is refused, without recursion")
    func depthBound() {
        let deep = String(repeating: "<a>", count: XMLReader.maximumDepth + 1) + String(repeating: "</a>", count: XMLReader.maximumDepth + 1)
        #expect(throws: XMLParseError.self) { try Self.parse(deep) }
        let fits = String(repeating: "<a>", count: XMLReader.maximumDepth) + String(repeating: "</a>", count: XMLReader.maximumDepth)
        #expect((try? Self.parse(fits)) != nil)
    }

    @Test("every truncation of a document is an error, never a crash")
    func truncations() {
        let document = Array("<?xml version=\"1.0\"?><K a=\"&amp;\"><!-- c --><V P=\"True\">x&#x41;<![CDATA[y]]></V><E/></K>".utf8)
        for length in 0..<document.count {
            #expect(throws: XMLParseError.self, "cut at \(length)") { try XMLReader.parse(Array(document.prefix(length))) }
        }
    }

    @Test("random byte changes to a document never crash the reader")
    func randomChanges() {
        let document = Array("<?xml version=\"1.0\"?><K a=\"&amp;\"><!-- c --><V P=\"True\">x&#x41;<![CDATA[y]]></V><E/><G><E>t</E></G></K>".utf8)
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("<>/!?-[]&;#x=\"' aK".utf8) + [0x00, 0xC3, 0xFF]
        for _ in 0..<5000 {
            var changed = document
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                changed[Int.random(in: 0..<changed.count, using: &generator)] = alphabet.randomElement(using: &generator)!
            }
            _ = try? XMLReader.parse(changed)
        }
    }
}
