"""Deterministic format version 3 files written by the reference writer (kcf_reference_v3.WriterV3), with manifests
in the format of Fixtures/README.md ("Manifests of v3/"), for the Swift reader to open (Fixtures/v3/reference-*.kcf
and .json).

    python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v3

Seeded randomness (random.Random, NOT a CSPRNG), a fixed clock, PBKDF2 with 1,000 rounds and one Argon2id slot at
128 KiB, 2 passes, 2 lanes — deliberately insecure, so that conformance runs are fast.

Each manifest is computed from what the generator wrote, not by reading the file back: the items from a model kept
here of every put and deletion the script made (filtered by the groups a credential reaches), the groups from the
names the script gave, the scopes from the slots it made; the head and every group's head from the state of the
writer that made the last commit (its chain value, its group chains and the other groups' heads it carried), and a
torn tail at the committed end the writer had before it left the remnant.

The files are made with the reference's own primitives: _create is WriterV3.create with the header's groups and
slots chosen here (named groups, scoped slots, an Argon2id slot, a raw-key slot), as header_v3.make_prefix builds
a header; everything after the header is WriterV3's.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random

import header_v3 as H
import kcf_reference as K
import kcf_reference_v2 as V2
import kcf_reference_v3 as V3
import pins_v3 as P
import records_v3 as R
import slots_v3 as S
from reference_fixtures_v2 import _format, _value

PASSWORD = "correct horse battery staple"
PW = {"password": PASSWORD}
MAIL, CHAT = "com.example.mail", "com.example.chat"
MAIL_PW = {"password": "the mail holder's password"}
BOTH_PW = {"password": "mail and chat, under Argon2id"}
RAW_KEY = bytes(range(100, 132))
WRONG = {"password": "not this keychain's password"}
ARGON2ID = (128, 2, 2)                  # memory KiB, passes, lanes: insecure on purpose
ITERATIONS = 1000
HERE = os.path.dirname(os.path.abspath(__file__))
CERTIFICATES = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "certificates"))


def _clock(start: int = 1_767_225_600_000):
    values = iter(range(start, start + 100_000_000_000, 1000))
    return lambda: next(values)


def _credential_json(credential: dict) -> dict:
    return {"key": credential["key"].hex()} if "key" in credential else {"password": credential["password"]}


# ---------------------------------------------------------------------------------------------
# Making a file, and the model of what it holds
# ---------------------------------------------------------------------------------------------

def _create(seed: int, groups: tuple = (), slots: tuple = (), part_limit: int = V2.MAX_BODY) -> V3.WriterV3:
    """A new file as WriterV3.create makes it (header_v3.make_prefix's header, the creation commit naming every group
    at group sequence 0, the header with that commit as its rewrite head), with the key table's groups: the default
    group "" as key id 1, then `groups` as key ids 2, 3, …; and slots: first a full password slot for PW (PBKDF2,
    1,000 iterations), then `slots`, each (credential, scope: None or [group names], argon2id: None or (KiB, passes,
    lanes))."""
    rng = random.Random(seed)
    prng = random.Random(rng.getrandbits(64))
    file_id, salt = prng.randbytes(16), prng.randbytes(32)
    log_key, root = prng.randbytes(32), prng.randbytes(32)
    table = [{"keyID": n + 1, "name": name, "key": prng.randbytes(32)} for n, name in enumerate(("",) + tuple(groups))]
    rho = S.rho_of(root, file_id)
    full = {"logKey": log_key, "rho": rho, "root": root, "groups": []}
    made = [S.make_slot(file_id, PW, ITERATIONS, full, root, prng)]
    for credential, scope, argon2id in slots:
        ks = full if scope is None else {"logKey": log_key, "rho": rho, "root": None,
                                         "groups": [g for g in table if g["name"] in scope]}
        assert scope is None or len(ks["groups"]) == len(scope)
        made.append(S.make_slot(file_id, credential, ITERATIONS, ks, root, prng, argon2id=argon2id))
    sealed = H.seal_table(len(table), table, root, file_id, prng)
    ek = H.epoch_keys(log_key, file_id, 1, salt)
    c0 = H.c0(ek["header"], file_id, 1, salt)
    header = H.build_header(file_id, 1, salt, 0, 0, c0, 90, sealed, made, log_key)
    clock = _clock()
    keys = V3.KeysV3(file_id=file_id, epoch=1, k_header=ek["header"], k_chain=ek["chain"], k_heads=ek["heads"],
                     c0=V3.ChainV3(c0), groups={g["keyID"]: g["key"] for g in table},
                     names={g["keyID"]: g["name"] for g in table}, log_key=log_key, root=root,
                     last_assigned=len(table), chain_starts={})
    w = V3.WriterV3._blank(keys, header, rng=rng, clock=clock, part_limit=part_limit, slot_used=0)
    w.append([])                                            # the creation commit: the heads alone
    w._seal_header(H.build_header(file_id, 1, salt, w.written_end, w.head[0], bytes(w.head[1]), 90, sealed, made,
                                  log_key))
    data = bytes(w.buf)
    kc = V3.open_keychain(data, PW)                         # the writer's state for going on, as create does
    return V3.WriterV3(path=None, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit)


def _holder(data: bytes, credential: dict, seed: int, clock_start: int, part_limit: int = V2.MAX_BODY):
    """A writer opened on `data` with `credential` (WriterV3.open, in memory)."""
    kc = V3.open_keychain(data, credential)
    return V3.WriterV3(path=None, data=data, kc=kc, rng=random.Random(seed), clock=_clock(clock_start),
                       part_limit=part_limit)


class Model:
    """What the keychain holds, from the entries this script appended: item id -> (class, attributes, secret), and
    the group names of its key table."""

    def __init__(self, groups):
        self.items: dict = {}
        self.groups = {""} | set(groups)

    def apply(self, entries: list):
        for e in entries:
            if isinstance(e, K.Put):
                self.items[e.item_id] = (e.cls, dict(e.attributes), bytes(e.secret))
                self.groups.add(e.attributes.get("accessGroup") or "")
            else:
                del self.items[e.item_id]

    def base(self, item_id: bytes) -> K.Item:
        cls, attributes, secret = self.items[item_id]
        return K.Item(item_id, cls, dict(attributes), secret)


def commit(w: V3.WriterV3, model: Model, entries: list, **options) -> list:
    """Appends the entries as one batch (one commit, or parts and a commit) and, when it commits, applies them to the
    model."""
    offsets = w.append(entries, **options)
    if options.get("seal", True) and options.get("cut_after") is None:
        model.apply(entries)
    return offsets


def put(w, model, cls, attributes: dict, secret: bytes, group: str = "") -> bytes:
    p = w.make_put(cls, dict(attributes, accessGroup=group), secret)
    commit(w, model, [p])
    return p.item_id


def updated(w, model, item_id: bytes, attributes: dict, secret=None) -> K.Put:
    """A put updating item_id (its group changed when attributes name another accessGroup: a move)."""
    base = model.base(item_id)
    return w.make_put(base.cls, attributes, base.secret if secret is None else secret, base=base)


def certificate_put(w, name: str, group: str) -> K.Put:
    import check_fixtures
    with open(os.path.join(CERTIFICATES, name + ".der"), "rb") as f:
        der = f.read()
    attributes = dict(check_fixtures.certificate_fields(der), certificateEncoding=3, label=name, accessGroup=group)
    return w.make_put(K.CERTIFICATE, attributes, der)


# ---------------------------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------------------------

def group_heads(w: V3.WriterV3) -> list:
    """Every group's head as the writer's last commit stated it (§35.7): the groups it holds at the ends of their
    chains (group sequence 0 with the start value for one without a page), the others (a scoped writer) as it
    carried them."""
    held = {k: w.keys.group_chain(w.head[1], k) for k in w.keys.groups}
    heads = {**w.head[1].others, **held}
    return [{"keyID": k, "startEpoch": s, "sequence": q, "lastTag": t.hex()} for k, (s, q, t) in sorted(heads.items())]


def expect(model: Model, w: V3.WriterV3, scope=None, *, torn_tail=None, repaired=False) -> dict:
    reach = set(model.groups) if scope is None else set(scope)
    items = [{"id": iid.hex(), "class": K.CLASS_NAMES[cls],
              "attributes": {n: _value(n, v) for n, v in sorted(attributes.items())}, "secret": secret.hex()}
             for iid, (cls, attributes, secret) in sorted(model.items.items())
             if (attributes.get("accessGroup") or "") in reach]
    return {"outcome": "opens", "itemCount": len(items), "items": items,
            "head": {"sequence": w.head[0], "chainValue": bytes(w.head[1]).hex()},
            "tornTail": torn_tail, "repaired": repaired, "groups": sorted(reach), "groupHeads": group_heads(w)}


def view(credential: dict, scope, model: Model, w, **options) -> dict:
    return {"credential": _credential_json(credential), "scope": None if scope is None else sorted(scope),
            "expect": expect(model, w, scope, **options)}


def refused(credential: dict) -> dict:
    return {"credential": _credential_json(credential), "scope": None,
            "expect": {"outcome": "fails", "error": "wrongCredentials"}}


def manifest(name: str, description: str, main: dict, others: list) -> dict:
    m = {"name": name, "formatVersion": 3, "description": description, **main}
    if others:
        m["otherCredentials"] = others
    return m


# ---------------------------------------------------------------------------------------------
# The fixtures
# ---------------------------------------------------------------------------------------------

SLOTS = ((MAIL_PW, [MAIL], None), (BOTH_PW, [MAIL, CHAT], ARGON2ID), ({"key": RAW_KEY}, None, None))
CHAT_PW = {"password": "the chat holder's password"}
SLOTS_WITH_B = SLOTS + ((CHAT_PW, [CHAT], None),)            # and a holder of K_B alone (more_forged_fixtures)


def groups_file(seed: int, *, many: bool = True, part_limit: int = V2.MAX_BODY, slots: tuple = SLOTS) -> tuple:
    """The default group, MAIL and CHAT (key ids 1, 2, 3); slots: the full password, MAIL_PW scoped to MAIL, BOTH_PW
    (Argon2id) scoped to MAIL and CHAT, a raw key reaching everything. Items of every class across the groups, an
    update and a deletion in each group, a move from MAIL to CHAT, and a transaction across the three groups.
    Returns (writer, model, {name: [item ids]}). slots: SLOTS_WITH_B adds a password scoped to CHAT alone."""
    w = _create(seed, (MAIL, CHAT), slots, part_limit=part_limit)
    model = Model((MAIL, CHAT))
    ids = {"": [], MAIL: [], CHAT: []}
    ids[""].append(put(w, model, K.GENERIC_PASSWORD, {
        "account": "ann@example.com", "service": "mail.example.com", "label": "Mail", "comment": "caf\u00e9",
        "generic": b"\xde\xad\xbe\xef", "isInvisible": True}, b"s3cret!"))
    ids[""].append(put(w, model, K.INTERNET_PASSWORD, {
        "account": "bob", "server": "example.com", "protocol": 0x68747073, "port": 443, "path": "/login",
        "authenticationType": 0x64666C74}, b"web"))
    ids[MAIL].append(put(w, model, K.GENERIC_PASSWORD, {"account": "mail user", "service": "imap.example.com"},
                         b"imap secret", MAIL))
    ids[MAIL].append(put(w, model, K.KEY, {"label": "signing key", "keyClass": 1, "applicationLabel": bytes(range(20)),
                                           "keyType": 42, "keySizeInBits": 256, "effectiveKeySize": 256},
                         bytes(range(32)), MAIL))
    p = certificate_put(w, "ec-p256-leaf-v3-no-ski", CHAT)
    commit(w, model, [p])
    ids[CHAT].append(p.item_id)
    ids[CHAT].append(put(w, model, K.GENERIC_PASSWORD, {"account": "chat user", "service": "chat.example.com"},
                         b"chat secret", CHAT))
    if many:
        for g in ("", MAIL, CHAT):
            ids[g].append(put(w, model, K.GENERIC_PASSWORD, {"account": f"doomed in {g or 'default'}",
                                                             "service": "svc"}, b"deleted later", g))
        for g in ("", MAIL, CHAT):                              # an update in each (the certificate keeps its DER)
            commit(w, model, [updated(w, model, ids[g][0], {"label": f"updated in {g or 'the default group'}"},
                                      None if g == CHAT else b"changed in " + g.encode())])
        for g in ("", MAIL, CHAT):                              # a deletion in each group
            commit(w, model, [K.Delete(ids[g].pop())])
        moved = ids[MAIL][0]                                    # a move: MAIL -> CHAT (deleted in MAIL's page first)
        commit(w, model, [updated(w, model, moved, {"accessGroup": CHAT, "label": "moved to chat"})])
        ids[MAIL].remove(moved)
        ids[CHAT].append(moved)
    entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"in a transaction ({g or 'default'})", "service": "tx",
                                               "accessGroup": g}, b"t" + g.encode()) for g in (CHAT, "", MAIL)]
    if many:
        entries.append(updated(w, model, ids[""][1], {"label": "updated in a transaction"}))
        entries.append(K.Delete(ids[CHAT][1]))                 # "chat user"; the moved item stays
    commit(w, model, entries)
    for e in entries:
        if isinstance(e, K.Put) and e.item_id not in sum(ids.values(), []):
            ids[e.attributes["accessGroup"]].append(e.item_id)
        elif isinstance(e, K.Delete):
            ids[CHAT].remove(e.item_id)
    return w, model, ids


def standard_others(model, w, *, include=("mail", "both", "raw", "wrong"), **options) -> list:
    out = []
    if "mail" in include:
        out.append(view(MAIL_PW, [MAIL], model, w, **options))
    if "both" in include:
        out.append(view(BOTH_PW, [MAIL, CHAT], model, w, **options))
    if "raw" in include:
        out.append(view({"key": RAW_KEY}, None, model, w, **options))
    if "wrong" in include:
        out.append(refused(WRONG))
    return out


def fixtures() -> list:
    """[(name, manifest, bytes)]."""
    out = []

    w = _create(301)
    model = Model(())
    out.append(("reference-empty", manifest(
        "reference-empty", "the reference writer's new file: its creation commit alone, naming the default group at "
        "group sequence 0 with its start value", view(PW, None, model, w), []), w.data))

    w, model, _ = groups_file(302)
    out.append(("reference-groups", manifest(
        "reference-groups", f"the default group, {MAIL} and {CHAT} (key ids 1, 2, 3): every class of item, an update "
        f"and a deletion in each group, a move from {MAIL} to {CHAT}, a transaction across the three; slots: the full "
        f"password, one scoped to {MAIL}, one (Argon2id, 128 KiB, 2 passes, 2 lanes) scoped to both named groups, a "
        f"raw key reaching everything", view(PW, None, model, w), standard_others(model, w)), w.data))

    w, model, ids = groups_file(303, many=False)
    a = _holder(w.data, MAIL_PW, 3031, 1_800_000_000_000, part_limit=700)
    added = put(a, model, K.GENERIC_PASSWORD, {"account": "added by the mail holder", "service": "s"}, b"new", MAIL)
    commit(a, model, [updated(a, model, ids[MAIL][0], {"label": "changed by the mail holder"}, b"changed")])
    commit(a, model, [K.Delete(ids[MAIL][1])])
    commit(a, model, [a.make_put(K.GENERIC_PASSWORD, {"account": f"part item {n}", "service": "parts",
                                                      "accessGroup": MAIL}, bytes([n]) * 200) for n in range(6)]
           + [K.Delete(added)])
    b = _holder(a.data, BOTH_PW, 3032, 1_810_000_000_000)
    commit(b, model, [b.make_put(K.GENERIC_PASSWORD, {"account": f"from the mail and chat holder ({g})",
                                                      "service": "s", "accessGroup": g}, b"both")
                      for g in (CHAT, MAIL)])
    out.append(("reference-scoped-writes", manifest(
        "reference-scoped-writes", f"reference-groups' start (no updates), then the holder of a password scoped to "
        f"{MAIL} adds, updates, deletes and writes a transaction of six items and a deletion in parts; then the "
        f"Argon2id holder of both named groups adds one item in each in one commit. Opened with the {MAIL} password",
        view(MAIL_PW, [MAIL], model, b),
        [view(PW, None, model, b), view(BOTH_PW, [MAIL, CHAT], model, b), view({"key": RAW_KEY}, None, model, b),
         refused(WRONG)]), b.data))

    w, model, ids = groups_file(304)
    a = _holder(w.data, MAIL_PW, 3041, 1_800_000_000_000)
    commit(a, model, [K.Delete(ids[MAIL][0])])
    a.compact()
    put(a, model, K.GENERIC_PASSWORD, {"account": "after the scoped compaction", "service": "s"}, b"after", MAIL)
    f = _holder(a.data, PW, 3042, 1_810_000_000_000)
    put(f, model, K.GENERIC_PASSWORD, {"account": "the full holder after it", "service": "s"}, b"full", CHAT)
    out.append(("reference-scoped-compaction", manifest(
        "reference-scoped-compaction", f"reference-groups, then the {MAIL} holder deletes an item and compacts "
        f"(epoch 2): the default group's and {CHAT}'s segments copied byte for byte (their chain starts at epoch 1 in "
        f"the header), {MAIL} written anew; then that holder adds an item, and the full holder one in {CHAT}",
        view(PW, None, model, f), standard_others(model, f)), f.data))

    w, model, ids = groups_file(305)
    commit(w, model, [K.Delete(ids[""][0]), K.Delete(ids[CHAT][0])])
    w.compact()
    for g in ("", MAIL, CHAT):
        put(w, model, K.GENERIC_PASSWORD, {"account": f"after the compaction ({g or 'default'})", "service": "s"},
            b"after", g)
    commit(w, model, [updated(w, model, ids[MAIL][0], {"label": "updated after the compaction"}),
                      w.make_put(K.GENERIC_PASSWORD, {"account": "last", "service": "s", "accessGroup": CHAT}, b"l")])
    out.append(("reference-full-compaction", manifest(
        "reference-full-compaction", "reference-groups, then two deletions, a full compaction (epoch 2: every group "
        "written anew, no chain starts), then an add in each group and a commit updating one item and adding one",
        view(PW, None, model, w), standard_others(model, w, include=("mail", "both"))), w.data))

    w, model, ids = groups_file(306, many=False, part_limit=700)
    with_parts = [w.make_put(K.GENERIC_PASSWORD, {"account": f"part item {n}", "service": "svc",
                                                  "accessGroup": ("", MAIL, CHAT)[n % 3]}, bytes([n]) * 200)
                  for n in range(8)] + [K.Delete(ids[MAIL][0])]
    assert len(commit(w, model, with_parts)) > 2
    w.part_limit = V2.MAX_BODY
    put(w, model, K.GENERIC_PASSWORD, {"account": "after", "service": "svc"}, b"a", CHAT)
    out.append(("reference-transaction-in-parts", manifest(
        "reference-transaction-in-parts", "reference-groups' start (no updates), then a transaction of eight items "
        "across the three groups and a deletion, written as parts (kind 3, each sealed in a commit slot) and a commit "
        "whose heads state every group's pages; then an add", view(PW, None, model, w),
        standard_others(model, w, include=("mail", "both"))), w.data))

    w, model, ids = groups_file(307, many=False)
    end = w.committed_end
    commit(w, model, [w.make_put(K.GENERIC_PASSWORD, {"account": "torn", "service": "svc", "accessGroup": MAIL},
                                 b"never committed")], seal=False)
    torn = {"offset": end, "mayHoldAcknowledgedData": False}
    out.append(("reference-remnant", manifest(
        "reference-remnant", f"reference-groups' start, then a record in {MAIL} written without its commit slot (a "
        "crash between steps 1 and 2 of SPEC.md §26): a remnant, not applied",
        view(PW, None, model, w, torn_tail=torn),
        standard_others(model, w, include=("mail",), torn_tail=torn)), w.data))

    w, model, ids = groups_file(308, many=False, part_limit=700)
    end = w.committed_end
    commit(w, model, [w.make_put(K.GENERIC_PASSWORD, {"account": f"undone {n}", "service": "svc",
                                                      "accessGroup": (MAIL, CHAT)[n % 2]}, bytes(200))
                      for n in range(8)], cut_after=2)
    torn = {"offset": end, "mayHoldAcknowledgedData": False}
    out.append(("reference-undone-transaction", manifest(
        "reference-undone-transaction", "reference-groups' start, then two parts of a transaction in the named groups, "
        "each sealed in a commit slot, and no commit: the transaction is undone",
        view(PW, None, model, w, torn_tail=torn), standard_others(model, w, include=("both",), torn_tail=torn)),
        w.data))

    w = _create(309, (MAIL, CHAT), SLOTS)
    model = Model((MAIL, CHAT))
    commit(w, model, [w.make_put(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc",
                                                      "accessGroup": ("", MAIL, CHAT)[n % 3]}, bytes([n & 0xFF]) * 120)
                      for n in range(450)])
    for n, g in enumerate(("", MAIL, CHAT)):
        put(w, model, K.GENERIC_PASSWORD, {"account": f"late{n}", "service": "svc"}, b"late", g)
    three_chunks = w.data
    assert w.committed_end > 2 * V2.CHUNK
    out.append(("reference-three-chunks", manifest(
        "reference-three-chunks", "450 items across the three groups in one commit and an add in each: a log of three "
        "chunks, two complete with their parity, the last one's parity in the commit slot",
        view(PW, None, model, w), standard_others(model, w, include=("mail",))), three_chunks))

    damaged = bytearray(three_chunks)
    physical = w.layout.physical
    start = physical(V2.CHUNK + 5000)
    damaged[start:start + 4096] = bytes(4096)
    rng = random.Random(310)
    for _ in range(40):
        at = physical(rng.randrange(2 * V2.CHUNK, w.committed_end))
        damaged[at] ^= 1 << rng.randrange(8)
    out.append(("reference-repaired", manifest(
        "reference-repaired", "reference-three-chunks with a 4 KiB sector of the second chunk zeroed and 40 bits "
        "flipped in the last chunk: repaired by parity (the last chunk's from the commit slot), for every credential",
        view(PW, None, model, w, repaired=True), standard_others(model, w, include=("mail",), repaired=True)),
        bytes(damaged)))

    w = _create(311, (MAIL,), ((MAIL_PW, [MAIL], None),))
    model = Model((MAIL,))
    put(w, model, K.GENERIC_PASSWORD, {"account": "in the default group", "service": "s"}, b"d")
    put(w, model, K.GENERIC_PASSWORD, {"account": "in mail", "service": "s"}, b"m", MAIL)
    put(w, model, K.GENERIC_PASSWORD, {"account": "in a new group", "service": "s"}, b"c", CHAT)   # adds CHAT
    a = _holder(w.data, MAIL_PW, 3111, 1_800_000_000_000)
    put(a, model, K.GENERIC_PASSWORD, {"account": "the mail holder after the new group", "service": "s"}, b"a", MAIL)
    out.append(("reference-group-added", manifest(
        "reference-group-added", f"the default group and {MAIL} with a password scoped to {MAIL}; then the full holder "
        f"adds an item in {CHAT}, a group the key table lacks: key id 3 added by a rewrite (epoch 2) under a new root, "
        f"every slot granted its keys anew; then the {MAIL} holder, opening through its grant, adds an item",
        view(PW, None, model, a), [view(MAIL_PW, [MAIL], model, a), refused(WRONG)]), a.data))
    out.extend(forged_fixtures())
    out.extend(more_forged_fixtures())
    out.extend(pinned_fixtures())
    return out


# ---------------------------------------------------------------------------------------------
# Forged by a K_log holder (SPEC.md §35.9 steps 4 – 7, §37.2 – §37.4, §40)
# ---------------------------------------------------------------------------------------------
#
# Every credential of SLOTS holds K_log, so each of these files could have been written by the holder of the password
# scoped to MAIL alone (A): records re-tagged under K_chain, heads re-sealed under K_heads, the header re-MACed under
# K_header — all derived from K_log — with no group key used for anything forged. CHAT (key id 3) is "B"; the
# Argon2id password BOTH_PW holds K_CHAT (B's holder); MAIL_PW holds K_log and K_MAIL but not K_CHAT (a scoped holder of
# another group, A). Each forged record is followed by a later honest commit, so it lies below the newest commit's
# last write: `corrupted` at its record, never set aside (§35.9's last paragraph, §37.2).

B_KEY_ID = 3                                     # CHAT in groups_file's key table


def _segments(record: bytes) -> tuple:
    frame = R.split(record)
    return frame, [record[s["start"]:s["secrets"][1]] for s in frame["segments"]]


def _reseal_heads(segments: list, frame: dict, keys, change) -> list:
    """The commit's heads opened with K_heads, change(heads) applied, sealed again (a K_log holder can)."""
    heads = R.open_heads(segments[-1][R.SEGMENT_HEADER:], 0, keys.k_heads, keys.file_id, keys.epoch,
                         frame["sequence"])
    change(heads)
    box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, frame["sequence"]),
                 random.Random(frame["sequence"]))
    return segments[:-1] + [R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box]


