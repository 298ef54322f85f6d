#!/usr/bin/env python3
"""Runs the conformance fixtures (Fixtures/v1/NAME.kcf + NAME.json) through the independent reader.

For every manifest (format: Fixtures/README.md) the file is opened with the manifest's credential and
everything the manifest states is compared: the outcome; for a failure the error kind, the offset
(must lie in errorOffsetRange when one is given) and the version; for a file that opens the item count,
every item (id, class, the complete attribute set with each value's type, secret), the head and the
torn-tail report.  A manifest field this script does not know is itself reported as a mismatch, so
nothing the manifest states goes unchecked.

For every fixture that opens, the reference *writer* then appends one more record to a copy (once a
kind-1 put, once a kind-3 transaction that also deletes an existing item when there is one; a torn tail
is truncated first, SPEC §10) and the reader must open the result with exactly one more record.

Beyond the manifest, each certificate item whose secret is an X.509 DER certificate is checked against
SPEC §8.2's definitions of its attributes (subject, issuer, serialNumber, publicKeyHash, subjectKeyID,
certificateType), parsed here with a small DER walker; a key of class 1 whose applicationLabel equals a
certificate's publicKeyHash is reported as an identity (§8.1).

Prints one line per fixture and a summary; exit status 1 on any mismatch, 0 otherwise.

    python3 Scripts/reference/check_fixtures.py [FIXTURE_DIR] [-v]
    python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v2   # the reference's own v2 files

A manifest with "formatVersion": 2 is read with kcf_reference_v2 (its tornTail is {"offset": log offset,
"mayHoldAcknowledgedData": bool}, and "repaired" says whether the read repaired log bytes or a header page);
the reference writer then appends a put, a transaction with a deletion, and the same transaction in parts.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "v1"))

ERROR_NAMES = {K.NotAKeychain: "notAKeychain", K.UnsupportedVersion: "unsupportedVersion",
               K.WrongCredentials: "wrongCredentials", K.Corrupted: "corrupted", V.CorruptedRecord: "corrupted",
               V.UnsupportedFeature: "unsupportedFeature", V.RolledBack: "rolledBack"}
TOP_FIELDS = {"name", "formatVersion", "description", "credential", "expect"}
OPENS_FIELDS = {"outcome", "itemCount", "items", "head", "tornTail"}
OPENS_FIELDS_V2 = OPENS_FIELDS | {"repaired"}
FAILS_FIELDS = {"outcome", "error", "errorOffsetRange", "version"}


def credential_of(manifest: dict) -> dict:
    c = manifest["credential"]
    if set(c) == {"password"}:
        return {"password": c["password"]}
    if set(c) == {"key"}:
        return {"key": bytes.fromhex(c["key"])}
    raise ValueError(f"credential {c!r} is neither a password nor a key")


def attribute_json(name: str, value) -> dict:
    """The reader's value in the manifest's notation: {type name: value}."""
    a = K.ATTRIBUTES_BY_NAME[name]
    t = K.TYPE_NAMES[a.type]
    return {t: value.hex() if a.type == K.T_BYTES else value}


def item_json(item: K.Item) -> dict:
    return {"id": item.id.hex(), "class": K.CLASS_NAMES[item.cls],
            "attributes": {n: attribute_json(n, v) for n, v in item.attributes.items()},
            "secret": item.secret.hex()}


def _same_value(expected, actual) -> bool:
    # JSON true/false must not compare equal to 1/0, and 1 must not equal 1.0.
    return type(expected) is type(actual) and expected == actual


def compare_items(expected: list, kc: K.Keychain, out: list):
    actual = [item_json(kc.items[i]) for i in sorted(kc.items)]
    exp_ids = [e.get("id") for e in expected]
    if exp_ids != sorted(exp_ids):
        out.append("manifest items are not sorted by id")
    exp_by_id = {e.get("id"): e for e in expected}
    act_by_id = {a["id"]: a for a in actual}
    for missing in sorted(set(exp_by_id) - set(act_by_id)):
        out.append(f"item {missing}: expected, but the reader has no such live item")
    for extra in sorted(set(act_by_id) - set(exp_by_id)):
        out.append(f"item {extra}: live in the reader, not in the manifest")
    for iid in sorted(set(exp_by_id) & set(act_by_id)):
        e, a = exp_by_id[iid], act_by_id[iid]
        unknown = set(e) - {"id", "class", "attributes", "secret"}
        if unknown:
            out.append(f"item {iid}: manifest fields not understood: {sorted(unknown)}")
        if e.get("class") != a["class"]:
            out.append(f"item {iid}: class expected {e.get('class')!r}, reader {a['class']!r}")
        if e.get("secret") != a["secret"]:
            out.append(f"item {iid}: secret expected {e.get('secret')}, reader {a['secret']}")
        ea, aa = e.get("attributes", {}), a["attributes"]
        for n in sorted(set(ea) - set(aa)):
            out.append(f"item {iid}: attribute {n} = {ea[n]} expected, the reader has none")
        for n in sorted(set(aa) - set(ea)):
            out.append(f"item {iid}: attribute {n} = {aa[n]} in the reader, not in the manifest")
        for n in sorted(set(ea) & set(aa)):
            ev, av = ea[n], aa[n]
            if not (isinstance(ev, dict) and len(ev) == 1 and set(ev) == set(av)
                    and _same_value(next(iter(ev.values())), next(iter(av.values())))):
                out.append(f"item {iid}: attribute {n} expected {json.dumps(ev)}, reader {json.dumps(av)}")


def check_opens(exp: dict, kc: K.Keychain, out: list):
    if "itemCount" in exp and exp["itemCount"] != len(kc.items):
        out.append(f"itemCount expected {exp['itemCount']}, reader {len(kc.items)}")
    if "items" in exp:
        compare_items(exp["items"], kc, out)
        if "itemCount" in exp and exp["itemCount"] != len(exp["items"]):
            out.append(f"manifest inconsistent: itemCount {exp['itemCount']} but {len(exp['items'])} items")
    if "head" in exp:
        h = exp["head"]
        if set(h) != {"sequence", "chainValue"}:
            out.append(f"head: manifest fields not understood: {sorted(set(h) - {'sequence', 'chainValue'})}")
        if h.get("sequence") != kc.head[0] or h.get("chainValue") != kc.head[1].hex():
            out.append(f"head expected ({h.get('sequence')}, {h.get('chainValue')}), "
                       f"reader ({kc.head[0]}, {kc.head[1].hex()})")
    if "tornTail" in exp:
        t = exp["tornTail"]
        if isinstance(kc, V.KeychainV2):
            actual = v2_torn_tail(kc)
        else:
            actual = None if kc.torn_tail is None else {"offset": kc.torn_tail[0], "byteCount": kc.torn_tail[1]}
        if t != actual:
            out.append(f"tornTail expected {json.dumps(t)}, reader {json.dumps(actual)}")
    if "repaired" in exp:
        if not isinstance(kc, V.KeychainV2):
            out.append("repaired is a version 2 field")
        elif exp["repaired"] != v2_repaired(kc):
            out.append(f"repaired expected {exp['repaired']}, reader {v2_repaired(kc)}: {kc.repairs}")


def v2_torn_tail(kc) -> dict:
    """Version 2's tornTail: the log offset where what is not applied starts, and whether it may hold
    acknowledged data (records set aside, §3 rule 2) or not (a remnant or an undone transaction)."""
    if kc.set_aside is not None:
        return {"offset": kc.set_aside[0], "mayHoldAcknowledgedData": True}
    for tail in (kc.undone, kc.remnant):
        if tail is not None:
            return {"offset": tail[0], "mayHoldAcknowledgedData": False}
    return None


def v2_repaired(kc) -> bool:
    """Whether the read repaired something a writer puts back: log bytes, or a header page."""
    return bool(kc.repaired_log) or bool(kc.pages_to_rewrite)


def check_fails(exp: dict, err: Exception, out: list):
    name = ERROR_NAMES.get(type(err), type(err).__name__)
    if exp.get("error") != name:
        out.append(f"error expected {exp.get('error')}, reader {name}: {err}")
        return
    if "errorOffsetRange" in exp:
        lo, hi = exp["errorOffsetRange"]
        if not isinstance(err, K.Corrupted):
            out.append("errorOffsetRange given for an error that has no offset")
        elif not lo <= err.offset < hi:
            out.append(f"error offset expected in [{lo}, {hi}), reader {err.offset} ({err.reason})")
    if "version" in exp:
        if not isinstance(err, K.UnsupportedVersion) or err.version != exp["version"]:
            out.append(f"version expected {exp['version']}, reader {getattr(err, 'version', None)}")


def _der(b: bytes, o: int) -> tuple:
    """One DER TLV at o: (tag, start of contents, end of contents)."""
    tag = b[o]
    n = b[o + 1]
    o += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(b[o:o + k], "big")
        o += k
    return tag, o, o + n


def certificate_fields(der: bytes) -> dict:
    """SPEC §8.2's certificate attributes computed from the DER (raises on anything unexpected)."""
    t, o, end = _der(der, 0)                       # Certificate
    assert t == 0x30 and end == len(der)
    t, o, tbs_end = _der(der, o)                    # TBSCertificate
    assert t == 0x30
    fields = {}
    t, c, e = _der(der, o)
    version = 0
    if t == 0xA0:                                   # [0] EXPLICIT Version
        _, vc, ve = _der(der, c)
        version = int.from_bytes(der[vc:ve], "big")
        o = e
        t, c, e = _der(der, o)
    assert t == 0x02
    fields["serialNumber"] = der[c:e]               # content octets of the INTEGER
    o = e
    o = _der(der, o)[2]                             # signature AlgorithmIdentifier
    _, c, e = _der(der, o)
    fields["issuer"] = der[o:e]                     # Name, tag and length included
    o = e
    o = _der(der, o)[2]                             # validity
    _, c, e = _der(der, o)
    fields["subject"] = der[o:e]
    o = e
    t, c, e = _der(der, o)                          # SubjectPublicKeyInfo
    assert t == 0x30
    c2 = _der(der, c)[2]                            # algorithm
    t, bc, be = _der(der, c2)                       # subjectPublicKey BIT STRING
    assert t == 0x03
    fields["publicKeyHash"] = hashlib.sha1(der[bc + 1:be]).digest()
    fields["certificateType"] = version + 1
    try:
        from cryptography import x509
        cert = x509.load_der_x509_certificate(der)
        fields["subjectKeyID"] = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except Exception:                               # no extension (or no parser): not compared
        pass
    return fields


