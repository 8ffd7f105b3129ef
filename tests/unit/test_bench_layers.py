"""The layer labelled set (bench/data/layers/) and its scoring (bench/layers_score.py), with hand-made
predictions whose scores are worked out by hand; then one real run of `palimpsest bench layers`."""
from __future__ import annotations

import copy
import json
from datetime import date

import pytest
from typer.testing import CliRunner

from bench.cli import bench_app
from bench.layers import markdown, run, write
from bench.layers_data import DATA_DIR, load_manifest, load_set, parse_conversation
from bench.layers_score import (
    PredAssertion,
    PredEntity,
    PredTime,
    b3,
    norm,
    prf,
    score_assertions,
    score_entities,
    score_times,
)

RAW = {
    "id": "x-sisters",
    "register": "friends",
    "sessions": [
        {"start": "2023-05-20T18:00:00Z", "turns": [
            ["Maya", "I live in Portland. My sister Leah visited last Saturday."],
            ["Jon", "Nice! See you a while ago, ha."],
        ]},
        {"start": "2023-06-25T16:00:00Z", "turns": [
            ["Maya", "I moved to Seattle! Leah lives in Belém now."],
        ]},
    ],
    "entities": [
        {"id": "maya", "name": "Maya"},
        {"id": "jon", "name": "Jon"},
        {"id": "leah", "name": "Leah", "aliases": ["Maya's sister"]},
        {"id": "portland", "name": "Portland"},
        {"id": "seattle", "name": "Seattle"},
        {"id": "belem", "name": "Belém"},
    ],
    "assertions": [
        {"id": "a1", "turn": "s1t1", "says": "I live in Portland", "entity": "maya", "attribute": "lives_in", "value": "Portland"},
        {"id": "a2", "turn": "s2t1", "says": "I moved to Seattle", "entity": "maya", "attribute": "lives_in", "value": "Seattle",
         "supersedes": ["a1"]},
        {"id": "a3", "turn": "s2t1", "says": "Leah lives in Belém", "entity": "leah", "attribute": "lives_in", "value": "Belém"},
    ],
    "times": [
        {"turn": "s1t1", "text": "last Saturday", "start": "2023-05-13", "end": "2023-05-14"},
        {"turn": "s1t2", "text": "a while ago", "start": None},
    ],
}
D1, D2 = date(2023, 5, 20), date(2023, 6, 25)


def conv():
    return parse_conversation(copy.deepcopy(RAW))


def test_the_shipped_set_has_twenty_conversations_six_of_them_held_apart_in_varied_registers():
    manifest = load_manifest()
    assert len(manifest["test"]) == 6
    assert not set(manifest["dev"]) & set(manifest["test"])
    convs = load_set("all")
    assert len(convs) >= 20
    assert [c.id for c in load_set("test")] == manifest["test"]
    assert len({c.register for c in convs}) >= 5
    assert all(len({t.at.date() for t in c.turns}) >= 2 for c in convs), "every conversation has several sessions"
    assert sum(len(a.supersedes) for c in convs for a in c.assertions) >= 20
    assert any("'s " in f for c in convs for e in c.entities for f in e.aliases), "possessive aliases are labelled"


def test_turns_get_ids_and_times_and_validity_defaults_follow_supersession():
    c = conv()
    assert [t.id for t in c.turns] == ["s1t1", "s1t2", "s2t1"]
    assert c.turn("s1t2").at.minute == 1  # one minute per turn within a session
    a1 = next(a for a in c.assertions if a.id == "a1")
    assert (a1.valid_from, a1.valid_to) == (D1, D2)  # ends where the assertion superseding it starts
    assert c.times[0].char_start == RAW["sessions"][0]["turns"][0][1].index("last Saturday")


@pytest.mark.parametrize("path, value, message", [
    (("assertions", 0, "says"), "I live in Boston", "'I live in Boston' is not in turn s1t1"),
    (("assertions", 0, "entity"), "nobody", "unknown entity 'nobody'"),
    (("assertions", 1, "supersedes"), ["a9"], "supersedes unknown 'a9'"),
    (("times", 0, "text"), "last Sunday", "'last Sunday' is not in turn s1t1"),
    (("times", 0, "start"), "2023-13-01", "is not an ISO day"),
    (("entities", 1, "name"), "Jonathan", "speaker 'Jon' is not an entity"),
])
def test_a_typo_in_the_gold_fails_loudly_naming_the_place(path, value, message):
    raw = copy.deepcopy(RAW)
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError) as exc:
        parse_conversation(raw)
    assert message in str(exc.value) and "x-sisters" in str(exc.value)