def _once(w: V3.WriterV3, change):
    """w's next record goes through change(record, previous chain tag, keys), re-tagged by it under K_chain."""
    def tamper(record, previous, keys):
        w.tamper = None
        frame, segments = _segments(record)
        segments = change(frame, segments, keys)
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    w.tamper = tamper


def _drop_first_b_page(frame, segments, keys):
    of_b = [i for i, s in enumerate(frame["segments"]) if s["keyID"] == B_KEY_ID]
    assert len(of_b) == 2, of_b                  # the commit holds two of B's pages: the first goes
    del segments[of_b[0]]
    return segments


def _log_records(w: V3.WriterV3) -> list:
    """(log offset, end, kind, key ids of its segments) of every record up to the committed end, walked here by the
    frames' lengths (§35.1) over the logical log — no key, no reader."""
    log = bytes(w.buf[w.layout.physical(i)] for i in range(w.committed_end))
    out, at = [], 0
    while at < len(log):
        end = at + 8 + R.rd32(log, at)
        frame = R.split(log[at:end])
        out.append((at, end, frame["kind"], [s["keyID"] for s in frame["segments"]]))
        at = end
    return out


def _reheader(w: V3.WriterV3, **changes) -> bytes:
    """w's file with both header runs replaced by its header with `changes` (build_header's arguments), MAC and
    checksum made again under the epoch's K_header (from K_log)."""
    raw = w.header.raw
    ph = H.parse_header(raw)
    fields = dict(file_id=ph["fileID"], epoch=ph["epoch"], salt=ph["salt"], rewrite_end=ph["rewriteEnd"],
                  head_sequence=R.rd64(raw, 80), head_chain=ph["headChain"], horizon_days=R.rd32(raw, 104),
                  table=ph["table"], slots=[b for _, b, _ in ph["slots"]], log_key=w.keys.log_key,
                  chain_starts=tuple(ph["chainStarts"]))
    fields.update(changes)
    header = H.build_header(**fields)
    n = H.page_count(len(header))
    assert n == w.page_count
    run = H.run_of(header)
    data = bytearray(w.buf)
    data[0:len(run)] = run
    data[H.run_b_offset(n):H.run_b_offset(n) + len(run)] = run
    return bytes(data)