def check_certificates(kc: K.Keychain, out: list) -> str:
    notes = []
    hashes = {}
    for iid in sorted(kc.items):
        it = kc.items[iid]
        if it.cls != K.CERTIFICATE:
            continue
        try:
            fields = certificate_fields(it.secret)
        except Exception:
            continue                                # not a DER certificate: nothing to compare
        for name, value in fields.items():
            have = it.attributes.get(name)
            if have != value:
                show = value.hex() if isinstance(value, bytes) else value
                out.append(f"item {iid.hex()}: §8.2 {name} from the certificate is {show}, "
                           f"stored {have.hex() if isinstance(have, bytes) else have}")
        hashes[fields["publicKeyHash"]] = iid
        notes.append("cert §8.2")
    for iid in sorted(kc.items):
        it = kc.items[iid]
        if it.cls == K.KEY and it.attributes.get("keyClass") == 1 and it.attributes.get("applicationLabel") in hashes:
            notes.append("identity")
    return ", ".join(sorted(set(notes)))


def check_writer_append(path: str, cred: dict, kc: K.Keychain, out: list) -> str:
    """Appends one record with the reference writer to a copy on disk; the reader must see exactly it."""
    notes = []
    with tempfile.TemporaryDirectory(prefix="kcf-fixture-") as tmp:
        for variant in ("put", "transaction"):
            copy = os.path.join(tmp, f"{variant}.kcf")
            shutil.copyfile(path, copy)
            w = K.Writer.open(copy, cred, rng=random.Random(2026),
                              clock=lambda: 1_900_000_000_000)
            entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"check_fixtures {variant}",
                                                       "service": "Scripts/reference"}, b"appended")]
            deleted = None
            if variant == "transaction" and kc.items:
                deleted = sorted(kc.items)[0]
                entries.append(K.Delete(deleted))
            w.append(entries, transaction=(variant == "transaction"))
            try:
                after = K.open_keychain(copy, cred)
            except K.KCFError as e:
                out.append(f"writer ({variant}): the appended file does not open: {type(e).__name__}: {e}")
                continue
            new_id = entries[0].item_id
            expect_records = len(kc.records) + 1
            problems = []
            if len(after.records) != expect_records:
                problems.append(f"{len(after.records)} records, expected {expect_records}")
            if after.torn_tail is not None:
                problems.append(f"torn tail {after.torn_tail}")
            if after.head[0] != kc.head[0] + 1 or after.records[-1].kind != (3 if variant == "transaction" else 1):
                problems.append(f"head {after.head[0]} / kind {after.records[-1].kind}")
            if new_id not in after.items or after.items[new_id].secret != b"appended":
                problems.append("appended item missing")
            expected_ids = (set(kc.items) | {new_id}) - ({deleted} if deleted else set())
            if set(after.items) != expected_ids:
                problems.append("live items differ")
            for iid in expected_ids - {new_id}:
                a, b = after.items[iid], kc.items[iid]
                if (a.cls, a.attributes, a.secret) != (b.cls, b.attributes, b.secret):
                    problems.append(f"item {iid.hex()} changed")
            if after.records[:-1] != kc.records:
                problems.append("earlier records changed")
            if problems:
                out.append(f"writer ({variant}): " + "; ".join(problems))
            else:
                notes.append(variant)
    return "+".join(notes)