def test_norm_keeps_diacritics_and_drops_punctuation_case_articles_titles_possessives():
    assert norm("Seattle!") == norm("seattle") == "seattle"
    assert norm("Belém") != norm("Bel") and norm("Belém") == "belém"
    assert norm("The Louvre’s") == "louvre"
    assert norm("Dr. Okafor") == "okafor"
    assert norm("Maya's sister") == "maya's sister"


def test_perfect_predictions_score_one_and_possessive_entities_map_to_their_cluster():
    c = conv()
    preds = [
        PredAssertion("p1", "s1t1", "Maya", "lives_in", "Portland", D1, superseded_by="p2"),
        PredAssertion("p2", "s2t1", "Maya", "lives_in", "Seattle!", D2),
        PredAssertion("p3", "s2t1", "Maya's sister", "lives_in", "Belém", D2),  # "Maya's sister" is Leah
    ]
    a, s, errors = score_assertions(c, preds)
    assert prf(a["tp"], a["fp"], a["fn"])["f1"] == 1.0
    assert prf(s["tp"], s["fp"], s["fn"])["f1"] == 1.0
    assert a["validity_exact"] == 3 and errors == []


def test_a_wrong_value_is_a_false_hit_and_a_miss_and_its_supersession_is_false_too():
    c = conv()
    preds = [
        PredAssertion("p1", "s1t1", "Maya", "lives_in", "Portland", D1, superseded_by="p2"),
        PredAssertion("p2", "s2t1", "Maya", "lives_in", "Seattle on June", D2),  # value cut wrongly
        PredAssertion("p3", "s2t1", "Leah", "lives_in", "Bel", D2),  # diacritic lost
    ]
    a, s, errors = score_assertions(c, preds)
    assert (a["tp"], a["fp"], a["fn"]) == (1, 2, 2)
    assert (s["tp"], s["fp"], s["fn"]) == (0, 1, 1)
    assert prf(1, 2, 2) == {"precision": 0.3333, "recall": 0.3333, "f1": 0.3333, "tp": 1, "fp": 2, "fn": 2}
    # Portland's interval still ends on 25 June, when the (wrongly valued) newer assertion came
    assert a["validity_exact"] == 1
    assert any("assertion missed" in e and "Belém" in e for e in errors)
    assert any(e.startswith("supersession false") for e in errors)


def test_validity_of_a_matched_assertion_never_superseded_runs_on():
    preds = [PredAssertion("p1", "s1t1", "Maya", "lives_in", "Portland", D1)]
    a, _, _ = score_assertions(conv(), preds)
    assert (a["tp"], a["validity_exact"], a["validity_overlap"]) == (1, 0, 1)  # gold ends it on 25 June
    late = [PredAssertion("p1", "s1t1", "Maya", "lives_in", "Portland", date(2023, 7, 1))]
    a, _, _ = score_assertions(conv(), late)
    assert (a["validity_exact"], a["validity_overlap"]) == (0, 0)


def test_no_predictions_means_zero_recall_and_no_false_hits():
    a, s, _ = score_assertions(conv(), [])
    assert prf(a["tp"], a["fp"], a["fn"])["recall"] == 0.0 and a["fp"] == 0
    assert prf(s["tp"], s["fp"], s["fn"]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "tp": 0, "fp": 0, "fn": 1}


def test_time_spans_exact_overlap_missed_spurious_and_vague_ignored():
    c = conv()
    text = c.turn("s1t1").text
    i = text.index("last Saturday")
    exact = PredTime("s1t1", i, i + 13, "last Saturday", date(2023, 5, 13), date(2023, 5, 14))
    week = PredTime("s1t1", i, i + 13, "last Saturday", date(2023, 5, 8), date(2023, 5, 15))  # overlaps only
    wrong_year = PredTime("s1t1", i + 5, i + 13, "Saturday", date(2022, 5, 14), date(2022, 5, 15))
    vague = PredTime("s1t2", 11, 22, "a while ago", None, None)
    spurious = PredTime("s2t1", 0, 1, "I", date(2023, 1, 1), date(2023, 1, 2))
    t, _ = score_times(c, [exact, vague])
    assert (t["gold"], t["exact"], t["overlap"], t["spurious"]) == (1, 1, 1, 0)  # the vague one is not scored
    t, _ = score_times(c, [week, spurious])
    assert (t["exact"], t["overlap"], t["detected"], t["spurious"], t["predicted"]) == (0, 1, 1, 1, 2)
    t, errors = score_times(c, [wrong_year])
    assert (t["exact"], t["overlap"], t["detected"]) == (0, 0, 1)
    assert "no overlap" in errors[0]
    t, errors = score_times(c, [])
    assert (t["gold"], t["detected"]) == (1, 0) and errors[0].startswith("time missed")