def corrupted(credential: dict, where=None) -> dict:
    exp = {"outcome": "fails", "error": "corrupted"}
    if where is not None:
        exp["errorOffsetRange"] = list(where)
    return {"credential": _credential_json(credential), "scope": None, "expect": exp}


def two_b_pages(w: V3.WriterV3, model: Model):
    """A commit of two CHAT items that do not fit one page (8,192 plaintext bytes): two segments of B."""
    commit(w, model, [w.make_put(K.GENERIC_PASSWORD, {"account": f"b page {n}", "service": "s", "label": c * 5000,
                                                      "accessGroup": CHAT}, c.encode()) for n, c in enumerate("xy")])


def forged_fixtures() -> list:
    out = []
    who = (f"B = {CHAT} (key id 3); full = the full password; B's holder = the Argon2id password scoped to {MAIL} and "
           f"{CHAT} (holds K_B); A's holder = the password scoped to {MAIL} (holds K_log, not K_B). Forged with K_log "
           f"alone (chain tags under K_chain, heads under K_heads, header MAC under K_header), as A's holder could")

    # 1. One of B's pages dropped, B's head left as it was.
    w, model, _ = groups_file(312, many=False)
    x = w.written_end
    _once(w, _drop_first_b_page)
    two_b_pages(w, model)
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = [x, x_end]
    out.append(("reference-forged-dropped-page", manifest(
        "reference-forged-dropped-page", f"{who}. A commit at log offset {x} held two of B's pages; the first was "
        f"removed and the chain tag made again, B's head left as written (naming both pages); then an honest commit "
        f"in {MAIL} acknowledges it. Full and B's holders: B's remaining page does not open as the next page of B's "
        f"chain (§35.5, §35.9 step 5; §40 row 'drop': corrupted, naming the key id). A's holder: B's head names "
        f"one page more than B has segments so far (§35.9 step 7, §37.4: count and last tag). Every refusal is "
        f"corrupted at that record (log offsets, [{x}, {x_end})), not set aside: a later commit follows it (§35.9, "
        f"§37.2)", corrupted(PW, at), [corrupted(BOTH_PW, at), corrupted(MAIL_PW, at), refused(WRONG)]), w.data))

    # 2. As 1, with B's head made to agree with what is left (count one less, the remaining last page's tag).
    w, model, _ = groups_file(313, many=False)
    x = w.written_end

    def drop_and_fix(frame, segments, keys):
        segments = _drop_first_b_page(frame, segments, keys)
        return _reseal_heads(segments, frame, keys,
                             lambda heads: heads[B_KEY_ID].update(groupSequence=heads[B_KEY_ID]["groupSequence"] - 1))
    _once(w, drop_and_fix)
    two_b_pages(w, model)
    x_end = w.written_end
    honest_b = w.keys.group_chain(w.head[1], B_KEY_ID)            # (start, sequence, tag) had nothing been dropped
    a = _holder(w.data, MAIL_PW, 3131, 1_800_000_000_000)
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after the forgery", "service": "s"}, b"a", MAIL)
    assert a.head[1].others[B_KEY_ID] == (honest_b[0], honest_b[1] - 1, honest_b[2]), a.head[1].others
    at = [x, x_end]
    out.append(("reference-forged-dropped-page-head-fixed", manifest(
        "reference-forged-dropped-page-head-fixed", f"{who}. A commit at log offset {x} held two of B's pages; the "
        f"first was removed, B's head in that commit re-sealed one page shorter (its last tag, the remaining page's, "
        f"unchanged) and the chain tag made again; then A's holder appends to {MAIL}, carrying B's head as that "
        f"commit stated it. Full and B's holders: B's remaining page does not open as the next page of B's chain "
        f"(§35.9 step 5): corrupted at that record ([{x}, {x_end}), below the newest commit). A's holder opens: B's "
        f"head names as many pages as B has segments, and the last one's tag (§37.4), and only K_B shows the chain "
        f"broken (§40 row 'drop': 'A holds K_heads and can make B's head agree with the count and tag it left, which "
        f"only K_B's holders then see through')", corrupted(PW, at),
        [corrupted(BOTH_PW, at), view(MAIL_PW, [MAIL], model, a), refused(WRONG)]), a.data))

    # 3. A commit whose heads leave B out.
    w, model, _ = groups_file(314, many=False)
    x = w.written_end
    _once(w, lambda frame, segments, keys: _reseal_heads(segments, frame, keys,
                                                         lambda heads: heads.pop(B_KEY_ID)))
    put(w, model, K.GENERIC_PASSWORD, {"account": "its heads leave B out", "service": "s"}, b"x", MAIL)
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = [x, x_end]
    out.append(("reference-forged-heads-without-group", manifest(
        "reference-forged-heads-without-group", f"{who}. A commit at log offset {x} (a put in {MAIL}) whose heads "
        f"were re-sealed without B's head, the chain tag made again; then an honest commit. Every commit names every "
        f"group (§35.7). Full and B's holders: a followed group the heads do not name (§35.9 step 6, §37.2). A's "
        f"holder: B has segments so far but no head (§35.9 step 7, §37.4). Each corrupted at that record "
        f"([{x}, {x_end}), below the newest commit)", corrupted(PW, at),
        [corrupted(BOTH_PW, at), corrupted(MAIL_PW, at), refused(WRONG)]), w.data))

    # 4. A chain start entry naming a wrong start epoch for B (the header re-MACed).
    w, model, _ = groups_file(315, many=False)
    w.compact()                                                     # epoch 2, written whole: c = 0
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the compaction", "service": "s"}, b"after", MAIL)
    records = _log_records(w)
    first_b = next((s, e) for s, e, kind, ids in records if B_KEY_ID in ids)
    c = next(i for i, r in enumerate(records) if r[2] == V2.KIND_COMMIT)
    first_commit = records[c][:2]
    transaction = (records[0][0], first_commit[1])   # the rewrite's parts and its commit: one transaction
    assert all(r[2] == V2.KIND_PART for r in records[:c]) and transaction[0] <= first_b[0] < transaction[1]
    assert w.keys.epoch == 2 and records[-1][0] >= transaction[1]
    data = _reheader(w, chain_starts=((B_KEY_ID, 1),))
    out.append(("reference-forged-chain-start-epoch", manifest(
        "reference-forged-chain-start-epoch", f"{who}. A full compaction (epoch 2, every group written anew, no "
        f"chain start entry), then a put; then the header (both runs) given a chain start entry (key id 3, start "
        f"epoch 1) and its MAC and checksum made again. Full and B's holders: B's page 1 is sealed after B's start "
        f"value for epoch 2, so it does not open after epoch 1's (§31.2, §35.5, §35.9 step 5), the record at log "
        f"offset {first_b[0]}. A's holder: the rewrite's commit (log offset {first_commit[0]}) states B's head at "
        f"start epoch 2, the header's start epoch for B is 1 (§35.9 step 7, §37.4; §40 row 'restart B's chain'). "
        f"Both records are of the rewrite's transaction (parts and its commit, [{transaction[0]}, {transaction[1]})), "
        f"below the newest commit: corrupted at the offset where the replay stopped, the record's or its "
        f"transaction's first part's (§25.4, §37.2); the range spans the transaction, as readers may name "
        f"different bytes (§30.3)",
        corrupted(PW, transaction), [corrupted(BOTH_PW, transaction), corrupted(MAIL_PW, transaction),
                                     refused(WRONG)]),
        data))

    # 5. A chain start entry of a key id the key table lacks.
    w, model, _ = groups_file(316, many=False)
    w.compact()
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the compaction", "service": "s"}, b"after", MAIL)
    data = _reheader(w, chain_starts=((9, 1),))
    out.append(("reference-forged-chain-start-unknown-key-id", manifest(
        "reference-forged-chain-start-unknown-key-id", f"{who}. A full compaction (epoch 2), a put, then the header "
        f"(both runs) given a chain start entry for key id 9 (start epoch 1), which the key table (key ids 1 … 3) "
        f"lacks, and its MAC and checksum made again. Full holder: §31.2 'A reader holding the whole key table MUST "
        f"refuse an entry of a key id the table lacks (corrupted(109))'. Scoped holders (B's and A's) open as before "
        f"the forgery: they refuse no chain start entry of a key id they do not hold (§37.3), key id 9 has no segment "
        f"or head and no commit names it, so §37.4 asks nothing of it, and an entry naming a group without segments "
        f"is accepted (§31.2)", corrupted(PW, (109, 110)),
        [view(BOTH_PW, [MAIL, CHAT], model, w), view(MAIL_PW, [MAIL], model, w), refused(WRONG)]), data))

    # 6. A header whose rewrite head sequence is 0.
    w, model, _ = groups_file(317, many=False)
    data = _reheader(w, rewrite_end=0, head_sequence=0, head_chain=bytes(w.keys.c0))
    out.append(("reference-forged-rewrite-head-zero", manifest(
        "reference-forged-rewrite-head-zero", f"{who}. reference-groups' start (no updates), then the header (both "
        f"runs) given rewrite end 0, rewrite head sequence 0 and the head chain value C0 (so the copy reads and "
        f"verifies, §31.1), MAC and checksum made again: a header claiming a log of no commit, which would let a "
        f"K_log holder drop every group. §31.1, §35.7: once the copy is chosen, a rewrite head sequence of 0 is "
        f"corrupted(80), for every credential that opens a slot", corrupted(PW, (80, 81)),
        [corrupted(BOTH_PW, (80, 81)), corrupted(MAIL_PW, (80, 81)), refused(WRONG)]), data))
    return out


