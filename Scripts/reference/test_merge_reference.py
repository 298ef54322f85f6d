"""Differential test of `kcf merge` (the Swift CLI) against merge_reference.py (SPEC.md §43).

Random seeded histories are written with the reference writers (format version 2, and 3 for every third seed): a
base, copied to OURS and THEIRS, random edits on each (adds, changes of secret / attributes / primary key, deletions,
the same change on both sides, adds that collide on a primary key), then `kcf merge [--base BASE] -o OUT OURS
THEIRS`. OUT is read with the reference reader and its live items and tombstones compared with what
merge_reference.py says OURS holds after the merge (§43.7). Each seed then goes on: the merge's result edited
further (conflict copies resolved, dismissed or changed) and merged again with THEIRS (edited too), with THEIRS as the
base and without; the copy merged with itself; the result merged again with THEIRS (idempotence).

Without --base, both kcf and the reference take the history the two copies' logs share as the base (§43.9): the
copies of a seed are copies of one file, so `merge(ours, theirs)` is mostly merged against BASE's state (checked of
the reference: A is BASE's state). §43.3 is reached where they share none: a version 2 BASE without records, and
THEIRS compacted with `kcf compact` (a new epoch) before it is merged, both ways round.

Cases made by hand cover what random histories rarely reach: a second round of §43.5, limitReached, an untouched copy
removed (also over a later tombstone), an id only the base holds, equal versions under two ids, rule 2 at equal
times, derived tombstones, a side without the base's tombstone, a version without the marked attribute, a watermark
tombstone in version 3 (test_watermark_tombstone_in_the_items_group: the kcf before commit "merge: a watermark tombstone
goes in its item's group" wrote it in the default group's page, so that its own result no longer opened), --import.
Their OURS and THEIRS are written apart (each writer its own random values), so that they share no history (in version
3, the empty keychain's commit: A is empty). The §43.9 cases fork one file instead: an unchanged older copy, two forks,
a compaction after the fork, logs that part inside a transaction in parts, a damaged byte parity repairs, --import of
a fork; in versions 2 and 3.

    KCF_MERGE_CLI    the CLI (default: the repository's .build/release/kcf; build it with `swift build -c release`)
    KCF_MERGE_SEEDS  how many seeds (default 300)

    python3 -m pytest -q Scripts/reference/test_merge_reference.py
    python3 Scripts/reference/test_merge_reference.py [SEED ...]     # prints every disagreement
"""

from __future__ import annotations

import collections
import functools
import os
import random
import shutil
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V2  # noqa: E402
import kcf_reference_v3 as V3  # noqa: E402
import merge_reference as M  # noqa: E402

# The readers repair every header page through Reed–Solomon in pure Python, which dominates the run time; the pages
# are the same in every file of a seed, so their decodings are memoised (pure functions of the bytes).
V2.repair_page = functools.lru_cache(maxsize=4096)(V2.repair_page)
V2.page_parity = functools.lru_cache(maxsize=4096)(V2.page_parity)

CLI = os.environ.get("KCF_MERGE_CLI", os.path.join(HERE, "..", "..", ".build", "release", "kcf"))
SEEDS = int(os.environ.get("KCF_MERGE_SEEDS", "300"))
PASSWORD = "pw"
CRED = {"password": PASSWORD}
T0 = 1_700_000_000_000

ACCOUNTS = ["ann", "bob", "cat", "dan"]
SERVICES = ["mail", "web"]
SERIALS = [b"\x01", b"\x02", b"\x03"]
TAGS = [b"tag-a", b"tag-b", b"tag-c"]
GROUP = "team"                                   # version 3: items go in the default group or this one


class Clock:
    """The writers' clock: every call within one edit answers the same time, set by the history."""

    def __init__(self, now: int):
        self.now = now

    def __call__(self) -> int:
        return self.now


# ---------------------------------------------------------------------------------------------
# Histories
# ---------------------------------------------------------------------------------------------

def primary(cls: int, rng: random.Random) -> dict:
    """Random primary-key attributes from small pools, so that copies edited apart collide."""
    if cls == K.GENERIC_PASSWORD:
        return {"account": rng.choice(ACCOUNTS), "service": rng.choice(SERVICES)}
    if cls == K.INTERNET_PASSWORD:
        return {"account": rng.choice(ACCOUNTS), "server": "example.com", "protocol": 0}
    if cls == K.CERTIFICATE:
        return {"serialNumber": rng.choice(SERIALS), "issuer": b"CN=ca", "certificateType": 1}
    return {"applicationTag": rng.choice(TAGS), "applicationLabel": b"L", "keyClass": 1}


def rename(item: K.Item, rng: random.Random) -> dict:
    if item.cls in (K.GENERIC_PASSWORD, K.INTERNET_PASSWORD):
        return {"account": rng.choice(ACCOUNTS)}
    if item.cls == K.CERTIFICATE:
        return {"serialNumber": rng.choice(SERIALS)}
    return {"applicationTag": rng.choice(TAGS)}


def random_class(rng: random.Random) -> int:
    return rng.choices([K.GENERIC_PASSWORD, K.INTERNET_PASSWORD, K.CERTIFICATE, K.KEY], [6, 2, 1, 1])[0]