def check_writer_append_v2(path: str, cred: dict, kc, out: list) -> str:
    """Version 2: the reference writer appends to a copy (a put; a transaction that also deletes; the same
    transaction cut into parts), cutting a remnant or an undone transaction and writing back repairs first; its
    own reader must then find exactly the new records applied and nothing else changed. A file with records set
    aside must refuse the append and stay unchanged."""
    notes = []
    with tempfile.TemporaryDirectory(prefix="kcf-fixture-v2-") as tmp:
        for variant in ("put", "transaction", "parts"):
            copy = os.path.join(tmp, f"{variant}.kcf")
            shutil.copyfile(path, copy)
            try:
                w = V.Writer.open(copy, cred, rng=random.Random(2026), clock=lambda: 1_900_000_000_000,
                                  part_limit=400 if variant == "parts" else V.MAX_BODY)
            except V.SetAsideRefusal:
                with open(copy, "rb") as a, open(path, "rb") as b:
                    if a.read() != b.read():
                        out.append("writer: refused over records set aside, but changed the file")
                if kc.set_aside is None:
                    out.append("writer: refused though nothing is set aside")
                notes.append("refused (set aside)")
                break
            entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"check_fixtures {variant}",
                                                       "service": "Scripts/reference"}, b"appended")]
            deleted = None
            if variant != "put":
                entries.append(w.make_put(K.GENERIC_PASSWORD, {"account": f"check_fixtures {variant} 2",
                                                               "service": "Scripts/reference"}, b"x" * 300))
                if kc.items:
                    deleted = sorted(kc.items)[0]
                    entries.append(K.Delete(deleted))
            offsets = w.append(entries)
            try:
                after = V.open_keychain(copy, cred)
            except K.KCFError as e:
                out.append(f"writer ({variant}): the appended file does not open: {type(e).__name__}: {e}")
                continue
            new_ids = {e.item_id for e in entries if isinstance(e, K.Put)}
            problems = []
            if len(after.records) != len(kc.records) + len(offsets):
                problems.append(f"{len(after.records)} records, expected {len(kc.records)} + {len(offsets)}")
            if variant == "parts" and len(offsets) < 2:
                problems.append("the transaction was not cut into parts")
            if v2_torn_tail(after) is not None or after.repaired_log or after.pages_to_rewrite:
                problems.append(f"after the append: tail {v2_torn_tail(after)}, repairs {after.repairs}")
            if after.head[0] != kc.head[0] + len(offsets) or after.records[-1].kind != V.KIND_COMMIT:
                problems.append(f"head {after.head[0]} / kind {after.records[-1].kind}")
            if any(after.items.get(i) is None for i in new_ids) or after.items[entries[0].item_id].secret != b"appended":
                problems.append("appended item missing")
            expected_ids = (set(kc.items) | new_ids) - ({deleted} if deleted else set())
            if set(after.items) != expected_ids:
                problems.append("live items differ")
            for iid in expected_ids - new_ids:
                a, b = after.items[iid], kc.items[iid]
                if (a.cls, a.attributes, a.secret) != (b.cls, b.attributes, b.secret):
                    problems.append(f"item {iid.hex()} changed")
            if after.records[:len(kc.records)] != kc.records:
                problems.append("earlier records changed")
            if problems:
                out.append(f"writer ({variant}): " + "; ".join(problems))
            else:
                notes.append(variant if variant != "parts" else f"{len(offsets)} parts")
    return "+".join(notes)