# ---------------------------------------------------------------------------------------------
# More forgeries (review-s53 §4's table of missing conformance cases), each in a file of SLOTS_WITH_B
# ---------------------------------------------------------------------------------------------
#
# As above, A = MAIL (key id 2), B = CHAT (key id 3). Five credentials each: the full password; BOTH_PW, scoped to
# MAIL and CHAT (holds K_A and K_B); MAIL_PW, scoped to MAIL (A's holder: K_log and K_A, not K_B); CHAT_PW, scoped
# to CHAT (B's holder alone: K_log and K_B, not K_A); a wrong password. Every expected outcome is taken from SPEC.md's
# text (the section is named in the description); a forged record is followed by a later commit, so it lies below the
# newest commit's last write and is corrupted, not set aside (§35.9's last paragraph, §37.2).

SCOPES = {PW["password"]: None, BOTH_PW["password"]: [MAIL, CHAT], MAIL_PW["password"]: [MAIL],
          CHAT_PW["password"]: [CHAT]}
WHO_MORE = (f"A = {MAIL} (key id 2), B = {CHAT} (key id 3). Credentials: the full password; the Argon2id password "
            f"scoped to A and B (holds K_A and K_B); A's holder, the password scoped to A (K_log and K_A, not K_B); "
            f"B's holder, the password scoped to B (K_log and K_B, not K_A); a wrong password")


