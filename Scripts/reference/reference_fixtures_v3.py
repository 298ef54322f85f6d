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

import json
import os
import random

import header_v3 as H
import kcf_reference as K
import kcf_reference_v2 as V2
import kcf_reference_v3 as V3
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


def groups_file(seed: int, *, many: bool = True, part_limit: int = V2.MAX_BODY) -> tuple:
    """The default group, MAIL and CHAT (key ids 1, 2, 3); slots: the full password, MAIL_PW scoped to MAIL, BOTH_PW
    (Argon2id) scoped to MAIL and CHAT, a raw key reaching everything. Items of every class across the groups, an
    update and a deletion in each group, a move from MAIL to CHAT, and a transaction across the three groups.
    Returns (writer, model, {name: [item ids]})."""
    w = _create(seed, (MAIL, CHAT), SLOTS, part_limit=part_limit)
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
