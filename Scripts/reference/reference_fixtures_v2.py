"""Deterministic format version 2 files written by the reference writer, with manifests in the format of
Fixtures/README.md, for the Swift reader to open (Fixtures/v2/reference-*.kcf and .json).

    python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v2

Seeded randomness (random.Random, NOT a CSPRNG), a fixed clock and PBKDF2 with 1,000 rounds — deliberately
insecure, so that conformance runs are fast. Each manifest is computed from what the generator wrote (the
writer's own state after the entries it appended, its head, the offset where it left a remnant), not by
reading the file back.
"""

from __future__ import annotations

import json
import os
import random

import kcf_reference as K
import kcf_reference_v2 as V

PASSWORD = "correct horse battery staple"
PW = {"password": PASSWORD}
RAW_KEY = bytes(range(100, 132))
HERE = os.path.dirname(os.path.abspath(__file__))
CERTIFICATES = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "certificates"))


def _clock():
    values = iter(range(1_767_225_600_000, 1_867_225_600_000, 1000))
    return lambda: next(values)


def _new(seed: int, credentials=None, **options) -> V.Writer:
    return V.Writer.create(None, credentials or [PW], iterations=1000, rng=random.Random(seed), clock=_clock(),
                           **options)


def _value(name, value):
    a = K.ATTRIBUTES_BY_NAME[name]
    return {K.TYPE_NAMES[a.type]: value.hex() if a.type == K.T_BYTES else value}


def _expect(w: V.Writer, *, torn_tail=None, repaired=False) -> dict:
    items = [{"id": iid.hex(), "class": K.CLASS_NAMES[it.cls],
              "attributes": {n: _value(n, v) for n, v in sorted(it.attributes.items())},
              "secret": it.secret.hex()} for iid, it in sorted(w.state.items.items())]
    return {"outcome": "opens", "itemCount": len(items), "items": items,
            "head": {"sequence": w.head[0], "chainValue": w.head[1].hex()},
            "tornTail": torn_tail, "repaired": repaired}


def _certificate_put(w: V.Writer, name: str) -> K.Put:
    import check_fixtures
    with open(os.path.join(CERTIFICATES, name + ".der"), "rb") as f:
        der = f.read()
    fields = check_fixtures.certificate_fields(der)
    attributes = dict(fields, certificateEncoding=3, label=name)
    return w.make_put(K.CERTIFICATE, attributes, der)


