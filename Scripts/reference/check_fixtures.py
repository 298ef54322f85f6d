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

A manifest with "formatVersion": 3 is read with kcf_reference_v3, with version 2's fields and: "scope" (null for a
credential reaching the whole keychain, else the sorted names of the groups it reaches, "" the default group),
"groups" and "groupHeads" in expect (the group names the opener sees; every group's head as the last applied
commit's heads segment states it, decoded here from the log with the heads key), optionally "tombstones" in expect
([{"id", "time", "group"}] sorted by id: the tombstones the opener reads, with the group whose page holds each), and
"otherCredentials" (each
{"credential", "scope", "expect"}, opened and checked as the manifest's own). The reference writer then appends, with
every credential that opens, a put, a transaction with a deletion and the same in parts, in the groups that credential
reaches; after the transaction every other credential of the manifest must see exactly its groups' part of it. An
optional "pins" ([{"credential", "head", "outcome"}], SPEC.md §15.4, §37.5): the file opened with each credential,
pinning the head (its text form), must give the outcome, "opens" or "rolledBack".

    python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v3   # the reference's own v3 files
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
import kcf_reference_v3 as V3  # noqa: E402
import records_v3 as R3  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "v1"))

ERROR_NAMES = {K.NotAKeychain: "notAKeychain", K.UnsupportedVersion: "unsupportedVersion",
               K.WrongCredentials: "wrongCredentials", K.Corrupted: "corrupted", V.CorruptedRecord: "corrupted",
               V.UnsupportedFeature: "unsupportedFeature", V.RolledBack: "rolledBack"}
TOP_FIELDS = {"name", "formatVersion", "description", "credential", "expect"}
OPENS_FIELDS = {"outcome", "itemCount", "items", "head", "tornTail"}
OPENS_FIELDS_V2 = OPENS_FIELDS | {"repaired"}
FAILS_FIELDS = {"outcome", "error", "errorOffsetRange", "version"}
TOP_FIELDS_V3 = TOP_FIELDS | {"scope", "otherCredentials", "pins"}
PIN_FIELDS_V3 = {"credential", "head", "outcome"}
PIN_OUTCOMES = ("opens", "rolledBack")
OPENS_FIELDS_V3 = OPENS_FIELDS_V2 | {"groups", "groupHeads", "tombstones"}
OTHER_FIELDS_V3 = {"credential", "scope", "expect"}
HEAD_FIELDS_V3 = {"keyID", "startEpoch", "sequence", "lastTag"}


def credential_of(manifest: dict) -> dict:
    c = manifest["credential"]
    if not isinstance(c, dict):
        raise ValueError(f"credential {c!r} is neither a password nor a key")
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


def open_writer(writer_class, copy: str, path: str, cred: dict, variant: str, kc, out: list, notes: list):
    """The reference writer on `copy` (a part limit of 400 bytes for the variant "parts"), or None when it refused
    over records set aside: then the copy must be unchanged and the reader must have set records aside."""
    try:
        return writer_class.open(copy, cred, rng=random.Random(2026), clock=lambda: 1_900_000_000_000,
                                 part_limit=400 if variant == "parts" else V.MAX_BODY)
    except V.SetAsideRefusal:
        with open(copy, "rb") as a, open(path, "rb") as b:
            if a.read() != b.read():
                out.append("writer: refused over records set aside, but changed the file")
        if kc.set_aside is None:
            out.append("writer: refused though nothing is set aside")
        notes.append("refused (set aside)")
        return None


def append_problems(variant: str, entries: list, offsets: list, deleted, kc, after) -> list:
    """What is wrong with `after`, the file `kc` read with `entries` appended at `offsets` (`deleted` the id the
    transaction deleted): exactly the new records, a commit last, no tail or repair left, the new items live, every
    other item as it was, the earlier records unchanged."""
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
    return problems


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
            w = open_writer(V.Writer, copy, path, cred, variant, kc, out, notes)
            if w is None:
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
            problems = append_problems(variant, entries, offsets, deleted, kc, after)
            if problems:
                out.append(f"writer ({variant}): " + "; ".join(problems))
            else:
                notes.append(variant if variant != "parts" else f"{len(offsets)} parts")
    return "+".join(notes)


def v3_scope(kc):
    """Version 3: None when the credential reaches the whole keychain, else the sorted names of its groups."""
    return None if not kc.scoped else sorted(kc.keys.names.values())


def v3_groups(kc) -> list:
    """The sorted names of the groups the opener sees: a full credential every group of the key table, a scoped one
    its own."""
    return sorted(kc.keys.names.values())