def _expectations(model: Model, w, full, both, mail, chat, **options) -> tuple:
    """(the full password's view, [the others']) for a manifest: each of full, both, mail, chat is "opens" (the view
    of the model and w's last commit, in that credential's groups; options as expect's) or ("corrupted", range or
    None)."""
    def one(credential, what):
        if what == "opens":
            return view(credential, SCOPES[credential["password"]], model, w, **options)
        assert what[0] == "corrupted"
        return corrupted(credential, what[1])
    return one(PW, full), [one(BOTH_PW, both), one(MAIL_PW, mail), one(CHAT_PW, chat), refused(WRONG)]


def _more(name: str, text: str, model: Model, w, data: bytes, **outcomes) -> tuple:
    main, others = _expectations(model, w, **outcomes)
    return name, manifest(name, f"{WHO_MORE}. {text}", main, others), data


def _of(frame: dict, key_id: int) -> list:
    return [i for i, s in enumerate(frame["segments"]) if s["keyID"] == key_id]


def b_pages(w: V3.WriterV3, model: Model, letters: str) -> list:
    """A commit of one CHAT item per letter, each too large to share a page (8,192 plaintext bytes): one segment of B
    per item. Returns the puts."""
    puts = [w.make_put(K.GENERIC_PASSWORD, {"account": f"b page {n}", "service": "s", "label": c * 5000,
                                            "accessGroup": CHAT}, c.encode()) for n, c in enumerate(letters)]
    commit(w, model, puts)
    return puts


def _log_bytes(w: V3.WriterV3) -> bytes:
    return bytes(w.buf[w.layout.physical(i)] for i in range(w.written_end))


class _SealedWith:
    """For one `with`, records_v3.group_segment replaced by one that pads the plaintext with `padding(plaintext of
    the entries)` instead of zeros up to padded(U): a page a holder of its group key seals wrongly."""

    def __init__(self, padding):
        self.padding = padding

    def __enter__(self):
        self.saved = R.group_segment
        padding = self.padding

        def group_segment(keys, entries, group_sequence, previous_tag, rng):
            plain, boxes = R.u8(R.PAGE_ENCODING) + R.u16(len(entries)), b""
            for entry in entries:
                encoded, box = R.entry_bytes(entry, keys.file_id, keys, rng)
                plain += encoded
                boxes += box
            plain = padding(plain)
            page = R.seal(keys.page, plain, R.page_aad(keys.file_id, keys.key_id, group_sequence, previous_tag), rng)
            return R.u8(keys.key_id) + R.u32(len(page) + len(boxes)) + R.u32(len(page)) + page + boxes
        R.group_segment = group_segment

    def __exit__(self, *exc):
        R.group_segment = self.saved


def _with_run_b(data: bytes, header: bytes) -> bytes:
    """data with run B replaced by the run of `header` (same page count)."""
    n = H.page_count(len(header))
    run = H.run_of(header)
    assert H.page_count(R.rd32(data, 12)) == n                     # run A's header length: the same page count
    out = bytearray(data)
    out[H.run_b_offset(n):H.run_b_offset(n) + len(run)] = run
    return bytes(out)


def _with_checksum(header: bytes) -> bytes:
    """header with its checksum made again over the bytes before it (the MAC left as it is)."""
    return header[:-16] + hashlib.sha256(header[:-16]).digest()[:16]


