#!/usr/bin/env python3
"""Generates the Unicode data that KeychainFile's own NFC (UnicodeNFC) needs, and the test data it is checked on.

Writes
  Sources/KeychainFile/Unicode/UnicodeNFCData.swift       from UnicodeData.txt and CompositionExclusions.txt:
      canonical combining classes, full canonical decompositions and the canonical composition pairs, as
      compact text in StaticString literals (large array literals are slow to type-check; UnicodeNFCTables
      decodes the text into lookup tables once, at first use);
  Fixtures/unicode/NormalizationTest.txt   from NormalizationTest.txt: the conformance
      test data with each line's trailing comment (the characters and their names) removed.

The input is Debian's unicode-data package (Unicode 15.0.0: `apt-get install -y unicode-data`), or any folder
of the same UCD files given with --ucd. If DerivedNormalizationProps.txt is there too, the script checks the
composition exclusions and quick-check properties it derives against it and stops on any difference.

Usage: Scripts/generate-nfc-tables.py [--ucd /usr/share/unicode]   (from the repository root)
"""
import argparse
import bz2
import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWIFT_OUTPUT = os.path.join(ROOT, "Sources/KeychainFile/Unicode/UnicodeNFCData.swift")
TEST_OUTPUT = os.path.join(ROOT, "Fixtures/unicode/NormalizationTest.txt")
UNICODE_VERSION = "15.0.0"

# Hangul syllables decompose and compose algorithmically (Unicode §3.12); UnicodeData.txt lists them as one
# range without decompositions, and UnicodeNFC handles them in code.
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)
HANGUL_V = range(0x1161, 0x1176)
HANGUL_T = range(0x11A8, 0x11C3)

LICENCE_NOTE = """\
Unicode data: Copyright © 1991-2022 Unicode, Inc. Unicode and the Unicode Logo are registered trademarks of
Unicode, Inc. in the U.S. and other countries. Distributed under the Unicode License v3 (SPDX: Unicode-3.0),
https://www.unicode.org/license.txt, whose copyright and permission notice follows:

  Permission is hereby granted, free of charge, to any person obtaining a copy of data files and any
  associated documentation (the "Data Files") or software and any associated documentation (the "Software")
  to deal in the Data Files or Software without restriction, including without limitation the rights to use,
  copy, modify, merge, publish, distribute, and/or sell copies of the Data Files or Software, and to permit
  persons to whom the Data Files or Software are furnished to do so, provided that either (a) this copyright
  and permission notice appear with all copies of the Data Files or Software, or (b) this copyright and
  permission notice appear in associated Documentation.

  THE DATA FILES AND SOFTWARE ARE PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
  INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
  NONINFRINGEMENT OF THIRD PARTY RIGHTS. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR HOLDERS INCLUDED IN THIS
  NOTICE BE LIABLE FOR ANY CLAIM, OR ANY SPECIAL INDIRECT OR CONSEQUENTIAL DAMAGES, OR ANY DAMAGES WHATSOEVER
  RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS
  ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THE DATA FILES OR SOFTWARE.

  Except as contained in this notice, the name of a copyright holder shall not be used in advertising or
  otherwise to promote the sale, use or other dealings in these Data Files or Software without prior written
  authorization of the copyright holder."""


def fail(message):
    sys.exit(f"generate-nfc-tables: {message}")


def read_lines(path):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            return file.read().splitlines(), sha256_of_file(path)
    if os.path.exists(path + ".bz2"):   # Debian ships the large test files compressed
        with bz2.open(path + ".bz2", "rt", encoding="utf-8") as file:
            text = file.read()
        return text.splitlines(), hashlib.sha256(text.encode("utf-8")).hexdigest()
    fail(f"{path} not found (apt-get install -y unicode-data, or give --ucd)")