def v3_group_heads(kc) -> list:
    """Every group's head as the heads segment of the last applied commit states it (§35.7: the heads box is sealed
    under K_heads, from K_log, so every holder reads it), decoded here from that record's bytes in the log as read:
    [{"keyID", "startEpoch", "sequence", "lastTag"}] sorted by key id."""
    record_info = next((r for r in reversed(kc.records) if r.kind == V.KIND_COMMIT), None)
    if record_info is None:
        raise ValueError("no commit applied: no heads to report")
    record = bytes(kc.log[record_info.offset:record_info.offset + record_info.length])
    segment = R3.split(record)["segments"][-1]
    if segment["keyID"] != 0:
        raise ValueError(f"the last applied commit (sequence {record_info.sequence}) has no heads segment")
    heads = R3.open_heads(record[segment["page"][0]:segment["page"][1]], 0, kc.keys.k_heads, kc.file_id, kc.epoch,
                          record_info.sequence)
    return [{"keyID": k, "startEpoch": h["startEpoch"], "sequence": h["groupSequence"], "lastTag": h["lastTag"].hex()}
            for k, h in sorted(heads.items())]


def check_opens_v3(exp: dict, kc, out: list):
    """Version 3's fields of expect beyond version 2's: groups, groupHeads and (optional) tombstones."""
    if "tombstones" in exp:
        expected = exp["tombstones"]
        found = [{"id": i.hex(), "time": kc.tombstones[i], "group": kc.keys.names.get(kc.tombstone_groups[i], "?")}
                 for i in sorted(kc.tombstones)]
        if not isinstance(expected, list) or any(not isinstance(t, dict) or set(t) != {"id", "time", "group"}
                                                 for t in expected):
            out.append(f"tombstones {json.dumps(expected)} is not a list of {{id, time, group}}")
        elif expected != sorted(expected, key=lambda t: t["id"]):
            out.append("manifest tombstones are not sorted by id")
        elif expected != found:
            out.append(f"tombstones expected {json.dumps(expected)}, reader {json.dumps(found)}")
    if "groups" in exp:
        if not isinstance(exp["groups"], list) or exp["groups"] != sorted(exp["groups"]):
            out.append(f"manifest groups {json.dumps(exp['groups'])} are not a sorted list")
        if exp["groups"] != v3_groups(kc):
            out.append(f"groups expected {json.dumps(exp['groups'])}, reader {json.dumps(v3_groups(kc))}")
    if "groupHeads" in exp:
        heads = v3_group_heads(kc)
        expected = exp["groupHeads"]
        if not isinstance(expected, list):
            out.append(f"groupHeads {json.dumps(expected)} is not a list")
            return
        for h in expected:
            unknown = set(h) - HEAD_FIELDS_V3 if isinstance(h, dict) else {"(not an object)"}
            if unknown:
                out.append(f"groupHeads: manifest fields not understood: {sorted(unknown)}")
        keys = [h.get("keyID") for h in expected if isinstance(h, dict)]
        if keys != sorted(keys):
            out.append("manifest groupHeads are not sorted by keyID")
        exp_by_key = {h.get("keyID"): h for h in expected if isinstance(h, dict)}
        act_by_key = {h["keyID"]: h for h in heads}
        for k in sorted(set(exp_by_key) - set(act_by_key), key=str):
            out.append(f"groupHeads: key id {k} expected, the last commit's heads do not name it")
        for k in sorted(set(act_by_key) - set(exp_by_key)):
            out.append(f"groupHeads: key id {k} {json.dumps(act_by_key[k])} in the last commit's heads, not in the "
                       f"manifest")
        for k in sorted(set(exp_by_key) & set(act_by_key)):
            e, a = exp_by_key[k], act_by_key[k]
            if any(not _same_value(e.get(f), a[f]) for f in ("startEpoch", "sequence", "lastTag")):
                out.append(f"groupHeads: key id {k} expected {json.dumps(e, sort_keys=True)}, "
                           f"reader {json.dumps(a, sort_keys=True)}")
        # The reader's own chains of the groups it holds end at those heads (it checked that to open; said again).
        for k, (start, sequence, tag) in kc.head[1].groups.items():
            a = act_by_key.get(k)
            if a is None or (a["startEpoch"], a["sequence"], a["lastTag"]) != (start, sequence, tag.hex()):
                out.append(f"groupHeads: the reader's chain of key id {k} ({start}, {sequence}, {tag.hex()}) is not "
                           f"the last commit's head {json.dumps(a)}")