def more_forged_fixtures() -> list:
    out = []

    # Row 4: two of B's pages swapped, B's last page not moved.
    w, model, _ = groups_file(321, many=False, slots=SLOTS_WITH_B)
    x = w.written_end

    def swap(frame, segments, keys):
        of_b = _of(frame, B_KEY_ID)
        assert len(of_b) == 3, of_b
        segments[of_b[0]], segments[of_b[1]] = segments[of_b[1]], segments[of_b[0]]
        return segments
    _once(w, swap)
    b_pages(w, model, "xyz")
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-pages-swapped", f"A commit at log offset {x} held three of B's pages; the first two were "
        f"swapped and the chain tag made again; B's head (three pages, the third's tag) left as written, which still "
        f"matches; then an honest commit in A. Holders of K_B (full, A and B's, B's): B's first segment there does not "
        f"open as the next page of B's chain (§35.5: group sequence and previous tag are in the page's associated "
        f"data; §35.9 step 5: 'A page dropped, repeated, reordered ... does not authenticate there'; §40 row "
        f"'reorder'): corrupted at that record ([{x}, {x_end}), below the newest commit). A's holder opens: B has as "
        f"many segments as its head names and the last one's tag is the head's (§37.4), and 'other scoped holders see "
        f"the last tag differ only if the last page moved' (§40 row 'reorder')", model, w, w.data,
        full=at, both=at, mail="opens", chat=at))

    # Row 5: a page of B repeated, B's head made consistent with the count and the last tag.
    w, model, _ = groups_file(322, many=False, slots=SLOTS_WITH_B)
    x = w.written_end

    def repeat(frame, segments, keys):
        of_b = _of(frame, B_KEY_ID)
        assert len(of_b) == 2, of_b
        segments.insert(of_b[0] + 1, segments[of_b[0]])
        return _reseal_heads(segments, frame, keys, lambda heads: heads[B_KEY_ID].update(
            groupSequence=heads[B_KEY_ID]["groupSequence"] + 1))
    _once(w, repeat)
    b_pages(w, model, "xy")
    x_end = w.written_end
    honest_b = w.keys.group_chain(w.head[1], B_KEY_ID)
    a = _holder(w.data, MAIL_PW, 3221, 1_800_000_000_000)
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after the forgery", "service": "s"}, b"a", MAIL)
    assert a.head[1].others[B_KEY_ID] == (honest_b[0], honest_b[1] + 1, honest_b[2]), a.head[1].others
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-page-repeated", f"A commit at log offset {x} held two of B's pages; the first was repeated "
        f"right after itself (three segments of B), B's head in that commit re-sealed one page longer (its last tag, "
        f"the last page's, unchanged) and the chain tag made again; then A's holder appends to A, carrying B's head "
        f"as that commit stated it. Holders of K_B: the repeated segment does not open as the next page of B's chain "
        f"(§35.9 step 5; §40 row 'replay (repeat) a B page': 'group sequence and previous tag are in the page's "
        f"associated data'): corrupted at that record ([{x}, {x_end}), below the newest commit). A's holder opens: "
        f"B's head names as many pages as B has segments, and the last one's page tag (§37.4)", model, a, a.data,
        full=at, both=at, mail="opens", chat=at))

    # Row 12: A's page holds a put whose accessGroup names B (sealed with K_A).
    w, model, _ = groups_file(323, many=False, slots=SLOTS_WITH_B)
    a = _holder(w.data, MAIL_PW, 3231, 1_800_000_000_000)
    x = a.written_end
    p = a.make_put(K.GENERIC_PASSWORD, {"account": "put into B through A's page", "service": "s",
                                         "accessGroup": CHAT}, b"into B")
    p.key_id = a.group_key_id(MAIL)                          # written into A's page as it is (WriterV3.append)
    a.append([p])                                            # not in the model: no reader may show it
    x_end = a.written_end
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after the forgery", "service": "s"}, b"a", MAIL)
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-put-into-other-group", f"reference-groups' start (no updates), then A's holder writes a "
        f"commit (log offset {x}) whose page of A (sealed with K_A) puts an item whose accessGroup is {CHAT}, then "
        f"an honest commit in A. Every reader that opens A's page: 'a put whose access group is not its page's "
        f"group' is corrupted wherever the record lies (§36 Checks; §40 row 'write an item into B': 'A's holders and "
        f"full holders (corrupted, §36)'): the full, A and B's, and A's holders, at that record ([{x}, {x_end})). "
        f"B's holder does not open A's pages (§37.3) and sees nothing of it: opens, without the item ('B's holders "
        f"do not open A's pages and see nothing')", model, a, a.data,
        full=at, both=at, mail=at, chat="opens"))

    # Row 13: A's page padded wrongly (sealed with K_A): a padding byte not zero; a plaintext of another length.
    for seed, suffix, padding, what in (
            (324, "nonzero", lambda plain: plain + b"\x01" + bytes(R.padded_page_length(len(plain)) - len(plain) - 1),
             "padded to its size class padded(U) but with its first padding byte 01"),
            (325, "length", lambda plain: plain + bytes(2 * R.padded_page_length(len(plain)) - len(plain)),
             "padded with zeros to twice its size class padded(U)")):
        w, model, _ = groups_file(seed, many=False, slots=SLOTS_WITH_B)
        a = _holder(w.data, MAIL_PW, seed * 10 + 1, 1_800_000_000_000)
        x = a.written_end
        with _SealedWith(padding):                           # not in the model: no reader may show it
            a.append([a.make_put(K.GENERIC_PASSWORD, {"account": "in a page padded wrongly", "service": "s",
                                                      "accessGroup": MAIL}, b"p")])
        x_end = a.written_end
        put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after the forgery", "service": "s"}, b"a", MAIL)
        at = ("corrupted", (x, x_end))
        out.append(_more(
            f"reference-forged-page-padding-{suffix}", f"reference-groups' start (no updates), then A's holder writes "
            f"a commit (log offset {x}) whose page of A (a put; sealed with K_A, so it authenticates) is {what}; then "
            f"an honest commit in A. Every reader that opens A's page: 'a plaintext of another length than padded(U), "
            f"or a padding byte other than zero, is corrupted' (§35.5; §35.9 step 5 'opens ... and parses'): the full, "
            f"A and B's, and A's holders, at that record ([{x}, {x_end}), below the newest commit). B's holder does "
            f"not open A's pages (§37.3): A's head matches A's segments (§37.4), so it opens", model, a, a.data,
            full=at, both=at, mail=at, chat="opens"))

    # Row 14: a head of group sequence 0 for B, which has segments (the head copied from the creation commit).
    w, model, _ = groups_file(326, many=False, slots=SLOTS_WITH_B)
    log = _log_bytes(w)
    first = R.split(log[:8 + R.rd32(log, 0)])
    assert first["kind"] == V2.KIND_COMMIT and first["sequence"] == 1 and len(first["segments"]) == 1
    p0, p1 = first["segments"][0]["page"]
    empty_b = R.open_heads(log[p0:p1], 0, w.keys.k_heads, w.keys.file_id, w.keys.epoch, 1)[B_KEY_ID]
    assert empty_b["groupSequence"] == 0
    assert w.keys.group_chain(w.head[1], B_KEY_ID)[1] > 0                 # B has pages
    x = w.written_end
    _once(w, lambda frame, segments, keys: _reseal_heads(segments, frame, keys,
                                                         lambda heads: heads[B_KEY_ID].update(empty_b)))
    put(w, model, K.GENERIC_PASSWORD, {"account": "its heads name B empty", "service": "s"}, b"x", MAIL)
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-head-sequence-zero", f"A commit at log offset {x} (a put in A) whose heads were re-sealed "
        f"with B's head replaced by the one the creation commit states (start epoch 1, group sequence 0, B's start "
        f"value: a head only K_B makes, copied), though B has segments; the chain tag made again; then an honest "
        f"commit. Holders of K_B: B's head is not its chain's end (§35.9 step 6, §37.2). A's holder: 'group sequence "
        f"0 for one that has segments: does not verify' (§37.4). Each corrupted at that record ([{x}, {x_end}), below "
        f"the newest commit)", model, w, w.data, full=at, both=at, mail=at, chat=at))

    # Row 11: a segment and a head of key id 9, which the key table lacks, consistent with each other.
    w, model, _ = groups_file(327, many=False, slots=SLOTS_WITH_B)
    x = w.written_end
    invented = random.Random(327).randbytes(12 + 256 + 16)
    segment9 = R.u8(9) + R.u32(len(invented)) + R.u32(len(invented)) + invented

    def add_nine(frame, segments, keys):
        segments = segments[:-1] + [segment9, segments[-1]]
        return _reseal_heads(segments, frame, keys, lambda heads: heads.update(
            {9: {"startEpoch": keys.epoch, "groupSequence": 1, "lastTag": invented[-16:]}}))
    _once(w, add_nine)
    put(w, model, K.GENERIC_PASSWORD, {"account": "beside a segment of key id 9", "service": "s"}, b"x", MAIL)
    x_end = w.written_end
    a = _holder(w.data, MAIL_PW, 3271, 1_800_000_000_000)
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after the forgery", "service": "s"}, b"a", MAIL)
    assert a.head[1].others[9] == (1, 1, invented[-16:])
    out.append(_more(
        "reference-forged-unknown-key-id", f"A commit at log offset {x} (a put in A) given a segment of key id 9 "
        f"(a page box of 284 bytes of random bytes) before its heads, and a head for key id 9 (start epoch 1, group "
        f"sequence 1, that segment's page tag), the heads re-sealed and the chain tag made again; then A's holder "
        f"appends to A, carrying key id 9's head. Full holder: 'no segment and no head of a key id its key table "
        f"lacks' (§35.9 step 4): corrupted at that record ([{x}, {x_end}), below the newest commit). Scoped holders "
        f"(A and B's, A's, B's) refuse no segment or head of a key id they do not hold (§37.3) and find key id 9's "
        f"head at its one segment, its page tag, the header's epoch (§37.4): they open, and every later commit "
        f"names it (§37.4 'once named, always named')", model, a, a.data,
        full=("corrupted", (x, x_end)), both="opens", mail="opens", chat="opens"))

    # Row 17: the two runs of two keychains (different file ids), each verifying under the same passwords.
    w, model, _ = groups_file(328, many=False, slots=SLOTS_WITH_B)
    other = _create(3281, (MAIL, CHAT), SLOTS_WITH_B)
    assert other.keys.file_id != w.keys.file_id and other.keys.epoch == w.keys.epoch
    data = _with_run_b(w.data, other.header.raw)
    OFFSET_0 = (0, 1)                                        # corrupted(0)
    name = "reference-forged-runs-of-two-files"
    m = manifest(name, f"{WHO_MORE}. reference-groups' start (no updates), with header run B replaced by run B of "
                 f"another keychain made with the same credentials (another file id; both runs read, and each "
                 f"verifies under the log key its own slots give; both of epoch 1). §31.4 step 4: 'Copies of two "
                 f"different file ids: corrupted(0)', a step before any slot is tried (step 5), so for every "
                 f"credential, the wrong one too (§39: 'corrupted(0) for ... runs of two file ids')",
                 corrupted(PW, OFFSET_0), [corrupted(c, OFFSET_0) for c in (BOTH_PW, MAIL_PW, CHAT_PW, WRONG)])
    out.append((name, m, data))

    # Row 16: run B of a later epoch whose checksum verifies and whose MAC does not.
    w, model, _ = groups_file(329, many=False, slots=SLOTS_WITH_B)
    raw = bytearray(w.header.raw)
    raw[32:40] = R.u64(R.rd64(raw, 32) + 1)
    data = _with_run_b(w.data, _with_checksum(bytes(raw)))
    name = "reference-forged-later-run-mac-bad"
    m = manifest(name, f"{WHO_MORE}. reference-groups' start (no updates), with header run B's epoch set to 2 "
                 f"(run A's is 1) and its checksum made again, its MAC left (so it reads, §31.1, but its MAC does not "
                 f"verify under epoch 2's K_header). §31.4 step 7: 'a copy that reads and has a later epoch than the "
                 f"chosen one but does not verify' is refused, corrupted ('an older copy must not open in place of a "
                 f"newer one'), for every credential that opens a slot (no offset range: header failures may name "
                 f"different bytes, §30.3). The wrong password opens no slot, so no copy verifies: wrongCredentials "
                 f"(step 7)", corrupted(PW), [corrupted(c) for c in (BOTH_PW, MAIL_PW, CHAT_PW)] + [refused(WRONG)])
    out.append((name, m, data))

    # Row 7: A's scoped rewrite that leaves B out wholly (no copied segment of B, no head of B).
    w, model, _ = groups_file(330, many=False, slots=SLOTS_WITH_B)
    a = _holder(w.data, MAIL_PW, 3301, 1_800_000_000_000)
    assert any(k == B_KEY_ID for _, k, _ in a.kc.opaque_segments) and B_KEY_ID in a.head[1].others
    a.kc.opaque_segments = [s for s in a.kc.opaque_segments if s[1] != B_KEY_ID]
    chain = a.head[1]
    a.head = (a.head[0], V3.ChainV3(bytes(chain), chain.groups,
                                    {k: h for k, h in chain.others.items() if k != B_KEY_ID}, chain.opaque))
    a.compact()                                              # epoch 2: key id 1 copied, A anew, nothing of B
    rewrite_end = a.written_end
    assert a.keys.epoch == 2 and B_KEY_ID not in a.head[1].others
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's holder after its rewrite", "service": "s"}, b"a", MAIL)
    for iid in [iid for iid, v in model.items.items() if v[1].get("accessGroup") == CHAT]:
        del model.items[iid]                                 # gone from the file
    at = ("corrupted", (0, rewrite_end))
    out.append(_more(
        "reference-forged-rewrite-without-group", f"reference-groups' start (no updates), then A's holder compacts "
        f"(a scoped rewrite into epoch 2, §38.7) but copies none of B's segments and names no head of B (the default "
        f"group's segments copied, with its chain start entry; A written anew); then it appends to A. Full holders "
        f"(the key table names B) and holders of K_B follow B, and the rewrite's commit does not name it: 'The head "
        f"must exist — a followed group the heads do not name is corrupted' (§37.2, §35.9 step 6; §40 row 'drop all "
        f"of B'): corrupted in the rewrite's transaction (log offsets [0, {rewrite_end}), its parts and commit; the "
        f"record's or its first part's offset, §25.4, §37.2), below the newest commit. A's holder opens: nothing in "
        f"the file names B (§37.4 asks only of key ids with segments or named by a commit; §40 row 'drop all of B': "
        f"other scoped holders notice 'not a whole file A rewrote without B, in which nothing names B')",
        model, a, a.data, full=at, both=at, mail="opens", chat=at))

    # Row 19: B's page ciphertext changed, its page tag kept, the chunk's parity computed over the changed bytes.
    w, model, _ = groups_file(331, many=False, slots=SLOTS_WITH_B)
    x = w.written_end

    def destroy(record, previous, keys):
        w.tamper = None
        frame = R.split(record)
        b = frame["segments"][_of(frame, B_KEY_ID)[0]]
        changed = bytearray(record)
        changed[b["page"][0] + 20] ^= 0x01                   # inside the ciphertext, not the page tag
        return bytes(changed)
    w.tamper = destroy
    b_pages(w, model, "x")
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-page-ciphertext-changed", f"A commit at log offset {x} held one page of B; one bit of its "
        f"ciphertext (not its page tag) was flipped before the record was written, so the chain tag (which covers "
        f"the page tag, §35.8) still matches and the chunk's parity is that of the changed bytes (nothing to "
        f"repair); then an honest commit. Holders of K_B: B's page does not authenticate (§35.5, §35.9 step 5; §40 "
        f"row 'destroy B's data': 'B's holders and full holders find a page or secret box that does not "
        f"authenticate'): corrupted at that record ([{x}, {x_end}), below the newest commit). A's holder opens: "
        f"only B's holders can tell whether B's pages authenticate (§37.4), and B's head matches B's segments",
        model, w, w.data, full=at, both=at, mail="opens", chat=at))

    # Row 3 (what a file alone shows): B's last page dropped, B's head stepped back to the page before.
    w, model, _ = groups_file(332, many=False, slots=SLOTS_WITH_B)
    x = w.written_end

    def drop_last(frame, segments, keys):
        of_b = _of(frame, B_KEY_ID)
        assert len(of_b) == 2, of_b
        kept = segments[of_b[0]]
        del segments[of_b[1]]
        end = R.SEGMENT_HEADER + R.rd32(kept, 5)
        return _reseal_heads(segments, frame, keys, lambda heads: heads[B_KEY_ID].update(
            groupSequence=heads[B_KEY_ID]["groupSequence"] - 1, lastTag=kept[end - 16:end]))
    _once(w, drop_last)
    dropped = b_pages(w, model, "xy")[1]
    del model.items[dropped.item_id]                         # its page is gone
    f = _holder(w.data, PW, 3321, 1_800_000_000_000)
    put(f, model, K.GENERIC_PASSWORD, {"account": "a full holder after the forgery", "service": "s"}, b"f", MAIL)
    out.append(_more(
        "reference-forged-last-page-dropped", f"A commit at log offset {x} held two of B's pages; the second (B's "
        f"last) was removed, B's head in that commit re-sealed at the page before (group sequence one less, the "
        f"remaining page's tag) and the chain tag made again; then a full holder opens the file and appends. §40 row "
        f"'drop B's last pages and step B's head back to the page before': 'Yes, undetected from the file: the result "
        f"is a valid earlier state of B's chain' — every credential opens, without the dropped item (only a pinned "
        f"head naming B, §37.5, which a manifest does not state, would show the rollback)", model, f, f.data,
        full="opens", both="opens", mail="opens", chat="opens"))

    # Row 10: malformed chain start entries (a start epoch not before the header's epoch), in one run; in both.
    w, model, _ = groups_file(333, many=False, slots=SLOTS_WITH_B)
    bad = _reheader(w, chain_starts=((B_KEY_ID, w.keys.epoch),))
    n = w.page_count
    data = bytearray(w.data)                                 # run A as written, run B the malformed header's
    data[H.run_b_offset(n):H.run_b_offset(n) + n * H.PAGE] = bad[H.run_b_offset(n):H.run_b_offset(n) + n * H.PAGE]
    name = "reference-forged-chain-start-malformed-one-run"
    main, others = _expectations(model, w, full="opens", both="opens", mail="opens", chat="opens", repaired=True)
    out.append((name, manifest(name, f"{WHO_MORE}. reference-groups' start (no updates), with header run B given "
                               f"a chain start entry (key id 3, start epoch 1) in a header of epoch 1, its MAC and "
                               f"checksum made again; run A as written. §31.2: an entry 'with e ≥ the header's "
                               f"epoch' makes the copy not hold a header (the structure check, before the MAC: the "
                               f"other run is tried); run A verifies and is chosen, and run B, not holding the chosen "
                               f"copy, is reported for a writer to rewrite (§31.4 step 9): every credential opens, a "
                               f"repair reported", main, others), bytes(data)))
    name = "reference-forged-chain-start-malformed-both-runs"
    out.append((name, manifest(name, f"{WHO_MORE}. reference-groups' start (no updates), with both header runs "
                               f"given a chain start entry (key id 3, start epoch 1) in a header of epoch 1, MAC and "
                               f"checksum made again. §31.2: such an entry makes the copy not hold a header; 'both "
                               f"such: corrupted(0)' (§31.4 step 4 'No copy reads', before any slot: the wrong "
                               f"password too; §39)", corrupted(PW, OFFSET_0),
                               [corrupted(c, OFFSET_0) for c in (BOTH_PW, MAIL_PW, CHAT_PW, WRONG)]), bad))

    # Row 3 again, its head left as written: B's last page dropped, the heads still naming it.
    w, model, _ = groups_file(335, many=False, slots=SLOTS_WITH_B)
    x = w.written_end

    def drop_last_b(frame, segments, keys):
        of_b = _of(frame, B_KEY_ID)
        assert len(of_b) == 2, of_b
        del segments[of_b[1]]
        return segments
    _once(w, drop_last_b)
    b_pages(w, model, "xy")
    x_end = w.written_end
    put(w, model, K.GENERIC_PASSWORD, {"account": "after the forgery", "service": "s"}, b"after", MAIL)
    at = ("corrupted", (x, x_end))
    out.append(_more(
        "reference-forged-last-page-dropped-head-kept", f"A commit at log offset {x} held two of B's pages; the second "
        f"(B's last) was removed and the chain tag made again, B's head left as written (naming the removed page and "
        f"its tag); then an honest commit in A. Holders of K_B: B's head names a page its chain does not have (§35.9 "
        f"step 6); A's holder: B has one segment fewer than its head names (§35.9 step 7, §37.4). Every credential: "
        f"corrupted at that record ([{x}, {x_end}), below the newest commit). A recovering read must list it for "
        f"every credential (§37.6 rule 1): A's holder cannot anchor its count there, as B has a segment in the record "
        f"and the heads do not name its tag", model, w, w.data,
        full=at, both=at, mail=at, chat=at))
    # Damage, then a commit whose heads leave B out: past the damage, A's holder's count of B is a lower bound, and
    # heads that no longer name B do not set it again.
    w, model, _ = groups_file(336, many=False, slots=SLOTS_WITH_B)
    b_pages(w, model, "xy")
    lost_start = w.written_end
    commit(w, model, [w.make_put(K.GENERIC_PASSWORD, {"account": f"lost b page {c}", "service": "s", "label": c * 5000,
                                                      "accessGroup": CHAT}, c.encode()) for c in "uv"])
    lost_end = w.written_end
    _once(w, lambda frame, segments, keys: _reseal_heads(segments, frame, keys, lambda heads: heads.pop(B_KEY_ID)))
    put(w, model, K.GENERIC_PASSWORD, {"account": "forged: heads leave B out", "service": "s"}, b"x", MAIL)
    data = bytearray(w.data)
    for offset in range(lost_start, lost_end):
        data[w.layout.physical(offset)] ^= 0xA5
    at = ("corrupted", (lost_start, lost_end))
    out.append(_more(
        "reference-forged-heads-without-group-after-damage", f"Two commits of two of B's pages each; the second "
        f"(log offsets [{lost_start}, {lost_end})) then destroyed beyond what parity repairs (every byte XORed with "
        f"a5); after it, a commit in A whose heads were re-sealed without B's head, the chain tag made again. Every "
        f"credential: corrupted at the destroyed record. A recovering read lists the destroyed bytes and, for every "
        f"credential, the commit whose heads leave B out (§37.6 rules 1 and 5): A's holder, whose count of B is a "
        f"lower bound past the damage, does not let heads that no longer name B set it again", model, w, bytes(data),
        full=at, both=at, mail=at, chat=at))
    return out


