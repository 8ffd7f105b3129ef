"""The one Recipe and what is derived from it: settings, the request's "pipeline", the SDK, the ablation."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.api.schemas import QueryIn
from app.domain.recipe import DEFAULT, HYBRID_RRF, LEXICAL_ONLY, RECIPES, Recipe
from app.settings import Settings

# The default pipeline before the recipe was declared once (field for field, as `describe()` echoes it).
SHIPPED = {
    "lexical": True, "dense": True, "derived": False, "findable": True, "graph": True, "bundle": True, "expansion": False,
    "separation": True, "lexical_weight": 1.0, "dense_weight": 1.0, "rrf_k": 60, "candidate_pool": 100,
    "window": True, "window_max_days": 92, "recency": True, "intent": True, "intent_weights": True,
    "reweight": True, "learned": True, "learned_priors": True, "current_first": True, "asker": True, "asker_beta": 1.0, "addressee_beta": 0.5, "speaker_beta": 0.25,
    "reweight_depth": 100, "salience_floor": None, "rerank": False,
    "rerank_top_n": 20, "rerank_alpha": 0.55, "exchanges": True, "exchange_depth": 5, "neighbours": 1, "neighbour_of": 5, "summaries": False,
    "notice": True, "compact_stamps": True, "abstain_learned": True, "abstain_dense_floor": 0.31, "abstain_rerank_floor": 0.52,
}
# The documented variable of every field (README's configuration table), and a value other than its default.
ENV = {
    "lexical": ("PALIMPSEST_LEXICAL_ENABLED", "false", False),
    "dense": ("PALIMPSEST_DENSE_ENABLED", "false", False),
    "derived": ("PALIMPSEST_DERIVED_ENABLED", "true", True),
    "findable": ("PALIMPSEST_FINDABLE_ENABLED", "false", False),
    "graph": ("PALIMPSEST_GRAPH_ENABLED", "false", False),
    "bundle": ("PALIMPSEST_BUNDLE_ENABLED", "false", False),
    "expansion": ("PALIMPSEST_EXPANSION_ENABLED", "true", True),
    "separation": ("PALIMPSEST_SEPARATION_ENABLED", "false", False),
    "lexical_weight": ("PALIMPSEST_LEXICAL_WEIGHT", "2.5", 2.5),
    "dense_weight": ("PALIMPSEST_DENSE_WEIGHT", "0.5", 0.5),
    "rrf_k": ("PALIMPSEST_RRF_K", "30", 30),
    "candidate_pool": ("PALIMPSEST_CANDIDATE_POOL", "50", 50),
    "window": ("PALIMPSEST_WINDOW_ENABLED", "false", False),
    "window_max_days": ("PALIMPSEST_WINDOW_MAX_DAYS", "31", 31),
    "recency": ("PALIMPSEST_RECENCY_ENABLED", "false", False),
    "intent": ("PALIMPSEST_INTENT_ENABLED", "false", False),
    "intent_weights": ("PALIMPSEST_INTENT_WEIGHTS_ENABLED", "false", False),
    "reweight": ("PALIMPSEST_REWEIGHT_ENABLED", "false", False),
    "learned": ("PALIMPSEST_LEARNED_ENABLED", "false", False),
    "current_first": ("PALIMPSEST_CURRENT_FIRST_ENABLED", "false", False),
    "learned_priors": ("PALIMPSEST_LEARNED_PRIORS_ENABLED", "false", False),
    "asker": ("PALIMPSEST_ASKER_ENABLED", "false", False),
    "asker_beta": ("PALIMPSEST_ASKER_BETA", "0.5", 0.5),
    "addressee_beta": ("PALIMPSEST_ADDRESSEE_BETA", "0.25", 0.25),
    "speaker_beta": ("PALIMPSEST_SPEAKER_PRIOR_BETA", "0", 0.0),
    "reweight_depth": ("PALIMPSEST_REWEIGHT_DEPTH", "40", 40),
    "salience_floor": ("PALIMPSEST_SALIENCE_FLOOR", "0.2", 0.2),
    "rerank": ("PALIMPSEST_RERANK_ENABLED", "true", True),
    "rerank_top_n": ("PALIMPSEST_RERANK_TOP_N", "50", 50),
    "rerank_alpha": ("PALIMPSEST_RERANK_ALPHA", "0.7", 0.7),
    "exchanges": ("PALIMPSEST_EXCHANGES_ENABLED", "false", False),
    "exchange_depth": ("PALIMPSEST_EXCHANGE_DEPTH", "3", 3),
    "neighbours": ("PALIMPSEST_CONTEXT_NEIGHBOURS", "2", 2),
    "neighbour_of": ("PALIMPSEST_CONTEXT_NEIGHBOUR_OF", "3", 3),
    "summaries": ("PALIMPSEST_CONTEXT_SUMMARIES", "true", True),
    "notice": ("PALIMPSEST_CONTEXT_NOTICE", "false", False),
    "compact_stamps": ("PALIMPSEST_CONTEXT_COMPACT_STAMPS", "false", False),
    "abstain_learned": ("PALIMPSEST_ABSTAIN_LEARNED", "false", False),
    "abstain_dense_floor": ("PALIMPSEST_ABSTAIN_DENSE_FLOOR", "0.4", 0.4),
    "abstain_rerank_floor": ("PALIMPSEST_ABSTAIN_RERANK_FLOOR", "0.6", 0.6),
}


@pytest.fixture
def clean_env(monkeypatch):
    for var, _, _ in ENV.values():
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_the_default_recipe_is_the_shipped_pipeline(clean_env):
    assert Recipe.from_settings(Settings(_env_file=None)).describe() == SHIPPED
    assert DEFAULT.describe() == SHIPPED and list(DEFAULT.describe()) == list(SHIPPED)


def test_every_field_has_its_documented_variable():
    assert set(ENV) == set(Recipe.model_fields)
    for name, (var, _, _) in ENV.items():
        assert "PALIMPSEST_" + Recipe.setting(name).upper() == var


@pytest.mark.parametrize("name", list(ENV))
def test_the_variable_of_each_field_reaches_the_recipe(clean_env, name):
    var, raw, value = ENV[name]
    assert SHIPPED[name] != value
    clean_env.setenv(var, raw)
    recipe = Recipe.from_settings(Settings(_env_file=None))
    assert getattr(recipe, name) == value
    assert {k: v for k, v in recipe.describe().items() if k != name} == {k: v for k, v in SHIPPED.items() if k != name}


def test_a_variable_out_of_bounds_fails_at_start_naming_it(clean_env):
    clean_env.setenv("PALIMPSEST_RERANK_TOP_N", "0")
    with pytest.raises(ValidationError, match="rerank_top_n"):
        Settings(_env_file=None)


def _recipe_for(pipeline: dict) -> Recipe:
    body = QueryIn.model_validate({"query": "x", "pipeline": pipeline})
    return DEFAULT.with_overrides(body.pipeline.model_dump(exclude_none=True))


def test_a_request_overrides_what_only_settings_could_set():
    pipeline = {"window_max_days": 31, "reweight_depth": 40, "abstain_dense_floor": 0.4,
                "abstain_rerank_floor": 0.6, "asker": False}
    recipe = _recipe_for(pipeline)
    assert {k: getattr(recipe, k) for k in pipeline} == pipeline
    assert recipe.rrf_k == 60 and recipe.rerank_top_n == 20  # unset: the default
    assert _recipe_for({}) == DEFAULT


def test_a_request_may_start_from_a_named_recipe():
    assert _recipe_for({"recipe": "lexical_only"}) == LEXICAL_ONLY
    on_top = _recipe_for({"recipe": "hybrid_rrf", "rerank": True})
    assert on_top.rerank and on_top.lexical and on_top.dense and not on_top.graph


@pytest.mark.parametrize("pipeline, field", [
    ({"window_max_days": -1}, "window_max_days"),
    ({"reweight_depth": 0}, "reweight_depth"),
    ({"abstain_dense_floor": 1.5}, "abstain_dense_floor"),
    ({"abstain_rerank_floor": "0.5"}, "abstain_rerank_floor"),
    ({"rerank_top_n": 201}, "rerank_top_n"),
    ({"lexical": 1}, "lexical"),  # a switch is a boolean, never a number
    ({"dense_weight": False}, "dense_weight"),  # a weight is a number, never a boolean
    ({"rrf_k": "60"}, "rrf_k"),
    ({"recipe": "bm25"}, "recipe"),
    ({"nope": True}, "nope"),
])
def test_a_bad_value_is_rejected_naming_the_field(pipeline, field):
    with pytest.raises(ValidationError) as info:
        QueryIn.model_validate({"query": "x", "pipeline": pipeline})
    assert [e["loc"] for e in info.value.errors()] == [("pipeline", field)]


def test_the_request_schema_documents_every_field():
    props = QueryIn.model_json_schema()["$defs"]["PipelineOptions"]["properties"]
    assert set(props) == {"recipe", *Recipe.model_fields}
    for name, info in Recipe.model_fields.items():
        assert props[name]["description"] == info.description and info.description
    window = next(s for s in props["window_max_days"]["anyOf"] if s.get("type") == "integer")
    assert window["minimum"] == 0 and window["maximum"] == 36600


def test_the_sdk_model_has_exactly_the_recipes_fields():
    from palimpsest.client.models import PipelineOptions as SdkOptions, QueryIn as SdkQueryIn

    assert set(SdkOptions.model_fields) == {"recipe", *Recipe.model_fields}
    body = SdkQueryIn(query="x", pipeline={"asker": False, "window_max_days": 31, "newer": 1})
    assert body.model_dump(mode="json", exclude_none=True)["pipeline"] == {
        "asker": False, "window_max_days": 31, "newer": 1}  # a newer server's key passes through


def test_the_ablation_switches_the_recipes_stages():
    from bench.ablate import STAGES, default_off_stages, variants

    assert STAGES == Recipe.stages()
    assert {"lexical", "asker", "rerank", "neighbours", "summaries"} <= set(STAGES)
    assert not {"rrf_k", "notice", "window_max_days"} & set(STAGES)
    assert dict(variants(["neighbours", "asker"])[1:]) == {"-neighbours": {"neighbours": 0}, "-asker": {"asker": False}}
    assert set(default_off_stages()) >= {"derived", "expansion"}


def test_named_recipes_are_plain_baselines():
    assert set(RECIPES) == {"default", "lexical_only", "dense_only", "hybrid_rrf"}
    on = {s for s in Recipe.stages() if getattr(HYBRID_RRF, s)}
    assert on == {"lexical", "dense"}
    assert {s for s in Recipe.stages() if getattr(RECIPES["dense_only"], s)} == {"dense"}
    assert HYBRID_RRF.rrf_k == DEFAULT.rrf_k and HYBRID_RRF.candidate_pool == DEFAULT.candidate_pool