def _found(kc, version: int) -> str:
    if version >= 2:
        tail = v2_torn_tail(kc)
        found = (f"opens: {len(kc.items)} items, head {kc.head[0]}, "
                 + ("no torn tail" if tail is None else
                    f"{'set aside' if tail['mayHoldAcknowledgedData'] else 'torn tail'} at log {tail['offset']}")
                 + (", repaired" if v2_repaired(kc) else ""))
        if version == 3:
            found += f", {'scoped to ' + json.dumps(v3_scope(kc)) if kc.scoped else 'full'}, " \
                     f"{len(v3_groups(kc))} groups"
        return found
    return (f"opens: {len(kc.items)} items, head {kc.head[0]}, "
            + ("no torn tail" if kc.torn_tail is None else f"torn tail {kc.torn_tail[0]}+{kc.torn_tail[1]}"))


def open_and_check(kcf: str, credential: dict, exp, version: int, out: list, *, scope="absent"):
    """Opens kcf with the credential and compares what expect states (and, version 3, the scope). Returns (the
    keychain or None, a short summary)."""
    reader = V3 if version == 3 else V if version == 2 else K
    if not isinstance(exp, dict):
        out.append(f"expect {json.dumps(exp)} is not an object")
        return None, ""
    outcome = exp.get("outcome")
    known = ({3: OPENS_FIELDS_V3, 2: OPENS_FIELDS_V2}.get(version, OPENS_FIELDS) if outcome == "opens"
             else FAILS_FIELDS)
    if outcome not in ("opens", "fails"):
        out.append(f"outcome {outcome!r} not understood")
    unknown = set(exp) - known
    if unknown:
        out.append(f"expect fields not understood for outcome {outcome!r}: {sorted(unknown)}")
    if version == 3 and scope == "absent":
        out.append("no scope given (version 3: null for a full credential, else the sorted group names)")
    try:
        kc = reader.open_keychain(kcf, credential)
    except K.KCFError as err:
        found = f"{ERROR_NAMES.get(type(err))}" + (f" at {err.offset} ({err.reason})" if isinstance(err, K.Corrupted)
                                                  else f" {err.version}" if isinstance(err, K.UnsupportedVersion) else "")
        if outcome != "fails":
            out.append(f"outcome expected {outcome}, reader fails: {type(err).__name__}: {err}")
        else:
            check_fails(exp, err, out)
            if version == 3 and scope not in (None, "absent"):
                out.append(f"scope {json.dumps(scope)} given for a credential that does not open (the reader can "
                           f"report none)")
        return None, found
    found = _found(kc, version)
    if outcome != "opens":
        out.append(f"outcome expected {outcome} ({exp.get('error')}), reader opens ({found})")
        return None, found
    check_opens(exp, kc, out)
    if version == 3:
        if scope != "absent" and scope != v3_scope(kc):
            out.append(f"scope expected {json.dumps(scope)}, reader {json.dumps(v3_scope(kc))}")
        check_opens_v3(exp, kc, out)
    return kc, found


def _describe(credential_json) -> str:
    if isinstance(credential_json, dict) and "password" in credential_json:
        return f"password {credential_json['password']!r}"
    if isinstance(credential_json, dict) and "key" in credential_json:
        return f"key {str(credential_json['key'])[:8]}…"
    return json.dumps(credential_json)