# ---------------------------------------------------------------------------------------------
# Pinned heads (SPEC.md §15.4, §37.5)
# ---------------------------------------------------------------------------------------------
#
# Each manifest's "pins" (Fixtures/README.md): open the .kcf with the credential, pinning the head, expect the outcome.
# The heads are the generator's: taken from the state of the writer that made a commit (its epoch, its head, every
# group's head as its last commit stated it), at some point of the file's history or of a copy's — not read back.

def pin_text(w: V3.WriterV3) -> str:
    """The head w's last commit made, in its text form (§37.5): what an application stores and pins."""
    heads = tuple(P.GroupHead(h["keyID"], h["startEpoch"], h["sequence"], bytes.fromhex(h["lastTag"]))
                  for h in group_heads(w))
    return P.format_head(P.PinnedHead(w.keys.epoch, w.head[0], bytes(w.head[1]), heads))


def pinned(credential: dict, head: str, outcome: str) -> dict:
    """One entry of a manifest's pins."""
    assert outcome in ("opens", "rolledBack")
    return {"credential": _credential_json(credential), "head": head, "outcome": outcome}


def _pinned_manifest(name: str, text: str, model: Model, w, pins: list, *, who: str = "") -> tuple:
    """A manifest of a file of groups_file's slots (with B's holder) whose last commit w made, plus its pins."""
    main, others = _expectations(model, w, full="opens", both="opens", mail="opens", chat="opens")
    m = manifest(name, f"{who or WHO_MORE}. {text}", main, others)
    m["pins"] = pins
    return name, m, w.data


def _rolled_back_by_a(seed: int, changed: str) -> tuple:
    """groups_file, a copy kept; then `changed` ("B": B's holder, "A": A's holder) adds an item in its group and the
    head is pinned (epoch 1); then A's holder puts the copy back and compacts it (epoch 2, past the pin). Returns
    (model of the copy, A's writer after the compaction, the copy's head, the pinned head)."""
    w, model, _ = groups_file(seed, many=False, slots=SLOTS_WITH_B)
    older, older_model, older_head = w.data, copy.deepcopy(model), pin_text(w)
    credential, group = (CHAT_PW, CHAT) if changed == "B" else (MAIL_PW, MAIL)
    h = _holder(w.data, credential, seed * 10 + 1, 1_800_000_000_000)
    put(h, model, K.GENERIC_PASSWORD, {"account": f"{changed}'s item after the copy", "service": "s"}, b"newer", group)
    a = _holder(older, MAIL_PW, seed * 10 + 2, 1_810_000_000_000)
    a.compact()
    return older_model, a, older_head, pin_text(h)