def check_fixture(manifest_path: str) -> tuple:
    """Returns (name, list of mismatches, short summary of what the reader found)."""
    out = []
    with open(manifest_path, encoding="utf-8") as f:
        m = json.load(f)
    name = os.path.basename(manifest_path)[:-5]
    if m.get("name") != name:
        out.append(f"manifest name {m.get('name')!r} differs from the file name")
    version = m.get("formatVersion")
    if version not in (1, 2):
        out.append(f"formatVersion {version!r}")
    reader = V if version == 2 else K
    unknown = set(m) - TOP_FIELDS
    if unknown:
        out.append(f"manifest fields not understood: {sorted(unknown)}")
    exp = m["expect"]
    kcf = manifest_path[:-5] + ".kcf"
    cred = credential_of(m)
    outcome = exp.get("outcome")
    known = (OPENS_FIELDS_V2 if version == 2 else OPENS_FIELDS) if outcome == "opens" else FAILS_FIELDS
    if outcome not in ("opens", "fails"):
        out.append(f"outcome {outcome!r} not understood")
    unknown = set(exp) - known
    if unknown:
        out.append(f"expect fields not understood for outcome {outcome!r}: {sorted(unknown)}")
    try:
        kc = reader.open_keychain(kcf, cred)
    except K.KCFError as err:
        found = f"{ERROR_NAMES.get(type(err))}" + (f" at {err.offset} ({err.reason})" if isinstance(err, K.Corrupted)
                                                  else f" {err.version}" if isinstance(err, K.UnsupportedVersion) else "")
        if outcome != "fails":
            out.append(f"outcome expected {outcome}, reader fails: {type(err).__name__}: {err}")
        else:
            check_fails(exp, err, out)
        return name, out, found
    if version == 2:
        tail = v2_torn_tail(kc)
        found = (f"opens: {len(kc.items)} items, head {kc.head[0]}, "
                 + ("no torn tail" if tail is None else
                    f"{'set aside' if tail['mayHoldAcknowledgedData'] else 'torn tail'} at log {tail['offset']}")
                 + (", repaired" if v2_repaired(kc) else ""))
    else:
        found = (f"opens: {len(kc.items)} items, head {kc.head[0]}, "
                 + ("no torn tail" if kc.torn_tail is None else f"torn tail {kc.torn_tail[0]}+{kc.torn_tail[1]}"))
    if outcome != "opens":
        out.append(f"outcome expected {outcome} ({exp.get('error')}), reader opens ({found})")
        return name, out, found
    check_opens(exp, kc, out)
    certs = check_certificates(kc, out)
    if certs:
        found += f"; {certs} ok" if not out else f"; {certs}"
    appended = (check_writer_append_v2 if version == 2 else check_writer_append)(kcf, cred, kc, out)
    if appended:
        found += f"; writer appends ({appended}) ok"
    return name, out, found


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--write-reference"]:
        import reference_fixtures_v2
        if len(args) != 2:
            print("usage: check_fixtures.py --write-reference DIRECTORY")
            return 2
        names = reference_fixtures_v2.write(args[1])
        print(f"wrote {len(names)} reference fixtures (version 2) to {args[1]}: {', '.join(names)}")
        return 0
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    directory = args[0] if args else DEFAULT_DIR
    manifests = sorted(glob.glob(os.path.join(directory, "*.json")))
    if not manifests:
        print(f"no manifests in {directory}")
        return 1
    failed = 0
    for mp in manifests:
        try:
            name, problems, found = check_fixture(mp)
        except Exception as e:  # a crash of the checker or reader is a failure too
            name, problems, found = os.path.basename(mp)[:-5], [f"checker crashed: {type(e).__name__}: {e}"], ""
        kcf = mp[:-5] + ".kcf"
        if not os.path.exists(kcf):
            problems.append("no .kcf file beside the manifest")
        status = "ok  " if not problems else "FAIL"
        print(f"{status} {name:28} {found}")
        for p in problems:
            print(f"       - {p}")
        failed += bool(problems)
    orphans = [p for p in sorted(glob.glob(os.path.join(directory, "*.kcf")))
               if not os.path.exists(p[:-4] + ".json")]
    for p in orphans:
        print(f"FAIL {os.path.basename(p)[:-4]:28} no manifest beside the .kcf file")
    failed += len(orphans)
    total = len(manifests) + len(orphans)
    print(f"\n{total - failed} of {total} fixtures match the reference reader"
          + ("" if not failed else f"; {failed} MISMATCH{'ES' if failed > 1 else ''}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