def check_writer_append_v3(path: str, cred: dict, kc, others: list, out: list) -> str:
    """Version 3: as version 2's, in the groups the credential reaches — a put in its first group (the default group
    for a full credential); a transaction of that put, a put in its last group and the deletion of its first live
    item; the same transaction cut into parts. A scoped writer asked to write a file whose log bytes verified only as
    repaired refuses (§2.6, ScopedRepairRefused) and leaves it unchanged. After the transaction every other credential
    that opened (`others`: [(credential, keychain as it read the fixture)]) opens the result and must find exactly
    its groups' part of the change, every other item unchanged, and the same head."""
    notes = []
    groups = v3_groups(kc)
    first, last = ("" if not kc.scoped else groups[0]), groups[-1]
    with tempfile.TemporaryDirectory(prefix="kcf-fixture-v3-") as tmp:
        for variant in ("put", "transaction", "parts"):
            copy = os.path.join(tmp, f"{variant}.kcf")
            shutil.copyfile(path, copy)
            w = open_writer(V3.WriterV3, copy, path, cred, variant, kc, out, notes)
            if w is None:
                break
            entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"check_fixtures {variant}", "accessGroup": first,
                                                       "service": "Scripts/reference"}, b"appended")]
            deleted = None
            if variant != "put":
                entries.append(w.make_put(K.GENERIC_PASSWORD, {"account": f"check_fixtures {variant} 2",
                                                               "accessGroup": last, "service": "Scripts/reference"},
                                          b"x" * 300))
                if kc.items:
                    deleted = sorted(kc.items)[0]
                    entries.append(K.Delete(deleted))
            try:
                offsets = w.append(entries)
            except V3.ScopedRepairRefused as e:
                with open(copy, "rb") as a, open(path, "rb") as b:
                    if a.read() != b.read():
                        out.append("writer: refused a repair it cannot verify, but changed the file")
                if not (kc.scoped and kc.repaired_log):
                    out.append(f"writer ({variant}): refused though the reader repaired no log bytes: {e}")
                notes.append("refused (scoped, repaired log)")
                break
            try:
                after = V3.open_keychain(copy, cred)
            except K.KCFError as e:
                out.append(f"writer ({variant}): the appended file does not open: {type(e).__name__}: {e}")
                continue
            puts = [e for e in entries if isinstance(e, K.Put)]
            problems = append_problems(variant, entries, offsets, deleted, kc, after)
            if v3_groups(after) != groups or v3_scope(after) != v3_scope(kc):
                problems.append(f"groups {v3_groups(after)} / scope {v3_scope(after)} after the append")
            heads_after = {h["keyID"]: h for h in v3_group_heads(after)}
            for k, (start, sequence, tag) in after.head[1].groups.items():
                h = heads_after.get(k)
                if h is None or (h["startEpoch"], h["sequence"], h["lastTag"]) != (start, sequence, tag.hex()):
                    problems.append(f"key id {k}'s head after the append is not its chain's end")
            if variant == "transaction":
                for other_cred, other_kc in others:
                    who = _describe({"password": other_cred["password"]} if "password" in other_cred
                                    else {"key": other_cred["key"].hex()})
                    try:
                        seen = V3.open_keychain(copy, other_cred)
                    except K.KCFError as e:
                        problems.append(f"{who} cannot open the appended file: {type(e).__name__}: {e}")
                        continue
                    reach = set(v3_groups(other_kc))
                    mine = {e.item_id for e in puts if e.attributes.get("accessGroup", "") in reach}
                    want = (set(other_kc.items) | mine) - ({deleted} if deleted else set())
                    if set(seen.items) != want:
                        problems.append(f"{who} sees {len(seen.items)} items, expected {len(want)}")
                    elif any((seen.items[i].cls, seen.items[i].attributes, seen.items[i].secret)
                             != (other_kc.items[i].cls, other_kc.items[i].attributes, other_kc.items[i].secret)
                             for i in want - mine):
                        problems.append(f"{who}: an item it saw changed")
                    if (seen.head[0], bytes(seen.head[1])) != (after.head[0], bytes(after.head[1])):
                        problems.append(f"{who} reads head {seen.head[0]}, the writer's reader {after.head[0]}")
                    if v3_group_heads(seen) != v3_group_heads(after):
                        problems.append(f"{who} reads other heads")
            if problems:
                out.append(f"writer ({variant}): " + "; ".join(problems))
            else:
                notes.append(variant if variant != "parts" else f"{len(offsets)} parts")
    return "+".join(notes)


def pin_outcome(kcf: str, credential: dict, head: str) -> str:
    """"opens" or "rolledBack": the file opened with the credential, pinning the head (SPEC.md §15.4, §37.5);
    anything else is the error's name (a malformed head: "invalidParameter")."""
    try:
        V3.open_keychain(kcf, credential, pin=head)
        return "opens"
    except V.RolledBack:
        return "rolledBack"
    except V3.InvalidParameter as err:
        return f"invalidParameter ({err.part})"
    except K.KCFError as err:
        return f"{ERROR_NAMES.get(type(err), type(err).__name__)}: {err}"


def check_pins(kcf: str, pins, out: list) -> str:
    """Version 3's optional "pins": [{"credential", "head", "outcome"}], each opened and compared. Returns a short
    summary ("" without pins)."""
    if not isinstance(pins, list) or not pins:
        out.append(f"pins {json.dumps(pins)} is not a non-empty list")
        return ""
    counts = {outcome: 0 for outcome in PIN_OUTCOMES}
    for n, p in enumerate(pins):
        if not isinstance(p, dict) or set(p) != PIN_FIELDS_V3:
            out.append(f"pins[{n}]: fields {sorted(p) if isinstance(p, dict) else p!r}, not {sorted(PIN_FIELDS_V3)}")
            continue
        if p["outcome"] not in PIN_OUTCOMES or not isinstance(p["head"], str):
            out.append(f"pins[{n}]: outcome {p['outcome']!r} or head {p['head']!r} not understood")
            continue
        try:
            credential = credential_of(p)
        except (KeyError, ValueError) as e:
            out.append(f"pins[{n}]: {e}")
            continue
        got = pin_outcome(kcf, credential, p["head"])
        if got != p["outcome"]:
            out.append(f"pins[{n}] ({_describe(p['credential'])}, {p['head'][:24]}…): expected {p['outcome']}, "
                       f"reader {got}")
        else:
            counts[got] += 1
    return "pins " + ", ".join(f"{c} {o}" for o, c in counts.items() if c)