def test_entity_clusters_exact_match_split_alias_and_b_cubed():
    c = conv()
    merged = [PredEntity(("Maya",)), PredEntity(("Jon",)), PredEntity(("Leah", "Maya's sister")),
              PredEntity(("Portland",)), PredEntity(("Seattle!",)), PredEntity(("Belém",)), PredEntity(("pottery class",))]
    e, _ = score_entities(c, merged)
    assert (e["tp"], e["fp"], e["fn"]) == (6, 0, 0)  # "pottery class" touches no gold form: not counted
    assert b3(e)["f1"] == 1.0
    split = [PredEntity(("Maya",)), PredEntity(("Jon",)), PredEntity(("Leah",)), PredEntity(("Maya's sister",)),
             PredEntity(("Portland",)), PredEntity(("Seattle",)), PredEntity(("Bel",))]
    e, errors = score_entities(c, split)
    assert (e["tp"], e["fp"], e["fn"]) == (4, 2, 2)  # Leah split in two; Belém never found
    assert b3(e)["precision"] == 1.0 and b3(e)["recall"] < 1.0
    e, _ = score_entities(c, split, skip_speaker_only=True)
    assert (e["tp"], e["fp"], e["fn"]) == (2, 2, 2)  # Maya and Jon (speakers alone) left out
    assert any("entity missed" in x and "belém" in x for x in errors)


def test_a_run_of_the_product_layers_writes_json_and_markdown_without_the_test_errors(tmp_path):
    data = tmp_path / "layers"
    (data / "conversations").mkdir(parents=True)
    (data / "conversations" / "x-sisters.json").write_text(json.dumps(RAW), encoding="utf-8")
    (data / "conversations" / "y-sisters.json").write_text(json.dumps({**RAW, "id": "y-sisters"}), encoding="utf-8")
    (data / "manifest.json").write_text(json.dumps({"dev": ["x-sisters"], "test": ["y-sisters"]}), encoding="utf-8")
    result = run("all", data)
    assert set(result["splits"]) == {"dev", "test"} and result["dataset"]["dev"] == 1
    m = result["splits"]["dev"]
    assert {"assertions", "supersessions", "times", "entities"} <= set(m)
    assert 0.0 <= m["assertions"]["f1"] <= 1.0 and m["times"]["gold"] == 1
    assert m["assertions"]["tp"] + m["assertions"]["fn"] == 3
    assert m == result["splits"]["test"]  # the same conversation scores the same under either split
    paths = write(result, tmp_path / "out", tag="t")
    saved = json.loads(paths["json"].read_text())
    assert saved["benchmark"] == "layers" and "test" not in saved["errors"]
    assert saved["errors_withheld"]["test"] == len(result["errors"]["test"])
    md = paths["markdown"].read_text()
    assert "| dev | 1 |" in md and "| test | 1 |" in md and "| y-sisters | test |" in md
    if result["errors"]["test"]:
        assert "not shown (held apart" in markdown(result, errors=5)
        assert not any(e in markdown(result, errors=50) for e in result["errors"]["test"] if "y-sisters" in e)
    assert "y-sisters" in markdown(run("test", data), errors=50)


def test_the_cli_scores_the_dev_split_and_refuses_an_unknown_split(tmp_path):
    # a small copy of the set (three dev conversations, one test): the split handling is the same at any size, and the
    # whole dev split (400 conversations and growing) took over a minute of the unit ring
    manifest = load_manifest()
    data = tmp_path / "set"
    (data / "conversations").mkdir(parents=True)
    kept = {"dev": manifest["dev"][:3], "test": manifest["test"][:1]}
    for cid in kept["dev"] + kept["test"]:
        (data / "conversations" / f"{cid}.json").write_text((DATA_DIR / "conversations" / f"{cid}.json").read_text())
    (data / "manifest.json").write_text(json.dumps(kept))
    runner = CliRunner()
    out = runner.invoke(bench_app, ["layers", "--split", "dev", "--data-dir", str(data), "--out-dir", str(tmp_path),
                                    "--errors", "3"])
    assert out.exit_code == 0, out.output
    assert "| dev | 3 |" in out.output and "| test |" not in out.output
    assert len(list(tmp_path.glob("layers-*.json"))) == 1
    bad = runner.invoke(bench_app, ["layers", "--split", "validation", "--no-save"])
    assert bad.exit_code == 2 and "--split is dev, test or all" in bad.output
