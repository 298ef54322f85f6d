"""Fixtures/v3: every manifest there (the Swift-written ones and the reference's own reference-*) checked by
check_fixtures.py with the version 3 reference reader and writer; the reference-* files reproduced byte for byte by
reference_fixtures_v3.py; and check_fixtures' version 3 fields shown to catch a wrong manifest.

    cd Scripts/reference && python3 -m pytest -q test_fixtures_v3.py
"""

import copy
import glob
import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_fixtures as C  # noqa: E402
import reference_fixtures_v3 as F  # noqa: E402

V3_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "v3"))
REFERENCE_NAMES = ["reference-empty", "reference-groups", "reference-scoped-writes", "reference-scoped-compaction",
                   "reference-full-compaction", "reference-transaction-in-parts", "reference-remnant",
                   "reference-undone-transaction", "reference-three-chunks", "reference-repaired",
                   "reference-group-added", "reference-forged-dropped-page",
                   "reference-forged-dropped-page-head-fixed", "reference-forged-heads-without-group",
                   "reference-forged-chain-start-epoch", "reference-forged-chain-start-unknown-key-id",
                   "reference-forged-rewrite-head-zero", "reference-forged-pages-swapped",
                   "reference-forged-page-repeated", "reference-forged-put-into-other-group",
                   "reference-forged-page-padding-nonzero", "reference-forged-page-padding-length",
                   "reference-forged-head-sequence-zero", "reference-forged-unknown-key-id",
                   "reference-forged-runs-of-two-files", "reference-forged-later-run-mac-bad",
                   "reference-forged-rewrite-without-group", "reference-forged-page-ciphertext-changed",
                   "reference-forged-last-page-dropped", "reference-forged-chain-start-malformed-one-run",
                   "reference-forged-chain-start-malformed-both-runs", "reference-forged-last-page-dropped-head-kept",
                   "reference-forged-heads-without-group-after-damage",
                   "reference-pinned-scoped-rollback",
                   "reference-pinned-own-group-rollback", "reference-pinned-rewrites", "reference-pinned-group-added",
                   "reference-pinned-group-dropped", "reference-pinned-fork-compacted"]


def test_fixtures_v3_all_match_the_reference_reader():
    """Every manifest of Fixtures/v3 — at least the reference's own, whether or not Swift-written ones are there."""
    manifests = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(V3_DIR, "*.json"))}
    assert set(REFERENCE_NAMES) <= manifests, sorted(set(REFERENCE_NAMES) - manifests)
    assert C.main([V3_DIR]) == 0


def test_the_reference_files_are_what_the_writer_writes(tmp_path):
    target = tmp_path / "v3"
    assert C.main(["--write-reference", str(target)]) == 0
    written = sorted(os.listdir(target))
    assert written == sorted(f"{n}.{e}" for n in REFERENCE_NAMES for e in ("json", "kcf"))
    stored = sorted(os.path.basename(p) for p in glob.glob(os.path.join(V3_DIR, "reference-*")))
    assert stored == written
    for name in written:
        with open(target / name, "rb") as a, open(os.path.join(V3_DIR, name), "rb") as b:
            assert a.read() == b.read(), f"{name} differs from what reference_fixtures_v3.py writes"


def test_the_manifests_are_not_read_back_from_the_files():
    """The generator's manifests follow its model, not the reader: a model changed after writing would show."""
    w, model, ids = F.groups_file(302)
    before = F.expect(model, w)
    model.items.pop(next(iter(model.items)))
    assert F.expect(model, w)["items"] != before["items"]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """reference-group-added (a full credential, a scoped one, a wrong one), reference-remnant and
    reference-pinned-group-dropped (pins), copied."""
    d = tmp_path_factory.mktemp("v3-base")
    for name in ("reference-group-added", "reference-remnant", "reference-pinned-group-dropped"):
        for ext in ("json", "kcf"):
            shutil.copyfile(os.path.join(V3_DIR, f"{name}.{ext}"), d / f"{name}.{ext}")
    return d


def run_mutated(base, tmp_path, change, name="reference-group-added"):
    with open(base / f"{name}.json", encoding="utf-8") as f:
        m = json.load(f)
    m2 = copy.deepcopy(m)
    change(m2)
    assert m2 != m
    d = tmp_path / "m"
    d.mkdir()
    shutil.copyfile(base / f"{name}.kcf", d / f"{name}.kcf")
    (d / f"{name}.json").write_text(json.dumps(m2))
    return C.main([str(d)])