OLD_GROUPS_PW = {"password": "the default group and mail, without the root"}


def _fork_compacted_by_a(seed: int) -> tuple:
    """groups_file, a copy kept; B's holder adds an item in B and the head is pinned; on the copy B's holder adds
    another (a fork of B's chain), and A's holder compacts the fork (epoch 2). Returns (model of the fork, A's writer
    after the compaction, the copy's head, the pinned head, the fork's head)."""
    w, model, _ = groups_file(seed, many=False, slots=SLOTS_WITH_B)
    older, fork_model, older_head = w.data, copy.deepcopy(model), pin_text(w)
    b = _holder(w.data, CHAT_PW, seed * 10 + 1, 1_800_000_000_000)
    put(b, model, K.GENERIC_PASSWORD, {"account": "B's pinned item", "service": "s"}, b"pinned", CHAT)
    fork = _holder(older, CHAT_PW, seed * 10 + 2, 1_800_000_000_000)
    put(fork, fork_model, K.GENERIC_PASSWORD, {"account": "B's item on the copy", "service": "s"}, b"fork", CHAT)
    a = _holder(fork.data, MAIL_PW, seed * 10 + 3, 1_810_000_000_000)
    a.compact()
    return fork_model, a, older_head, pin_text(b), pin_text(fork)


def pinned_fixtures() -> list:
    """[(name, manifest, bytes)] of the reference-pinned-* files."""
    out = []

    model, a, older_head, head = _rolled_back_by_a(320, "B")
    out.append(_pinned_manifest(
        "reference-pinned-scoped-rollback", "reference-groups' start (no updates) copied; B's holder adds an item in B "
        "and the head is pinned (epoch 1); A's holder puts the copy back and compacts it (epoch 2, past the pinned "
        "epoch; B's chain carried from epoch 1 with one page fewer). Every credential with that pin: rolledBack "
        "(§37.5 step 3: B's group sequence is below the pin's — A's holder compares B's page tags too); the pin "
        "without its groups (a version 2 head) and the copy's own head: opens", model, a,
        [pinned(PW, head, "rolledBack"), pinned(CHAT_PW, head, "rolledBack"), pinned(MAIL_PW, head, "rolledBack"),
         pinned(BOTH_PW, head, "rolledBack"), pinned({"key": RAW_KEY}, head.split("/")[0], "opens"),
         pinned(PW, older_head, "opens"), pinned(CHAT_PW, older_head, "opens")]))

    model, a, older_head, head = _rolled_back_by_a(321, "A")
    out.append(_pinned_manifest(
        "reference-pinned-own-group-rollback", "reference-groups' start (no updates) copied; A's holder adds an item "
        "in A and the head is pinned (epoch 1); A's holder puts the copy back and compacts it (epoch 2): A's chain "
        "begins anew after the pin (a true start value, made with K_A), every other group is as pinned. Every "
        "credential with that pin: opens (§37.5 step 2 — what a pin does not catch: a holder of K_g rolling g back)",
        model, a, [pinned(PW, head, "opens"), pinned(MAIL_PW, head, "opens"), pinned(CHAT_PW, head, "opens"),
                   pinned(PW, older_head, "opens")]))

    w, model, _ = groups_file(322, many=False, slots=SLOTS_WITH_B)
    heads = [(PW, pin_text(w))]
    a = _holder(w.data, MAIL_PW, 3221, 1_800_000_000_000)
    put(a, model, K.GENERIC_PASSWORD, {"account": "A's item", "service": "s"}, b"a", MAIL)
    heads.append((MAIL_PW, pin_text(a)))
    a.compact()
    heads.append((CHAT_PW, pin_text(a)))
    f = _holder(a.data, PW, 3222, 1_810_000_000_000)
    put(f, model, K.GENERIC_PASSWORD, {"account": "the full holder's item", "service": "s"}, b"f", CHAT)
    f.compact()
    heads.append((BOTH_PW, pin_text(f)))
    c = _holder(f.data, CHAT_PW, 3223, 1_820_000_000_000)
    c.compact()
    heads.append(({"key": RAW_KEY}, pin_text(c)))
    fork = _holder(c.data, PW, 3224, 1_830_000_000_000)
    put(fork, copy.deepcopy(model), K.GENERIC_PASSWORD, {"account": "a fork's item", "service": "s"}, b"x", MAIL)
    put(c, model, K.GENERIC_PASSWORD, {"account": "B's item", "service": "s"}, b"c", CHAT)
    heads.append((PW, pin_text(c)))
    out.append(_pinned_manifest(
        "reference-pinned-rewrites", "reference-groups' start (no updates), its head pinned; A's holder adds an item "
        "(pinned) and compacts (epoch 2, pinned); the full holder adds an item in B and compacts (epoch 3, pinned); "
        "B's holder compacts (epoch 4, pinned) and adds an item. Every pin taken along the way opens the file, with "
        "each credential; the head of a fork (another item appended by the full holder at the same sequence as B's "
        "last) is rolledBack (§15.4: the same epoch, another chain value)", model, c,
        [pinned(credential, head, "opens") for credential, head in heads]
        + [pinned(PW, pin_text(fork), "rolledBack"), pinned(CHAT_PW, pin_text(fork), "rolledBack")]))

    model, a, older_head, head, fork_head = _fork_compacted_by_a(325)
    out.append(_pinned_manifest(
        "reference-pinned-fork-compacted", "reference-groups' start (no updates) copied; B's holder adds an item in B "
        "and the head is pinned (epoch 1); on the copy B's holder adds another item (a fork: B's page at the same "
        "group sequence, another page tag), and A's holder compacts the fork (epoch 2; B's chain carried from epoch 1 "
        "with as many pages as the pin's). The pin: rolledBack for every credential (§37.5 step 3: B's page at the "
        "pin's group sequence has another tag — A's holder compares page tags too); the fork's own head and the "
        "copy's open", model, a,
        [pinned(PW, head, "rolledBack"), pinned(MAIL_PW, head, "rolledBack"), pinned(CHAT_PW, head, "rolledBack"),
         pinned(BOTH_PW, head, "rolledBack"), pinned(PW, fork_head, "opens"), pinned(MAIL_PW, older_head, "opens")]))

    for seed, name in ((323, "reference-pinned-group-added"), (324, "reference-pinned-group-dropped")):
        w = _create(seed, (MAIL,), ((MAIL_PW, [MAIL], None), (OLD_GROUPS_PW, ["", MAIL], None)))
        model = Model((MAIL,))
        put(w, model, K.GENERIC_PASSWORD, {"account": "in the default group", "service": "s"}, b"d")
        put(w, model, K.GENERIC_PASSWORD, {"account": "in mail", "service": "s"}, b"m", MAIL)
        older, older_model, before = w.data, copy.deepcopy(model), pin_text(w)
        put(w, model, K.GENERIC_PASSWORD, {"account": "in a new group", "service": "s"}, b"c", CHAT)   # adds CHAT
        after = pin_text(w)
        who = (f"The default group and {MAIL} (key ids 1, 2) with a password scoped to {MAIL} (A's holder) and one "
               f"scoped to both (every group of this key table, without the root); the full holder adds {CHAT} (key "
               f"id 3) by a rewrite (epoch 2) under a new root")
        if name.endswith("added"):
            a = _holder(w.data, MAIL_PW, seed * 10 + 1, 1_800_000_000_000)
            put(a, model, K.GENERIC_PASSWORD, {"account": "A's item after the new group", "service": "s"}, b"a", MAIL)
            text = (f"then A's holder adds an item. A pin from before {CHAT} was added (it names key ids 1 and 2 "
                    f"at epoch 1) opens, with either credential (§37.5 step 2: both chains began anew after it); so "
                    f"does the pin taken after the addition")
            pins = [pinned(PW, before, "opens"), pinned(MAIL_PW, before, "opens"), pinned(PW, after, "opens"),
                    pinned(MAIL_PW, after, "opens")]
        else:
            a = _holder(older, OLD_GROUPS_PW, seed * 10 + 1, 1_800_000_000_000)
            a.compact()
            a.compact()
            model = older_model
            text = (f"and the head is pinned (naming key ids 1, 2 and 3). The holder scoped to the default group and "
                    f"{MAIL} puts back the copy from before the addition — its older key table and slots, K_log "
                    f"unchanged — and compacts it twice (epoch 3, past the pinned epoch; both its groups begin anew): "
                    f"the last commit names no head for key id 3. That pin: rolledBack (§37.5 step 1 alone), for the "
                    f"full holder, A's and the compactor's own; the pin from before the addition opens")
            pins = [pinned(PW, after, "rolledBack"), pinned(MAIL_PW, after, "rolledBack"),
                    pinned(OLD_GROUPS_PW, after, "rolledBack"), pinned(PW, before, "opens"),
                    pinned(MAIL_PW, before, "opens")]
        m = manifest(name, f"{who}, {text}", view(PW, None, model, a), [view(MAIL_PW, [MAIL], model, a),
                                                                         view(OLD_GROUPS_PW, ["", MAIL], model, a),
                                                                         refused(WRONG)])
        m["pins"] = pins
        out.append((name, m, a.data))
    return out


def write(directory: str) -> list:
    os.makedirs(directory, exist_ok=True)
    names = []
    for name, m, data in fixtures():
        with open(os.path.join(directory, name + ".kcf"), "wb") as f:
            f.write(data)
        with open(os.path.join(directory, name + ".json"), "w", encoding="utf-8") as f:
            f.write(_format(m) + "\n")
        names.append(name)
    return names