class Side:
    """One copy of the keychain being edited by the reference writer."""

    def __init__(self, path: str, version: int, rng: random.Random, now: int):
        self.path = path
        self.version = version
        self.rng = rng
        self.clock = Clock(now)
        W = V2.Writer if version == 2 else V3.WriterV3
        self.w = W.open(path, CRED, rng=random.Random(rng.getrandbits(64)), clock=self.clock)

    @property
    def live(self) -> dict:
        return self.w.state.items

    def tick(self, lo: int = 1, hi: int = 12):
        self.clock.now += self.rng.randint(lo, hi)

    def fits(self, cls: int, attrs: dict, item_id=None) -> bool:
        """§8.3: the writer refuses a put whose primary key another live item of this copy holds."""
        key = K.uniqueness_key(cls, attrs)
        return all(i == item_id or it.uniqueness_key() != key for i, it in self.live.items())

    def add(self, cls=None, pk=None, secret=None):
        cls = cls or random_class(self.rng)
        pk = pk or primary(cls, self.rng)
        if self.version == 3 and "accessGroup" not in pk and self.rng.random() < 0.3:
            pk = {**pk, "accessGroup": GROUP}
        base = {n: K.TYPE_DEFAULTS[K.ATTRIBUTES_BY_NAME[n].type] for n in K.PRIMARY_KEY[cls]}
        base.update(K.WRITER_DEFAULTS)
        base.update(pk)
        if not self.fits(cls, base):
            return None
        self.tick()
        return self.w.add(cls, {**pk, "label": f"l{self.rng.randint(0, 9)}"},
                          secret if secret is not None else self.rng.randbytes(self.rng.randint(0, 6)))

    def update(self, item_id: bytes, attributes=None, secret=None) -> bool:
        item = self.live[item_id]
        attrs = {**item.attributes, **(attributes or {})}
        if not self.fits(item.cls, attrs, item_id):
            return False
        self.tick()
        self.w.update(item_id, attributes, secret)
        return True

    def delete(self, item_id: bytes):
        self.tick()
        self.w.delete(item_id)

    def random_edit(self):
        r = self.rng.random()
        ids = sorted(self.live)
        if r < 0.25 or not ids:
            self.add()
            return
        iid = self.rng.choice(ids)
        item = self.live[iid]
        if r < 0.45:
            self.update(iid, secret=self.rng.randbytes(self.rng.randint(0, 6)))
        elif r < 0.6:
            attrs = {"label": f"l{self.rng.randint(0, 9)}"}
            if item.cls in (K.GENERIC_PASSWORD, K.INTERNET_PASSWORD) and self.rng.random() < 0.5:
                attrs["comment"] = f"c{self.rng.randint(0, 3)}"
            self.update(iid, attributes=attrs)
        elif r < 0.72:
            self.update(iid, attributes=rename(item, self.rng))
        else:
            self.delete(iid)

    def resolve(self, copy_id: bytes, keep_copy: bool) -> bool:
        """§43.4 "Resolving": deletes the copy; keeping the copy puts its version (marker off, modificationDate the
        resolution's time) as item g and writes a tombstone entry at the conflict copy id of the version g held."""
        c = self.live.get(copy_id)
        if c is None:
            return False
        u = M.untouched_conflict_copy(copy_id, M.Version.of(c.cls, c.attributes, c.secret))
        if u is None:
            return False
        g, v = u
        self.tick()
        now = self.clock.now
        if not keep_copy:
            self.w.delete(copy_id)
            return True
        held = self.live.get(g)
        attrs = dict(v.attrs)
        attrs["modificationDate"] = now
        if held is not None and held.cls != v.cls or not self.fits(v.cls, attrs, g):
            return False
        d = K.Delete(copy_id)
        d.time = now
        entries = [d, K.Put(g, v.cls, attrs, v.secret)]
        if held is not None:
            old = M.conflict_copy_id(g, M.Version.of(held.cls, held.attributes, held.secret))
            entries.append(V2.Tombstone(old, now))
        self.w.append(entries)
        return True


_EMPTY: dict = {}
COVERAGE: collections.Counter = collections.Counter()


def new_base(path: str, version: int) -> None:
    """An empty keychain (one per format version, made once: its header is all that differs between seeds)."""
    if version not in _EMPTY:
        wr = random.Random(version)
        if version == 2:
            w = V2.Writer.create(None, [CRED], iterations=1000, rng=wr, clock=Clock(T0))
        else:
            w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=wr, clock=Clock(T0))
            w.add_groups([GROUP])                  # a second access group, for items in their groups (§36)
        _EMPTY[version] = w.data
    with open(path, "wb") as f:
        f.write(_EMPTY[version])


# ---------------------------------------------------------------------------------------------
# Running the CLI and comparing
# ---------------------------------------------------------------------------------------------

def run_merge(ours: str, theirs: str, out: str, base=None):
    """`kcf merge [--base BASE] -o OUT OURS THEIRS`; returns (exit status, stdout + stderr)."""
    args = [CLI, "merge"] + (["--base", base] if base else []) + ["-o", out, ours, theirs]
    r = subprocess.run(args, env={**os.environ, "KCF_PASSWORD": PASSWORD}, capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout + r.stderr


def describe(item) -> str:
    if item is None:
        return "—"
    a = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in item.attributes.items()
         if k not in ("accessible", "synchronizable", "accessGroup", "creationDate")}
    return f"{K.CLASS_NAMES[item.cls]} {a} secret={item.secret.hex() if item.secret is not None else None}"


def compare(label: str, ours_path: str, theirs_path: str, base_path, out_path: str, **options) -> list:
    """Merges with the CLI and compares OUT with the reference. Returns the disagreements (strings)."""
    ours, theirs = M.load(ours_path, CRED), M.load(theirs_path, CRED)
    base = M.load(base_path, CRED) if base_path else None
    try:
        ref = M.merge(ours, theirs, base, **options)
        ref_error = None
        COVERAGE.update(set(ref.events))      # how many merges each rule fired in
        COVERAGE["merges"] += 1
    except M.LimitReached as e:
        ref, ref_error = None, str(e)
    status, text = run_merge(ours_path, theirs_path, out_path, base_path)
    if ref is None or status != 0:
        if ref is None and status != 0:
            return []
        return [f"{label}: reference {'fails: ' + ref_error if ref is None else 'merges'}, "
                f"kcf exits {status}: {text.strip()}"]
    try:
        got = M.load(out_path, CRED)
    except K.KCFError as e:
        return [f"{label}: kcf's result does not open: {e}", f"{label}: kcf said: {text.strip()}"]
    problems = []
    exp_items = ref.items
    for iid in sorted(set(exp_items) | set(got.items)):
        e, g = exp_items.get(iid), got.items.get(iid)
        same = e is not None and g is not None and e.cls == g.cls and e.attributes == g.attributes \
            and e.secret == g.secret
        if not same:
            problems.append(f"{label}: item {iid.hex()}: SPEC {describe(e)} | kcf {describe(g)}")
    exp_t = ref.file_tombstones(ours)
    for iid in sorted(set(exp_t) | set(got.tombstones)):
        if exp_t.get(iid) != got.tombstones.get(iid):
            problems.append(f"{label}: tombstone {iid.hex()}: SPEC {exp_t.get(iid)} | kcf {got.tombstones.get(iid)}")
    if problems:
        problems.append(f"{label}: the reference merged {how_merged(ref)}; kcf said: {text.strip()}")
    return problems


def how_merged(ref) -> str:
    """Which base the reference took: §43.9's A (with D, E_o, E_t and A_end), none (§43.3), or the one given."""
    sh = ref.shared
    if sh is None:
        return "with the base given" if not any(e.startswith("43.9") for e in ref.events) else \
            "by §43.3 (§43.9 condition 1 fails: import, format version, file id, epoch or rewrite end)"
    where = f"D={sh.d}, E_ours={sh.e_ours}, E_theirs={sh.e_theirs}, R={sh.rewrite_end}"
    if sh.base is None:
        return f"by §43.3 (§43.9: no commit end of OURS in R..D; {where})"
    return f"with §43.9's A (A_end={sh.a_end}, {where})"