def test_the_unchanged_manifests_match(base):
    """The base manifests, pins included, as written."""
    assert C.main([str(base)]) == 0


def _flip_tag(h):
    h["lastTag"] = ("0" if h["lastTag"][0] != "0" else "1") + h["lastTag"][1:]


@pytest.mark.parametrize("change", [
    lambda m: _flip_tag(m["expect"]["groupHeads"][0]),
    lambda m: m["expect"]["groupHeads"][2].update(sequence=m["expect"]["groupHeads"][2]["sequence"] + 1),
    lambda m: m["expect"]["groupHeads"][1].update(startEpoch=1),
    lambda m: m["expect"]["groupHeads"].pop(),
    lambda m: m["expect"]["groupHeads"].reverse(),
    lambda m: m["expect"]["groupHeads"][0].update(extra=1),
    lambda m: m["expect"].update(groups=[g for g in m["expect"]["groups"] if g]),
    lambda m: m["expect"].update(groups=list(reversed(m["expect"]["groups"]))),
    lambda m: m.update(scope=[""]),
    lambda m: m.pop("scope"),
    lambda m: m["expect"]["head"].update(sequence=m["expect"]["head"]["sequence"] - 1),
    lambda m: m.update(unknownField=1),
    lambda m: m["otherCredentials"][0].update(scope=None),
    lambda m: m["otherCredentials"][0]["expect"].update(groups=["", "com.example.mail"]),
    lambda m: m["otherCredentials"][0]["expect"]["items"].pop(),
    lambda m: _flip_tag(m["otherCredentials"][0]["expect"]["groupHeads"][2]),
    lambda m: m["otherCredentials"][0].update(unknownField=1),
    lambda m: m["otherCredentials"][1]["expect"].update(error="corrupted"),
    lambda m: m["otherCredentials"][1].update(scope=["com.example.mail"]),
    lambda m: m["otherCredentials"][1]["credential"].update(password="correct horse battery staple"),
    lambda m: m.update(otherCredentials={}),
], ids=["head tag", "head sequence", "head start epoch", "a head missing", "heads unsorted", "head field",
        "groups missing the default", "groups unsorted", "scope", "scope absent", "head", "top field",
        "other's scope", "other's groups", "other's items", "other's head tag", "other's field", "wrong's error",
        "wrong's scope", "wrong opens", "others not a list"])
def test_check_fixtures_v3_finds_each_wrong_field(base, tmp_path, change):
    assert run_mutated(base, tmp_path, change) == 1


@pytest.mark.parametrize("change", [
    lambda m: m["expect"].update(tornTail=None),
    lambda m: m["expect"]["tornTail"].update(offset=m["expect"]["tornTail"]["offset"] + 1),
    lambda m: m["otherCredentials"][0]["expect"].update(repaired=True),
], ids=["torn tail", "torn tail offset", "other's repaired"])
def test_check_fixtures_v3_finds_a_wrong_tail(base, tmp_path, change):
    assert run_mutated(base, tmp_path, change, "reference-remnant") == 1


def _flip_outcome(p):
    p["outcome"] = "opens" if p["outcome"] == "rolledBack" else "rolledBack"


@pytest.mark.parametrize("change", [
    lambda m: _flip_outcome(m["pins"][0]),
    lambda m: _flip_outcome(m["pins"][3]),
    lambda m: m["pins"][3].update(head=m["pins"][0]["head"]),
    lambda m: m["pins"][0].update(head=m["pins"][0]["head"] + "/"),
    lambda m: m["pins"][0].update(outcome="fails"),
    lambda m: m["pins"][0].update(extra=1),
    lambda m: m["pins"][0]["credential"].update(password="not this keychain's password"),
    lambda m: m.update(pins={}),
    lambda m: m.update(pins=[]),
], ids=["rolledBack said opens", "opens said rolledBack", "another head", "malformed head", "outcome not understood",
        "pin field", "wrong credential", "pins not a list", "pins empty"])
def test_check_fixtures_v3_finds_a_wrong_pin(base, tmp_path, change):
    assert run_mutated(base, tmp_path, change, "reference-pinned-group-dropped") == 1