def fixtures() -> list:
    """[(name, description, credential for the manifest, bytes, expect)]."""
    out = []

    w = _new(101)
    out.append(("reference-empty", "the reference writer's new file: two header pages, the first commit in slot 1",
                {"password": PASSWORD}, w.data, _expect(w)))

    w = _new(102)
    w.add(K.GENERIC_PASSWORD, {"account": "ann@example.com", "service": "mail.example.com", "label": "Mail",
                               "comment": "caf\u00e9", "generic": b"\xde\xad\xbe\xef", "isInvisible": True},
          b"s3cret!")
    w.add(K.INTERNET_PASSWORD, {"account": "bob", "server": "example.com", "protocol": 0x68747073, "port": 443,
                                "path": "/login", "authenticationType": 0x64666C74}, b"web")
    w.add(K.KEY, {"label": "signing key", "keyClass": 1, "applicationLabel": bytes(range(20)), "keyType": 42,
                  "keySizeInBits": 256, "effectiveKeySize": 256}, bytes(range(32)))
    w.append([_certificate_put(w, "ec-p256-leaf-v3-no-ski")])
    out.append(("reference-classes", "one item of each class, one commit each; the certificate's attributes from "
                "its DER", {"password": PASSWORD}, w.data, _expect(w)))

    w = _new(103)
    ids = [w.add(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc"}, b"secret %d" % n) for n in range(5)]
    w.update(ids[0], {"label": "renamed"}, b"changed")
    w.delete(ids[1])
    with w.transaction() as t:
        t.add(K.GENERIC_PASSWORD, {"account": "in a transaction", "service": "svc"}, b"t")
        t.update(ids[2], {"comment": "updated in a transaction"})
        t.delete(ids[3])
    out.append(("reference-updates-deletions", "five adds, an update, a deletion, then one commit of a put, an "
                "update and a deletion", {"password": PASSWORD}, w.data, _expect(w)))

    w = _new(104, part_limit=700)
    w.add(K.GENERIC_PASSWORD, {"account": "before", "service": "svc"}, b"b")
    with w.transaction() as t:
        for n in range(8):
            t.add(K.GENERIC_PASSWORD, {"account": f"part item {n}", "service": "svc"}, bytes([n]) * 200)
    w.part_limit = V.MAX_BODY
    w.add(K.GENERIC_PASSWORD, {"account": "after", "service": "svc"}, b"a")
    out.append(("reference-transaction-in-parts", "an add, a transaction of eight items written as parts (kind 3, "
                "parts 0 … n − 1, each sealed in a commit slot) and a commit of part n, then an add",
                {"password": PASSWORD}, w.data, _expect(w)))

    w = _new(105)
    for n in range(3):
        w.add(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc"}, b"secret %d" % n)
    end = w.committed_end
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "torn", "service": "svc"}, b"never committed")],
             seal=False)
    out.append(("reference-remnant", "three adds, then a record written without its commit slot (a crash "
                "between steps 1 and 2 of §3): a remnant, not applied", {"password": PASSWORD}, w.data,
                _expect(w, torn_tail={"offset": end, "mayHoldAcknowledgedData": False})))

    w = _new(106, part_limit=700)
    for n in range(3):
        w.add(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc"}, b"secret %d" % n)
    end = w.committed_end
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": f"undone {n}", "service": "svc"}, bytes(200))
              for n in range(8)], cut_after=2)
    out.append(("reference-undone-transaction", "three adds, then two parts of a transaction, each sealed in a "
                "commit slot (E_w past E_c), and no commit: the transaction is undone",
                {"password": PASSWORD}, w.data, _expect(w, torn_tail={"offset": end, "mayHoldAcknowledgedData": False})))

    w = _new(107)
    with w.transaction() as t:
        for n in range(450):
            t.add(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc"}, bytes([n & 0xFF]) * 120)
    for n in range(3):
        w.add(K.GENERIC_PASSWORD, {"account": f"late{n}", "service": "svc"}, b"late")
    three_chunks = w.data
    assert w.committed_end > 2 * V.CHUNK
    out.append(("reference-three-chunks", "450 items in one commit and three adds: a log of three chunks, two "
                "complete with their parity, the last one's parity in the commit slot", {"password": PASSWORD},
                three_chunks, _expect(w)))

    damaged = bytearray(three_chunks)
    start = V.physical(V.CHUNK + 5000)
    damaged[start:start + 4096] = bytes(4096)
    rng = random.Random(108)
    for _ in range(40):
        at = V.physical(rng.randrange(2 * V.CHUNK, w.committed_end))
        damaged[at] ^= 1 << rng.randrange(8)
    out.append(("reference-repaired", "reference-three-chunks with a 4 KiB sector of the second chunk zeroed and "
                "40 bits flipped in the last chunk: repaired by parity (the last chunk's from the commit slot)",
                {"password": PASSWORD}, bytes(damaged), _expect(w, repaired=True)))

    w = _new(109, credentials=[PW, {"key": RAW_KEY}])
    w.add(K.GENERIC_PASSWORD, {"account": "raw", "service": "svc"}, b"by key")
    out.append(("reference-raw-key", "a password slot (PBKDF2) and a raw-key slot (HKDF), opened with the key",
                {"key": RAW_KEY.hex()}, w.data, _expect(w)))
    return out


def _format(value, indent: int = 0) -> str:
    """JSON as Fixtures/v2's manifests lay it out: objects of scalars on one line, the rest one member a line."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return json.dumps(value, sort_keys=True, separators=(", ", ": "))
        inner = ",\n".join(f"{pad}{json.dumps(k)}: {_format(v, indent + 1)}" for k, v in sorted(value.items()))
        return "{\n" + inner + "\n" + "  " * indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + _format(v, indent + 1) for v in value) + "\n" + "  " * indent + "]"
    return json.dumps(value)


def write(directory: str) -> list:
    os.makedirs(directory, exist_ok=True)
    names = []
    for name, description, credential, data, expect in fixtures():
        with open(os.path.join(directory, name + ".kcf"), "wb") as f:
            f.write(data)
        manifest = {"name": name, "formatVersion": 2, "description": description, "credential": credential,
                    "expect": expect}
        with open(os.path.join(directory, name + ".json"), "w", encoding="utf-8") as f:
            f.write(_format(manifest) + "\n")
        names.append(name)
    return names