def check_fixture(manifest_path: str) -> tuple:
    """Returns (name, list of mismatches, short summary of what the reader found)."""
    out = []
    with open(manifest_path, encoding="utf-8") as f:
        m = json.load(f)
    name = os.path.basename(manifest_path)[:-5]
    if m.get("name") != name:
        out.append(f"manifest name {m.get('name')!r} differs from the file name")
    version = m.get("formatVersion")
    if version not in (1, 2, 3):
        out.append(f"formatVersion {version!r}")
    unknown = set(m) - (TOP_FIELDS_V3 if version == 3 else TOP_FIELDS)
    if unknown:
        out.append(f"manifest fields not understood: {sorted(unknown)}")
    kcf = manifest_path[:-5] + ".kcf"
    cred = credential_of(m)
    if version != 3:
        kc, found = open_and_check(kcf, cred, m["expect"], version, out)
        if kc is None:
            return name, out, found
        certs = check_certificates(kc, out)
        if certs:
            found += f"; {certs} ok" if not out else f"; {certs}"
        appended = (check_writer_append_v2 if version == 2 else check_writer_append)(kcf, cred, kc, out)
        if appended:
            found += f"; writer appends ({appended}) ok"
        return name, out, found
    # Version 3: the manifest's own credential, then every other one, each checked alike.
    views = [(m["credential"], cred, m.get("scope", "absent"), m["expect"])]
    others = m.get("otherCredentials", [])
    if not isinstance(others, list):
        out.append(f"otherCredentials {json.dumps(others)} is not a list")
        others = []
    for n, o in enumerate(others):
        if not isinstance(o, dict):
            out.append(f"otherCredentials[{n}] is not an object")
            continue
        unknown = set(o) - OTHER_FIELDS_V3
        if unknown:
            out.append(f"otherCredentials[{n}]: fields not understood: {sorted(unknown)}")
        try:
            other = credential_of(o)
        except (KeyError, ValueError) as e:
            out.append(f"otherCredentials[{n}]: {e}")
            continue
        views.append((o["credential"], other, o.get("scope", "absent"), o.get("expect")))
    opened, summaries = [], []
    for n, (credential_json, credential, scope, exp) in enumerate(views):
        problems = []
        kc, found = open_and_check(kcf, credential, exp, 3, problems, scope=scope)
        label = "" if n == 0 else f"otherCredentials[{n - 1}] ({_describe(credential_json)}): "
        out.extend(label + p for p in problems)
        summaries.append(found if n == 0 else f"[{n - 1}] "
                         + (f"{len(kc.items)} items" + (", repaired" if v2_repaired(kc) else "") if kc is not None
                            else found.split(" at ")[0]))
        if kc is not None:
            opened.append((label, credential, kc))
    for label, credential, kc in opened:
        certs = check_certificates(kc, out)
        if certs and not label:
            summaries[0] += f"; {certs}"
    appended = []
    for label, credential, kc in opened:
        problems = []
        notes = check_writer_append_v3(kcf, credential, kc, [(c, k) for _, c, k in opened if c is not credential],
                                       problems)
        out.extend(label + p for p in problems)
        if notes:
            appended.append(notes)
    if "pins" in m:
        summaries[0] += "; " + check_pins(kcf, m["pins"], out)
    found = summaries[0] + ("" if len(summaries) == 1 else "; others: " + ", ".join(summaries[1:]))
    if appended and not out:
        found += "; writer appends (" + ", ".join(f"{appended.count(a)}× {a}" for a in sorted(set(appended))) + ") ok"
    return name, out, found


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--write-reference"]:
        if len(args) != 2:
            print("usage: check_fixtures.py --write-reference DIRECTORY   (a directory named v3 gets version 3's)")
            return 2
        if os.path.basename(os.path.normpath(args[1])) == "v3":
            import reference_fixtures_v3 as writer
            version = 3
        else:
            import reference_fixtures_v2 as writer
            version = 2
        names = writer.write(args[1])
        print(f"wrote {len(names)} reference fixtures (version {version}) to {args[1]}: {', '.join(names)}")
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