def sha256_of_file(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def check_version(lines, name):
    """The first line of each UCD file names its version, e.g. `# CompositionExclusions-15.0.0.txt`."""
    if lines and lines[0].startswith("#") and f"-{UNICODE_VERSION}.txt" not in lines[0]:
        fail(f"{name} is not Unicode {UNICODE_VERSION}: {lines[0]}")


def parse_unicode_data(lines):
    """Returns ({code point: ccc} for ccc != 0, {code point: single-step canonical decomposition})."""
    classes, decompositions = {}, {}
    for line in lines:
        fields = line.split(";")
        if len(fields) != 15:
            fail(f"unexpected UnicodeData.txt line: {line}")
        code = int(fields[0], 16)
        ccc = int(fields[3])
        if ccc:
            if fields[1].endswith(", First>") or fields[1].endswith(", Last>"):
                fail(f"a range with a non-zero combining class: {line}")
            classes[code] = ccc
        mapping = fields[5]
        if mapping and not mapping.startswith("<"):   # "<tag> …" marks a compatibility decomposition
            decompositions[code] = [int(part, 16) for part in mapping.split()]
    return classes, decompositions


def assigned_ranges(lines):
    """The code points whose normal form no later Unicode version can change, as merged (first, last) pairs:
    those UnicodeData.txt lists (alone or as a First/Last range) and the 66 noncharacters, which are never
    assigned (Unicode §23.7). DerivedAge.txt lists exactly these."""
    codes = [(0xFDD0, 0xFDEF)] + [(plane * 0x10000 + 0xFFFE, plane * 0x10000 + 0xFFFF) for plane in range(17)]
    first = None
    for line in lines:
        fields = line.split(";")
        code = int(fields[0], 16)
        if fields[1].endswith(", First>"):
            first = code
            continue
        if fields[1].endswith(", Last>"):
            codes.append((first, code))
            first = None
            continue
        codes.append((code, code))
    merged = []
    for low, high in sorted(codes):
        if merged and low == merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return merged


def parse_code_point_list(lines):
    """Code points of a UCD file of `XXXX[..YYYY] ; …  # comment` lines (or `XXXX # comment`)."""
    codes = set()
    for line in lines:
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        first = data.split(";")[0].strip()
        if ".." in first:
            low, high = first.split("..")
            codes.update(range(int(low, 16), int(high, 16) + 1))
        else:
            codes.add(int(first, 16))
    return codes


def full_decomposition(code, decompositions):
    if code not in decompositions:
        return [code]
    return [part for step in decompositions[code] for part in full_decomposition(step, decompositions)]


def derived_property(lines, name, value=None):
    """Code points that DerivedNormalizationProps.txt gives `name` (with `value`, if given)."""
    selected = []
    for line in lines:
        data = line.split("#", 1)[0]
        fields = [field.strip() for field in data.split(";")]
        if len(fields) >= 2 and fields[1] == name and (value is None or fields[2] == value):
            selected.append(line)
    return parse_code_point_list(selected)


def wrap(tokens, width=110):
    """Tokens joined by spaces into lines of at most `width` characters."""
    lines, line = [], ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > width:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


def hex_code(code):
    return f"{code:04X}"


def ccc_tokens(classes):
    """`XXXX=N` or `XXXX..YYYY=N` for runs of consecutive code points with one class N (decimal)."""
    tokens, codes = [], sorted(classes)
    start = 0
    while start < len(codes):
        end = start
        while end + 1 < len(codes) and codes[end + 1] == codes[end] + 1 and classes[codes[end + 1]] == classes[codes[start]]:
            end += 1
        low, high = codes[start], codes[end]
        span = hex_code(low) if low == high else f"{hex_code(low)}..{hex_code(high)}"
        tokens.append(f"{span}={classes[low]}")
        start = end + 1
    return tokens


def debian_version():
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", "unicode-data"], capture_output=True,
                              text=True, check=True).stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def swift_literal(name, doc, lines):
    body = "\n".join(f"        {line}" for line in lines)
    return f'''    /// {doc}
    static let {name}: StaticString = """
{body}
        """
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ucd", default="/usr/share/unicode", help="folder of the UCD files")
    arguments = parser.parse_args()

    data_lines, data_sha = read_lines(os.path.join(arguments.ucd, "UnicodeData.txt"))
    exclusion_lines, exclusion_sha = read_lines(os.path.join(arguments.ucd, "CompositionExclusions.txt"))
    test_lines, test_sha = read_lines(os.path.join(arguments.ucd, "NormalizationTest.txt"))
    check_version(exclusion_lines, "CompositionExclusions.txt")
    check_version(test_lines, "NormalizationTest.txt")

    classes, decompositions = parse_unicode_data(data_lines)
    exclusions = parse_code_point_list(exclusion_lines)

    # UAX #15: a canonical decomposition is a composition pair unless the character is excluded (the table),
    # a singleton (decomposes to one character), or a non-starter decomposition (the character, or the first
    # character of its decomposition, has a non-zero combining class).
    pairs = {}
    full_exclusions = set()
    for code, mapping in decompositions.items():
        if code in exclusions or len(mapping) == 1 or classes.get(code, 0) or classes.get(mapping[0], 0):
            full_exclusions.add(code)
            continue
        if len(mapping) != 2:
            fail(f"a primary composite with {len(mapping)} characters: {code:04X}")
        pairs[(mapping[0], mapping[1])] = code
    full = {code: full_decomposition(code, decompositions) for code in decompositions}

    # Cross-check against the derived properties, when they are there.
    derived_path = os.path.join(arguments.ucd, "DerivedNormalizationProps.txt")
    if os.path.exists(derived_path):
        derived, _ = read_lines(derived_path)
        check_version(derived, "DerivedNormalizationProps.txt")
        if derived_property(derived, "Full_Composition_Exclusion") != full_exclusions:
            fail("the derived composition exclusions differ from DerivedNormalizationProps.txt")
        # NFC_QC=No: decomposes but does not recompose; NFC_QC=Maybe: may compose with a preceding character.
        if derived_property(derived, "NFC_QC", "N") != full_exclusions:
            fail("NFC_QC=No differs from DerivedNormalizationProps.txt")
        maybe = {second for _, second in pairs} | set(HANGUL_V) | set(HANGUL_T)
        if derived_property(derived, "NFC_QC", "M") != maybe:
            fail("NFC_QC=Maybe differs from DerivedNormalizationProps.txt")
        print("generate-nfc-tables: checked against DerivedNormalizationProps.txt")
    assigned = assigned_ranges(data_lines)
    age_path = os.path.join(arguments.ucd, "DerivedAge.txt")
    if os.path.exists(age_path):
        ages, _ = read_lines(age_path)
        aged = set()
        for line in ages:
            field = line.split("#", 1)[0].split(";")[0].strip()
            if field:
                low, _, high = field.partition("..")
                aged.update(range(int(low, 16), int(high or low, 16) + 1))
        listed = set()
        for low, high in assigned:
            listed.update(range(low, high + 1))
        if listed != aged:
            fail("the code points UnicodeData.txt assigns differ from DerivedAge.txt")
        print("generate-nfc-tables: assigned code points checked against DerivedAge.txt")
    if any(code in HANGUL_SYLLABLES for code in decompositions):
        fail("UnicodeData.txt lists a Hangul syllable's decomposition; UnicodeNFC decomposes them in code")

    version = debian_version()
    decomposition_tokens = [f"{hex_code(code)}={'+'.join(map(hex_code, full[code]))}" for code in sorted(full)]
    pair_tokens = [f"{hex_code(first)}+{hex_code(second)}={hex_code(pairs[(first, second)])}"
                   for first, second in sorted(pairs)]
    licence = "\n".join(f"// {line}".rstrip() for line in LICENCE_NOTE.splitlines())
    swift = f"""\
// GENERATED by Scripts/generate-nfc-tables.py; do not edit. Run the script to regenerate.
//
// Source: the Unicode Character Database {UNICODE_VERSION}, as in Debian's unicode-data package {version}:
//   UnicodeData.txt              SHA-256 {data_sha}
//   CompositionExclusions.txt    SHA-256 {exclusion_sha}
// Derived from those files (modified: selected fields, decompositions expanded, exclusions applied).
//
{licence}

/// The Unicode {UNICODE_VERSION} character data of canonical normalisation, as compact text that
/// `UnicodeNFCTables` decodes into lookup tables once, at first use.
///
/// Each literal is a list of tokens separated by spaces and newlines; code points are hexadecimal:
/// - `canonicalCombiningClasses`: `XXXX=N` or `XXXX..YYYY=N`, the non-zero canonical combining class N
///   (decimal) of a code point or a range of them; every other code point has class 0.
/// - `canonicalDecompositions`: `XXXX=AAAA+BBBB…`, the full canonical decomposition of a code point (applied
///   recursively, not yet canonically ordered). Hangul syllables are not listed: they decompose
///   algorithmically (Unicode §3.12).
/// - `compositionPairs`: `AAAA+BBBB=XXXX`, the primary composite of a pair (UAX #15): the single-step
///   canonical decompositions less the composition exclusions, the singletons and the non-starter
///   decompositions. Hangul syllables compose algorithmically and are not listed.
///
/// - `assignedRanges`: `XXXX..YYYY`, the runs of code points the version assigns (every code point
///   UnicodeData.txt lists, alone or as a range, surrogates and private use included) and the noncharacters,
///   which are never assigned: the code points whose normal form no later version can change. Ascending.
///
/// For example, `00C5=0041+030A` in `canonicalDecompositions` and `0041+030A=00C5` in `compositionPairs`.
enum UnicodeNFCData {{
    /// The Unicode version of this data.
    static let unicodeVersion = "{UNICODE_VERSION}"

    /// How many tokens each literal holds; `UnicodeNFCTables` checks its decoding against them.
    static let counts = (canonicalCombiningClasses: {len(ccc_tokens(classes))}, canonicalDecompositions: {len(full)}, compositionPairs: {len(pairs)}, assignedRanges: {len(assigned)})

{swift_literal("canonicalCombiningClasses", "Non-zero canonical combining classes: `XXXX=N`, `XXXX..YYYY=N`.", wrap(ccc_tokens(classes)))}
{swift_literal("canonicalDecompositions", "Full canonical decompositions: `XXXX=AAAA+BBBB…`.", wrap(decomposition_tokens))}
{swift_literal("compositionPairs", "Canonical composition pairs: `AAAA+BBBB=XXXX`.", wrap(pair_tokens))}
{swift_literal("assignedRanges", "Runs of assigned code points: `XXXX..YYYY`.", wrap([f"{hex_code(low)}..{hex_code(high)}" for low, high in assigned]))}}}
"""
    os.makedirs(os.path.dirname(SWIFT_OUTPUT), exist_ok=True)
    with open(SWIFT_OUTPUT, "w", encoding="utf-8") as file:
        file.write(swift)

    # The conformance test data: the header as is, then each test line without its trailing comment.
    header_end = next(index for index, line in enumerate(test_lines) if line.startswith("@Part0"))
    note = [
        f"# KeychainFile: copied from Debian's unicode-data package {version} by Scripts/generate-nfc-tables.py.",
        f"# Modified: the trailing comment (characters and names) of each test line is removed; the lines, their",
        f"# order and the header below are unchanged. Source SHA-256 {test_sha}.",
        "#",
    ] + [f"# {line}".rstrip() for line in LICENCE_NOTE.splitlines()] + ["#"]
    trimmed = []
    for line in test_lines[header_end:]:
        if line.startswith("#") or line.startswith("@") or not line.strip():
            trimmed.append(line)
        else:
            columns = line.split("#", 1)[0].rstrip()
            if columns.count(";") != 5:
                fail(f"unexpected NormalizationTest.txt line: {line}")
            trimmed.append(columns)
    os.makedirs(os.path.dirname(TEST_OUTPUT), exist_ok=True)
    with open(TEST_OUTPUT, "w", encoding="utf-8") as file:
        file.write("\n".join(note + test_lines[:header_end] + trimmed) + "\n")

    print(f"generate-nfc-tables: Unicode {UNICODE_VERSION} (unicode-data {version}): {len(classes)} code points "
          f"with a non-zero class in {len(ccc_tokens(classes))} runs, {len(full)} decompositions, "
          f"{len(pairs)} composition pairs ({len({first for first, _ in pairs})} first, "
          f"{len({second for _, second in pairs})} second characters); wrote {os.path.relpath(SWIFT_OUTPUT, ROOT)} "
          f"({os.path.getsize(SWIFT_OUTPUT)} bytes) and {os.path.relpath(TEST_OUTPUT, ROOT)} "
          f"({os.path.getsize(TEST_OUTPUT)} bytes)")


if __name__ == "__main__":
    main()