def compact(path: str) -> tuple:
    """`kcf compact -k PATH` (a rewrite, §26.6 / §38.5: a new epoch); returns (exit status, output)."""
    r = subprocess.run([CLI, "compact", "-k", path], env={**os.environ, "KCF_PASSWORD": PASSWORD},
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def state_of_result(r) -> tuple:
    return ({i: (it.cls, it.attributes, it.secret) for i, it in r.items.items()}, r.tombstones)


def state_of(path: str) -> tuple:
    kc = M.load(path, CRED)
    return ({i: (it.cls, it.attributes, it.secret) for i, it in kc.items.items()}, dict(kc.tombstones))


# ---------------------------------------------------------------------------------------------
# One seed
# ---------------------------------------------------------------------------------------------

def mirrored_edit(a: Side, b: Side, rng: random.Random):
    """The same change on both sides at the same time: the same version (§43.2), no conflict."""
    common = sorted(i for i in a.live if i in b.live and a.live[i] == b.live[i])
    if not common:
        return
    iid = rng.choice(common)
    now = max(a.clock.now, b.clock.now) + rng.randint(1, 5)
    secret = rng.randbytes(4)
    for s in (a, b):
        s.clock.now = now
        s.w.update(iid, None, secret)


def colliding_adds(a: Side, b: Side, rng: random.Random):
    """Both sides add an item of one primary key (a conflict of kind "primary key taken")."""
    cls = random_class(rng)
    pk = primary(cls, rng)
    if a.version == 3 and rng.random() < 0.3:
        pk["accessGroup"] = GROUP
    a.add(cls, pk)
    b.add(cls, pk)


def edit_both(ours: Side, theirs: Side, rng: random.Random, n: int):
    for _ in range(n):
        r = rng.random()
        if r < 0.08:
            mirrored_edit(ours, theirs, rng)
        elif r < 0.16:
            colliding_adds(ours, theirs, rng)
        elif r < 0.58:
            ours.random_edit()
        else:
            theirs.random_edit()


def run_seed(seed: int, workdir: str) -> tuple:
    """Returns (merges compared, disagreements). A result of kcf that does not open ends the seed there."""
    progress = [0, []]
    try:
        return _run_seed(seed, workdir, progress)
    except K.KCFError as e:
        if not progress[1]:
            raise
        return progress[0], progress[1] + [f"seed {seed}: stopped: {type(e).__name__}: {e}"]


def _run_seed(seed: int, workdir: str, progress: list) -> tuple:
    rng = random.Random(seed)
    version = 3 if seed % 3 == 2 else 2
    p = lambda name: os.path.join(workdir, f"{name}.kcf")  # noqa: E731
    now = T0 + seed * 10_000_000
    new_base(p("base"), version)
    base = Side(p("base"), version, rng, now)
    for _ in range(rng.randint(0, 7)):
        base.random_edit()
    del base
    shutil.copy(p("base"), p("ours"))
    shutil.copy(p("base"), p("theirs"))
    # Each side's clock: after the base's, give or take a skew (a machine whose clock is behind).
    end = now + 200
    ours = Side(p("ours"), version, rng, end + rng.randint(-40, 40))
    theirs = Side(p("theirs"), version, rng, end + rng.randint(-40, 40))
    edit_both(ours, theirs, rng, rng.randint(1, 10))

    problems, count = [], 0

    def check(label, o, t, b, out, writes_nothing=False):
        nonlocal count
        count += 1
        progress[0] = count
        label = f"seed {seed} v{version} {label}"
        problems.extend(compare(label, p(o), p(t), p(b) if b else None, p(out)))
        progress[1] = problems
        if writes_nothing:
            # §43.7 "Idempotent": checked of the reference itself (and so of kcf, which must agree with it).
            ref = M.merge(M.load(p(o), CRED), M.load(p(t), CRED), M.load(p(b), CRED) if b else None)
            before = state_of(p(o))
            after = ({i: (it.cls, it.attributes, it.secret) for i, it in ref.items.items()},
                     ref.file_tombstones(M.load(p(o), CRED)))
            if before != after:
                problems.append(f"{label}: the reference writes something where §43.7 promises nothing")

    # 1. Without and with the base, both ways round.
    check("merge(ours, theirs)", "ours", "theirs", None, "m_nobase")
    check("merge(ours, theirs, base)", "ours", "theirs", "base", "m_base")
    check("merge(theirs, ours)", "theirs", "ours", None, "m_nobase_swapped")
    check("merge(theirs, ours, base)", "theirs", "ours", "base", "m_base_swapped")
    # §43.7 "Commutative", checked of the reference itself: OURS and THEIRS swapped give the same items and
    # tombstones (of the result, before it is written into either).
    for b in (None, "base"):
        o, t = M.load(p("ours"), CRED), M.load(p("theirs"), CRED)
        bb = M.load(p(b), CRED) if b else None
        r1, r2 = M.merge(o, t, bb), M.merge(t, o, bb)
        if state_of_result(r1) != state_of_result(r2):
            problems.append(f"seed {seed} v{version}: the reference is not commutative (base: {b})")
    # §43.9, checked of the reference itself: OURS and THEIRS were copied from BASE and each wrote its records after
    # it with a writer of its own random values, so the history they share ends at BASE's last commit (none in a
    # version 2 BASE without records), and A is BASE's state.
    o, t, b = M.load(p("ours"), CRED), M.load(p("theirs"), CRED), M.load(p("base"), CRED)
    sh = M.shared_history(o, t)
    want_end = b.committed_end if b.committed_end > 0 else None
    if sh is None or sh.a_end != want_end or sh.d < b.committed_end or (
            sh.base is not None and M.entries_of(sh.base).keys() != M.entries_of(b).keys()) or (
            sh.base is not None and not all(M.entries_of(sh.base)[i].same(e) for i, e in M.entries_of(b).items())):
        problems.append(f"seed {seed} v{version}: the reference's §43.9 A is not BASE (A_end "
                        f"{None if sh is None else sh.a_end}, BASE ends at {b.committed_end})")
    # 1b. THEIRS compacted since the copies parted (a rewrite: a new epoch): no shared history, §43.3 (§43.9's
    # second bullet). The compaction keeps no tombstone older than the horizon (90 days before now: every one here).
    shutil.copy(p("theirs"), p("theirs_compacted"))
    status, text = compact(p("theirs_compacted"))
    if status != 0:
        problems.append(f"seed {seed} v{version}: kcf compact exits {status}: {text.strip()}")
    else:
        check("merge(ours, theirs compacted)", "ours", "theirs_compacted", None, "m_compacted")
        check("merge(theirs compacted, ours)", "theirs_compacted", "ours", None, "m_compacted_swapped")
    # 2. A copy with itself.
    shutil.copy(p("ours"), p("ours_copy"))
    check("merge(ours, ours)", "ours", "ours_copy", None, "m_self", writes_nothing=True)
    # 3. The result again: with THEIRS as the base (a copy of it: kcf refuses a base that is THEIRS), and without.
    first = "m_base" if seed % 2 else "m_nobase"
    shutil.copy(p("theirs"), p("theirs_as_base"))
    check(f"merge({first}, theirs, base theirs)", first, "theirs", "theirs_as_base", "m_again_base",
          writes_nothing=True)
    check(f"merge({first}, theirs)", first, "theirs", None, "m_again")
    # 4. Go on from the result: resolve, dismiss or change its conflict copies, edit both, merge again.
    shutil.copy(p(first), p("ours2"))
    shutil.copy(p("theirs"), p("theirs2"))
    o2 = Side(p("ours2"), version, rng, max(ours.clock.now, theirs.clock.now) + rng.randint(-20, 20))
    t2 = Side(p("theirs2"), version, rng, theirs.clock.now + rng.randint(0, 20))
    copies = sorted(i for i, it in o2.live.items()
                    if M.untouched_conflict_copy(i, M.Version.of(it.cls, it.attributes, it.secret)))
    for cid in copies:
        r = rng.random()
        if r < 0.25:
            o2.resolve(cid, keep_copy=True)
        elif r < 0.45:
            o2.resolve(cid, keep_copy=False)
        elif r < 0.6 and cid in o2.live:
            o2.update(cid, secret=rng.randbytes(3))
        elif r < 0.8 and cid in o2.live:
            # Delete the item that holds the copy's primary key (the winner of a "primary key taken"): a copy still
            # holding the loser then brings it back, and its untouched conflict copy goes (§43.4, §43.5).
            _, v = M.untouched_conflict_copy(cid, M.Version.of(*(lambda it: (it.cls, it.attributes, it.secret))(
                o2.live[cid])))
            key = K.uniqueness_key(v.cls, v.attrs)
            holders = [i for i, it in o2.live.items() if it.uniqueness_key() == key]
            for i in holders:
                o2.delete(i)
    edit_both(o2, t2, rng, rng.randint(0, 6))
    check("merge(ours2, theirs2, base theirs)", "ours2", "theirs2", "theirs_as_base", "m2_base")
    check("merge(ours2, theirs2)", "ours2", "theirs2", None, "m2_nobase")
    check("merge(theirs2, ours2, base theirs)", "theirs2", "ours2", "theirs_as_base", "m2_base_swapped")
    # 5. THEIRS takes the result of 4 (THEIRS2 as the base) — idempotence of a merge made before.
    shutil.copy(p("theirs2"), p("theirs2_as_base"))
    check("merge(m2_base, theirs2, base theirs2)", "m2_base", "theirs2", "theirs2_as_base", "m3",
          writes_nothing=True)
    # 6. Both sides take the first result, then edit apart (one changes conflict copies the other leaves as they
    # are): merged with that result as the base, and without.
    shutil.copy(p(first), p("a6"))
    shutil.copy(p(first), p("b6"))
    shutil.copy(p(first), p("base6"))
    a6 = Side(p("a6"), version, rng, o2.clock.now + rng.randint(-20, 20))
    b6 = Side(p("b6"), version, rng, o2.clock.now + rng.randint(-20, 20))
    for cid in copies:
        side = rng.choice([a6, b6])
        r = rng.random()
        if cid not in side.live:
            continue
        if r < 0.5:
            side.update(cid, secret=rng.randbytes(3))
        elif r < 0.7:
            side.update(cid, attributes={"label": "changed copy"})
        elif r < 0.85:
            side.resolve(cid, keep_copy=rng.random() < 0.5)
    edit_both(a6, b6, rng, rng.randint(0, 4))
    # §43.9, checked of the reference itself: A6 and B6 share the first result's history, to its end.
    sh = M.shared_history(M.load(p("a6"), CRED), M.load(p("b6"), CRED))
    first_end = M.load(p(first), CRED).committed_end
    if sh is None or sh.a_end != first_end:
        problems.append(f"seed {seed} v{version}: the reference's §43.9 A_end for a6, b6 is "
                        f"{None if sh is None else sh.a_end}, not the end of {first} ({first_end})")
    check("merge(a6, b6)", "a6", "b6", None, "m6")
    check("merge(a6, b6, base first)", "a6", "b6", "base6", "m6_base")
    check("merge(b6, a6)", "b6", "a6", None, "m6_swapped")
    return count, problems


# ---------------------------------------------------------------------------------------------
# Cases made by hand: what random histories rarely reach
# ---------------------------------------------------------------------------------------------

def G(account: str, t: int, secret: bytes = b"s", service: str = "mail", **more) -> tuple:
    """A generic password's class and complete attributes, created and modified at t."""
    attrs = {"account": account, "service": service, "accessGroup": "", "accessible": 1, "synchronizable": False,
             "creationDate": t, "modificationDate": t, **more}
    return K.GENERIC_PASSWORD, attrs, secret


def _entries(batch) -> list:
    """One commit's entries: ("put", id, (cls, attrs, secret)) | ("delete", id, time) | ("tombstone", id, time), or a
    list of them (one transaction)."""
    out = []
    for kind, iid, x in (batch if isinstance(batch, list) else [batch]):
        if kind == "put":
            out.append(K.Put(iid, x[0], x[1], x[2]))
        elif kind == "delete":
            d = K.Delete(iid)
            d.time = x
            out.append(d)
        else:
            out.append(V2.Tombstone(iid, x))
    return out


def append(path: str, entries: list, *, version: int = 2, seed: int = 1, part_limit: int = None):
    """Appends `entries` to the file at path, one commit each (an element that is a list: one transaction, in parts
    when part_limit cuts it). The writer's random values (nonces, §43.9: the records' bytes) come from `seed`, so
    two files of one history written with one seed hold the same bytes, and with two seeds different ones."""
    W = V2.Writer if version == 2 else V3.WriterV3
    w = W.open(path, CRED, rng=random.Random(seed), clock=Clock(T0),
               **({"part_limit": part_limit} if part_limit else {}))
    for batch in entries:
        es = _entries(batch)
        w.append(es, check=not any(isinstance(e, V2.Tombstone) for e in es))


def write(path: str, entries: list, *, empty: str = None, version: int = 2, seed: int = 1):
    """A file of the shared empty keychain (or of `empty`'s bytes) holding `entries`, one commit each (see append)."""
    if empty is None:
        new_base(path, version)
    else:
        shutil.copy(empty, path)
    append(path, entries, version=version, seed=seed)


def ident(n: int) -> bytes:
    return bytes([n]) * 16


def hand_case(tmp, ours: list, theirs: list, base: list = None, **kw) -> list:
    """OURS, THEIRS (and BASE) written apart from the empty keychain, each with its own writer seed: their records
    differ from the first, so they share no history (§43.9) beyond the empty file's (in version 3, its commit: A is
    then the empty keychain)."""
    p = lambda name: os.path.join(tmp, f"{name}.kcf")  # noqa: E731
    write(p("ours"), ours, seed=1, **kw)
    write(p("theirs"), theirs, seed=2, **kw)
    if base is not None:
        write(p("base"), base, seed=3, **kw)
    return compare("hand", p("ours"), p("theirs"), p("base") if base is not None else None, p("out"))


def test_second_round_of_primary_keys(tmp_path):
    """§43.5: the loser's conflict copy takes the primary key of a third item, which then loses in round 2."""
    v1 = G("ann", T0 + 100, b"one")
    cid = M.conflict_copy_id(ident(1), M.Version.of(*v1))
    marked = "ann" + M.marker(ident(1), cid)
    problems = hand_case(str(tmp_path), [("put", ident(1), v1)],
                         [("put", ident(2), G("ann", T0 + 200, b"two")), ("put", ident(3), G(marked, T0 + 50))])
    assert not problems, "\n".join(problems)


def test_marked_attribute_too_long(tmp_path):
    """§43.4: a copy whose attribute would pass 65,535 bytes cannot be made: the merge fails (limitReached)."""
    long = "a" * 65_500
    problems = hand_case(str(tmp_path), [("put", ident(1), G(long, T0 + 100, b"one"))],
                         [("put", ident(1), G(long, T0 + 200, b"two"))])
    assert not problems, "\n".join(problems)


def test_untouched_copy_removed_over_a_later_tombstone(tmp_path):
    """§43.4: an untouched copy whose version is its item's live version again is removed "(a tombstone at the
    version's time + 1)" — here its id already holds a later tombstone (a watermark)."""
    v1 = G("ann", T0 + 100, b"one")
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    entries = [("put", ident(1), v1), ("put", cid, (c.cls, c.attrs, c.secret)), ("tombstone", cid, T0 + 5000)]
    problems = hand_case(str(tmp_path), entries, entries)
    assert not problems, "\n".join(problems)


def test_untouched_copy_removed(tmp_path):
    """§43.4: an untouched copy whose version is its item's live version again is removed."""
    v1 = G("ann", T0 + 100, b"one")
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    problems = hand_case(str(tmp_path), [("put", ident(1), v1), ("put", cid, (c.cls, c.attrs, c.secret))],
                         [("put", ident(1), v1)])
    assert not problems, "\n".join(problems)


def test_id_only_the_base_holds(tmp_path):
    """§43.6 with an id that only the base holds (both sides dropped it and its tombstone, as past a horizon)."""
    problems = hand_case(str(tmp_path), [("put", ident(2), G("bob", T0 + 10))], [("put", ident(3), G("cat", T0 + 10))],
                         base=[("put", ident(1), G("ann", T0 + 10))])
    assert not problems, "\n".join(problems)


def test_equal_versions_under_two_ids(tmp_path):
    """§43.5: two ids holding the very same version (same time, same digest) with one primary key. §43.2 orders
    versions, not ids: "of equal versions under two ids, the greater id" keeps it, whichever copy is OURS. (kcf
    before SPEC said so picked either from run to run on the same inputs.)"""
    v = G("ann", T0 + 100, b"same")
    for n, (a, b) in enumerate(((ident(1), ident(2)), (ident(2), ident(1)))):
        d = tmp_path / str(n)
        d.mkdir()
        for _ in range(4):
            problems = hand_case(str(d), [("put", a, v)], [("put", b, v)])
            assert not problems, "\n".join(problems)
            os.remove(str(d / "out.kcf"))


def test_change_at_the_deletion_time_survives(tmp_path):
    """§43.3 rule 2: "A change made at or after a deletion survives it" — a tombstone equal to the version's time."""
    problems = hand_case(str(tmp_path), [("put", ident(1), G("ann", T0 + 100)), ("delete", ident(1), T0 + 300)],
                         [("put", ident(1), G("ann", T0 + 300, b"changed"))])
    assert not problems, "\n".join(problems)


def test_no_derived_tombstone_at_the_copy_time(tmp_path):
    """§43.3: a derived tombstone needs this copy's tombstone of g *later* than the copy's time t (here equal)."""
    v1 = G("ann", T0 + 100, b"one")
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    problems = hand_case(str(tmp_path), [("put", ident(1), v1), ("delete", ident(1), T0 + 100)],
                         [("put", ident(1), G("ann", T0 + 300, b"two")), ("put", cid, (c.cls, c.attrs, c.secret))])
    assert not problems, "\n".join(problems)


def test_side_without_the_base_tombstone(tmp_path):
    """§43.6: a side without a tombstone keeps the base's (it outlived the horizon); a side without a tombstone and
    without a version where the base holds one deleted it at the base version's time + 1."""
    problems = hand_case(str(tmp_path), [("put", ident(5), G("eve", T0 + 10))],
                         [("tombstone", ident(1), T0 + 50), ("put", ident(2), G("bob", T0 + 100)),
                          ("put", ident(5), G("eve", T0 + 10))],
                         base=[("tombstone", ident(1), T0 + 50), ("put", ident(2), G("bob", T0 + 100)),
                               ("put", ident(5), G("eve", T0 + 10))])
    assert not problems, "\n".join(problems)


def test_copy_of_a_version_without_the_marked_attribute(tmp_path):
    """§43.4: the marker is appended to the account; here the version has no account attribute at all."""
    def bare(t, secret):
        cls, attrs, sec = G("x", t, secret)
        del attrs["account"]
        return cls, attrs, sec
    problems = hand_case(str(tmp_path), [("put", ident(1), bare(T0 + 100, b"one"))],
                         [("put", ident(1), bare(T0 + 200, b"two"))])
    assert not problems, "\n".join(problems)


def test_untouched_copy_of_a_version_without_the_marked_attribute(tmp_path):
    """§43.4: is a copy of a version without an account "untouched"? With the marker taken off the account is "",
    which is not the absent attribute of the version it was made from (the reference: not untouched, so not
    removed when the item holds that version again)."""
    cls, attrs, sec = G("x", T0 + 100, b"one")
    del attrs["account"]
    v1 = (cls, attrs, sec)
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    problems = hand_case(str(tmp_path), [("put", ident(1), v1), ("put", cid, (c.cls, c.attrs, c.secret))],
                         [("put", ident(1), v1)])
    assert not problems, "\n".join(problems)


def test_derived_tombstone(tmp_path):
    """§43.3: THEIRS holds an untouched copy of g made before OURS deleted g: OURS is given a derived tombstone."""
    v1 = G("ann", T0 + 100, b"one")
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    problems = hand_case(str(tmp_path), [("put", ident(1), v1), ("delete", ident(1), T0 + 400)],
                         [("put", ident(1), G("ann", T0 + 300, b"two")), ("put", cid, (c.cls, c.attrs, c.secret))])
    assert not problems, "\n".join(problems)


def test_watermark_tombstone_in_the_items_group(tmp_path):
    """§43.7: "a tombstone entry (03) where the result's tombstone differs from ours's (also for an id that stays live:
    a watermark)" and "A version 3 tombstone entry goes in the page of the group the item is live in". OURS changed
    an item of group "team" after THEIRS deleted it: the change survives (§43.3 rule 2) under THEIRS's tombstone,
    which must go in team's page (§36: a tombstone of an item live in another group than the page's is corrupted)."""
    x = ident(1)
    v = G("ann", T0 + 100, b"one", accessGroup=GROUP)
    problems = hand_case(str(tmp_path), [("put", x, v), ("put", x, G("ann", T0 + 300, b"two", accessGroup=GROUP))],
                         [("put", x, v), ("delete", x, T0 + 200)], version=3)
    assert not problems, "\n".join(problems)


def test_import(tmp_path):
    """§43.1: copies of two keychains (two file ids) with --import: only primary keys collide."""
    if not os.path.exists(CLI):
        pytest.skip(f"no CLI at {CLI}")
    p = lambda name: str(tmp_path / f"{name}.kcf")  # noqa: E731
    for name, seed in (("e1", 5), ("e2", 6)):
        V2.Writer.create(p(name), [CRED], iterations=1000, rng=random.Random(seed), clock=Clock(T0))
    write(p("ours"), [("put", ident(1), G("ann", T0 + 100, b"one")), ("put", ident(2), G("bob", T0 + 1))],
          empty=p("e1"))
    write(p("theirs"), [("put", ident(3), G("ann", T0 + 200, b"two")), ("put", ident(4), G("cat", T0 + 1))],
          empty=p("e2"))
    ref = M.merge(M.load(p("ours"), CRED), M.load(p("theirs"), CRED), importing=True)
    assert ref.shared is None
    r = subprocess.run([CLI, "merge", "--import", "-o", p("out"), p("ours"), p("theirs")],
                       env={**os.environ, "KCF_PASSWORD": PASSWORD}, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    got = M.load(p("out"), CRED)
    assert {i: (it.attributes, it.secret) for i, it in got.items.items()} == \
        {i: (it.attributes, it.secret) for i, it in ref.items.items()}
    assert got.tombstones == ref.file_tombstones(M.load(p("ours"), CRED))


# ---------------------------------------------------------------------------------------------
# §43.9: the history two copies share
# ---------------------------------------------------------------------------------------------

def fork(tmp: str, base: list, ours: list, theirs: list, *, version: int = 2, seeds=(2, 3), part_limit=None):
    """BASE written from the empty keychain, copied to OURS and THEIRS, then each side's commits appended with a writer
    of its own seed (the same seed for both: the same bytes for the same entries). Returns the paths' maker."""
    p = lambda name: os.path.join(tmp, f"{name}.kcf")  # noqa: E731
    write(p("base"), base, version=version, seed=1)
    for name, entries, seed in (("ours", ours, seeds[0]), ("theirs", theirs, seeds[1])):
        shutil.copy(p("base"), p(name))
        append(p(name), entries, version=version, seed=seed, part_limit=part_limit)
    return p


def merged(p, ours: str, theirs: str, out: str) -> tuple:
    """kcf merge OURS THEIRS (no base) against the reference: (disagreements, the reference's result)."""
    ref = M.merge(M.load(p(ours), CRED), M.load(p(theirs), CRED))
    return compare(f"merge({ours}, {theirs})", p(ours), p(theirs), None, p(out)), ref


def as_copies(path: str) -> M.Copy:
    """A copy without its log: §43.3, what a merge without §43.9 would do."""
    kc = M.load(path, CRED)
    return M.Copy(kc.items, kc.tombstones)


def kinds(ref) -> list:
    return sorted(c.kind for c in ref.conflicts)


VERSIONS = pytest.mark.parametrize("version", [2, 3])


@VERSIONS
def test_shared_history_with_an_unchanged_older_copy(tmp_path, version):
    """§43.9 first bullet: a copy that has not changed since the other was copied from it is A itself. Merging it
    into the newer changes nothing; merging the newer into it takes every change (rule 0), no conflict copy — here
    changes a clock behind made: an update older than the version it replaced and a deletion older than the version
    it deleted, which §43.3 would keep as a conflict copy and bring back."""
    grp = {"accessGroup": GROUP} if version == 3 else {}
    p = fork(str(tmp_path),
             [("put", ident(1), G("ann", T0 + 100, b"one")), ("put", ident(2), G("bob", T0 + 100, **grp)),
              ("put", ident(3), G("cat", T0 + 100))],
             [("put", ident(1), G("ann", T0 + 50, b"changed behind")), ("delete", ident(2), T0 + 60),
              [("put", ident(4), G("dan", T0 + 70)), ("put", ident(3), G("cat", T0 + 80, b"three"))]],
             [], version=version)
    problems, ref = merged(p, "ours", "theirs", "m1")                    # the older copy into the newer
    assert ref.shared is not None and ref.shared.a_end == ref.shared.e_theirs < ref.shared.e_ours
    assert kinds(ref) == []
    assert state_of_result(ref) == state_of(p("ours")), "merging the older copy into the newer must change nothing"
    more, ref2 = merged(p, "theirs", "ours", "m2")                       # the newer copy into the older
    problems += more
    assert ref2.shared.a_end == ref2.shared.e_ours and kinds(ref2) == []
    assert state_of_result(ref2)[0] == state_of(p("ours"))[0], "the newer copy's changes are all taken"
    # Without §43.9 (as the copies' contents alone): §43.3 keeps the older version as a conflict copy and brings
    # item 2 back — the case is one where the two differ.
    plain = M.merge(as_copies(p("theirs")), as_copies(p("ours")))
    assert kinds(plain) and ident(2) in plain.items
    assert not problems, "\n".join(problems)


@VERSIONS
def test_shared_history_of_two_forks(tmp_path, version):
    """§43.9: two copies of one file, each changing other items after the fork — rule 0, no conflict copy, even for a
    change made by a clock behind — and both changing one item (§43.3 rule 3: one conflict copy, changed on both
    sides). A change on one side and a deletion on the other are settled by §43.3 rule 2, by their times: item 4's
    change after the deletion survives it (under the deletion's tombstone), item 5's change before it does not."""
    grp = {"accessGroup": GROUP} if version == 3 else {}
    base = [("put", ident(n), G(name, T0 + 100, **(grp if n % 2 else {})))
            for n, name in ((1, "ann"), (2, "bob"), (3, "cat"), (4, "dan"), (5, "eve"))]
    p = fork(str(tmp_path), base,
             [("put", ident(1), G("ann", T0 + 90, b"ours", **grp)), ("put", ident(3), G("cat", T0 + 300, b"o3", **grp)),
              ("put", ident(4), G("dan", T0 + 500, b"changed after the deletion")), ("delete", ident(5), T0 + 400)],
             [("put", ident(2), G("bob", T0 + 90, b"theirs")), ("put", ident(3), G("cat", T0 + 200, b"t3", **grp)),
              ("delete", ident(4), T0 + 450),
              ("put", ident(5), G("eve", T0 + 150, b"changed before the deletion", **grp)),
              ("put", ident(6), G("fay", T0 + 10))],
             version=version)
    problems = []
    for o, t, out in (("ours", "theirs", "m1"), ("theirs", "ours", "m2")):
        more, ref = merged(p, o, t, out)
        problems += more
        assert ref.shared is not None and ref.shared.a_end == M.load(p("base"), CRED).committed_end
        assert kinds(ref) == [M.CHANGED_ON_BOTH_SIDES]
        items = ref.items
        assert items[ident(1)].secret == b"ours" and items[ident(2)].secret == b"theirs"
        assert items[ident(3)].secret == b"o3" and items[ident(4)].secret == b"changed after the deletion"
        assert ident(5) not in items and ref.tombstones[ident(5)] == T0 + 400
        assert ref.tombstones[ident(4)] == T0 + 450
        assert len(items) == 6                       # items 1 … 4, 6 and the conflict copy of item 3's older version
    assert not problems, "\n".join(problems)


@VERSIONS
def test_derived_tombstone_with_a_shared_history(tmp_path, version):
    """§43.9: "Each copy is given its derived tombstones (§43.3). Then, for each id ... o, t and a": THEIRS holds an
    untouched conflict copy of item 1 (made after the fork: A holds nothing at its id), OURS deleted item 1 after the
    copy's time. OURS holds nothing at the copy's id, as A does — but it is given a derived tombstone there, so it is
    not "the same as a" (rule 0), and §43.3 drops the copy: "A deletion of an item deletes the versions it followed".
    (Read without the derived tombstone, rule 0 would take THEIRS's copy, and no derived tombstone could ever act with
    A: a side holds nothing where it is given one, and so does A.)"""
    v1 = G("ann", T0 + 100, b"one")
    cid, c = M.conflict_copy(ident(1), M.Version.of(*v1))
    p = fork(str(tmp_path), [("put", ident(1), v1)], [("delete", ident(1), T0 + 400)],
             [("put", ident(1), G("ann", T0 + 300, b"two")), ("put", cid, (c.cls, c.attrs, c.secret))],
             version=version)
    problems = []
    for o, t, out in (("ours", "theirs", "m1"), ("theirs", "ours", "m2")):
        more, ref = merged(p, o, t, out)
        problems += more
        assert ref.shared.base is not None and "derived tombstone" in ref.events
        assert ref.items == {} and ref.tombstones == {ident(1): T0 + 400, cid: T0 + 101}
    assert not problems, "\n".join(problems)


@VERSIONS
def test_no_shared_history_after_a_compaction(tmp_path, version):
    """§43.9 second bullet: a copy rewritten (kcf compact) since the copies parted shares no history with the other
    (another epoch): the merge is §43.3's, and a change made on one side only is kept beside the other's version as a
    conflict copy."""
    if not os.path.exists(CLI):
        pytest.skip(f"no CLI at {CLI}")
    p = fork(str(tmp_path), [("put", ident(1), G("ann", T0 + 100, b"one")), ("put", ident(2), G("bob", T0 + 100))],
             [("put", ident(1), G("ann", T0 + 300, b"ours"))], [("put", ident(2), G("bob", T0 + 300, b"theirs"))],
             version=version)
    problems = []
    for name in ("ours", "theirs"):
        before = f"{name}_compacted"
        shutil.copy(p(name), p(before))
        status, text = compact(p(before))
        assert status == 0, text
        other = "theirs" if name == "ours" else "ours"
        for o, t in ((before, other), (other, before)):
            more, ref = merged(p, o, t, f"m_{o}_{t}")
            problems += more
            assert ref.shared is None or ref.shared.base is None, "a rewrite since the fork: no shared history"
            assert kinds(ref) == [M.CHANGED_ON_BOTH_SIDES] * 2
    assert not problems, "\n".join(problems)


@VERSIONS
def test_shared_history_ends_inside_a_transaction_in_parts(tmp_path, version):
    """§43.9 condition 3: the logs differ inside a transaction written in parts (§24.6) — both copies hold its first
    part, byte for byte, then another second record. A_end is the commit end before the transaction, not the end of
    the part they share: A holds nothing of it. OURS's transaction puts item 5 and deletes it again (at a time before
    the put's: a clock behind); THEIRS's puts it (the same part) and keeps it. With A before the transaction both
    changed item 5, and §43.3 rule 2 keeps the version, later than the deletion; with the part's put in A, THEIRS
    would not have changed it (rule 0) and OURS's deletion would win."""
    v5 = G("eve", T0 + 200, b"five")
    p = fork(str(tmp_path), [("put", ident(1), G("ann", T0 + 100))],
             [[("put", ident(5), v5), ("put", ident(6), G("fay", T0 + 200)), ("delete", ident(5), T0 + 190)]],
             [[("put", ident(5), v5), ("put", ident(7), G("gus", T0 + 200))]],
             version=version, seeds=(7, 7), part_limit=1)
    o, t = M.load(p("ours"), CRED), M.load(p("theirs"), CRED)
    parts = [r for r in o.records if r.kind == 3]
    assert len(parts) == 2, "the transaction is written in parts"
    first_part_end = parts[0].offset + parts[0].length                 # RecordInfo.length: the whole record
    sh = M.shared_history(o, t)
    assert parts[0].offset < first_part_end <= sh.d < o.committed_end, "the copies share the first part"
    assert sh.a_end == parts[0].offset == M.load(p("base"), CRED).committed_end
    problems = []
    for a, b, out in (("ours", "theirs", "m1"), ("theirs", "ours", "m2")):
        more, ref = merged(p, a, b, out)
        problems += more
        assert ident(5) in ref.items and ref.tombstones[ident(5)] == T0 + 190 and kinds(ref) == []
    assert not problems, "\n".join(problems)


@VERSIONS
def test_shared_history_ends_where_a_record_was_rebuilt(tmp_path, version):
    """§43.9 condition 4: THEIRS is a copy of OURS whose last record never reached the file (cut off after its commit
    slot was written): the reader rebuilds it from the slot's parity (§25.5) and applies it, so E_t includes it, but
    THEIRS does not store its bytes — nor the chain value its replay verified at E_t. So the copies share no history
    (condition 4; condition 2 alone would end it before that record), and item 1, changed in that record and again in
    OURS after it, is settled by §43.3: changed on both sides (the newer kept, the other as a conflict copy), which a
    shared history including the rebuilt record would take as changed in OURS only."""
    p = fork(str(tmp_path), [("put", ident(1), G("ann", T0 + 100, b"one")), ("put", ident(2), G("bob", T0 + 100))],
             [("put", ident(1), G("ann", T0 + 200, b"rebuilt"))], [], version=version, seeds=(2, 2))
    base_end = M.load(p("base"), CRED).committed_end
    shutil.copy(p("ours"), p("theirs"))
    layout = getattr(M.load(p("theirs"), CRED), "layout", V2.V2_LAYOUT)
    with open(p("theirs"), "r+b") as f:
        f.truncate(layout.physical(base_end))
    t = M.load(p("theirs"), CRED)
    assert t.committed_end > base_end and t.items[ident(1)].secret == b"rebuilt", "the record is rebuilt"
    append(p("ours"), [("put", ident(1), G("ann", T0 + 300, b"after"))], version=version, seed=3)
    problems = []
    for o_, t_, out in (("ours", "theirs", "m1"), ("theirs", "ours", "m2")):
        more, ref = merged(p, o_, t_, out)
        problems += more
        assert ref.shared is None
        assert kinds(ref) == [M.CHANGED_ON_BOTH_SIDES] and ref.items[ident(1)].secret == b"after"
    assert not problems, "\n".join(problems)


def test_an_import_takes_no_shared_history(tmp_path):
    """§43.9 condition 1: "The merge does not import" — copies of one keychain merged with --import (allowed: §43.1
    only refuses different file ids without it) are merged by §43.3 however much history they share."""
    if not os.path.exists(CLI):
        pytest.skip(f"no CLI at {CLI}")
    p = fork(str(tmp_path), [("put", ident(1), G("ann", T0 + 100, b"one"))],
             [("put", ident(1), G("ann", T0 + 200, b"ours"))], [])
    ours, theirs = M.load(p("ours"), CRED), M.load(p("theirs"), CRED)
    ref = M.merge(ours, theirs, importing=True)
    assert ref.shared is None and kinds(ref) == [M.CHANGED_ON_BOTH_SIDES]
    assert M.merge(ours, theirs).shared.base is not None and kinds(M.merge(ours, theirs)) == []
    r = subprocess.run([CLI, "merge", "--import", "-o", p("out"), p("ours"), p("theirs")],
                       env={**os.environ, "KCF_PASSWORD": PASSWORD}, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    got = M.load(p("out"), CRED)
    assert {i: (it.attributes, it.secret) for i, it in got.items.items()} == \
        {i: (it.attributes, it.secret) for i, it in ref.items.items()}, r.stdout + r.stderr
    assert got.tombstones == ref.file_tombstones(ours)


def test_shared_history_ends_at_damage(tmp_path):
    """§43.9 condition 2 and third bullet: bytes are compared as each file stores them, parity not applied. THEIRS's
    second record has a byte flipped that parity repairs when it is read: the shared history ends before that record,
    A holds item 1 only, and item 3 — changed on one side — is read as added on both: one conflict copy a shared
    history to the end of BASE would not keep. Never a wrong A: items 1 and 2 merge as they are."""
    p = fork(str(tmp_path), [("put", ident(1), G("ann", T0 + 100)), ("put", ident(2), G("bob", T0 + 100)),
                             ("put", ident(3), G("cat", T0 + 100))],
             [("put", ident(1), G("ann", T0 + 300, b"ours"))], [("put", ident(3), G("cat", T0 + 300, b"theirs"))])
    b = M.load(p("base"), CRED)
    second = b.records[1]
    flipped = second.offset + second.length - 1               # the record's last byte: its page's GCM tag
    at = V2.physical(flipped)
    with open(p("theirs"), "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x5A]))
    t = M.load(p("theirs"), CRED)
    assert t.repaired_log, "the reader repairs the byte through parity"
    problems = []
    for o_, t_, out in (("ours", "theirs", "m1"), ("theirs", "ours", "m2")):
        more, ref = merged(p, o_, t_, out)
        problems += more
        assert ref.shared.d == flipped and ref.shared.a_end == second.offset
        assert kinds(ref) == [M.CHANGED_ON_BOTH_SIDES] and ref.items[ident(1)].secret == b"ours"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_merge_matches_reference(seed, tmp_path):
    if not os.path.exists(CLI):
        pytest.skip(f"no CLI at {CLI}")
    count, problems = run_seed(seed, str(tmp_path))
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    seeds = [int(s) for s in sys.argv[1:]] or list(range(SEEDS))
    total, bad = 0, 0
    for s in seeds:
        with tempfile.TemporaryDirectory() as d:
            try:
                n, problems = run_seed(s, d)
            except Exception as e:  # noqa: BLE001
                print(f"seed {s}: ERROR {type(e).__name__}: {e}")
                bad += 1
                continue
        total += n
        if problems:
            bad += 1
            print("\n".join(problems))
            print()
    print(f"{len(seeds)} seeds, {total} merges compared, {bad} seeds with disagreements")
    for k, n in sorted(COVERAGE.items()):
        print(f"  {n:6}  {k}")
