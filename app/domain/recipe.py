"""The search recipe: which stages run and with what weights, declared once.

Every other declaration of the recipe is derived from the `Recipe` model below: the settings
(`app.settings.Settings` gains one field per recipe field, named by its `setting`, read from
`PALIMPSEST_<SETTING>`), the request's `"pipeline"` object (`app.api.schemas.PipelineOptions`:
every field optional, same bounds), the SDK's `PipelineOptions` and the benchmark's ablation list
(the fields marked as stages). A new field added here reaches all of them.

Named recipes are data (as Graphiti's `search_config_recipes.py`): `DEFAULT`, `LEXICAL_ONLY`,
`DENSE_ONLY`, `HYBRID_RRF`. A request may start from one (`"pipeline": {"recipe": "hybrid_rrf"}`)
instead of the server's settings, and override fields on top.

This module imports nothing but pydantic and the standard library: the SDK ships it.
"""
from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo


def _field(default: Any, setting: str, description: str, *, stage: bool = False, **bounds: Any) -> Any:
    """A recipe field: its default, the setting that overrides it (env `PALIMPSEST_<SETTING>`),
    what it does, whether the ablation switches it as a stage, and its bounds (ge/le)."""
    return Field(default, description=description, json_schema_extra={"setting": setting, "stage": stage}, **bounds)


class Recipe(BaseModel):
    """Which retrieval stages run and with what weights. The defaults are the shipped pipeline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lexical: bool = _field(True, "lexical_enabled", "BM25 full-text signal.", stage=True)
    dense: bool = _field(True, "dense_enabled", "Embedding (cosine) signal.", stage=True)
    derived: bool = _field(False, "derived_enabled", "Full-text over resolved dates and entity names (the layers' "
                           "search text); off: measured worse.", stage=True)
    findable: bool = _field(True, "findable_enabled", "Full-text over what makes a turn findable beside its "
                            "words: the turn it answers and its session's date (issue #17 item 6).", stage=True)
    graph: bool = _field(True, "graph_enabled", "Personalized PageRank over the entity graph from the question's "
                         "entities.", stage=True)
    bundle: bool = _field(True, "bundle_enabled", "With the graph: PRISM typed-path bundle search from the dense "
                          "hits.", stage=True)
    expansion: bool = _field(False, "expansion_enabled", "The question restated (HyDE with an LLM, else "
                             "pseudo-relevance feedback); off: measured worse.", stage=True)
    separation: bool = _field(True, "separation_enabled", "Per-speaker list, only in conversations with more than "
                              "five speakers.", stage=True)
    lexical_weight: float = _field(1.0, "lexical_weight", "Fusion weight of the lexical signal (routing off).",
                                   ge=0, le=100)
    dense_weight: float = _field(1.0, "dense_weight", "Fusion weight of the dense signal (routing off).",
                                 ge=0, le=100)
    rrf_k: int = _field(60, "rrf_k", "Reciprocal rank fusion constant.", ge=1, le=1000)
    candidate_pool: int = _field(100, "candidate_pool", "Candidates per signal before fusion.", ge=1, le=1000)
    window: bool = _field(True, "window_enabled", "A signal of events said in (or about) the time window the "
                          "question names.", stage=True)
    window_max_days: int = _field(92, "window_max_days", "Widest window (days) that retrieves; wider ones "
                                  "(\"before 2022\") only reweight.", ge=0, le=36600)
    recency: bool = _field(True, "recency_enabled", "Newest-first list of the candidates, for intents whose "
                           "profile weighs recency.", stage=True)
    intent: bool = _field(True, "intent_enabled", "Route the question (rules, prototypes, LLM when configured).",
                          stage=True)
    intent_weights: bool = _field(True, "intent_weights_enabled", "Fuse with the intent's weight profile instead "
                                  "of the fixed weights.", stage=True)
    reweight: bool = _field(True, "reweight_enabled", "True Memory eq. 4: time window, speaker, surprise, "
                            "knowledge update, salience.", stage=True)
    # On: beats weighted RRF + reweight on validation, LoCoMo and BEAM (bench/results/fusion-validation-20261123.md).
    learned: bool = _field(True, "learned_enabled", "Order the candidates by the learned fusion model (features of "
                           "every signal, `python -m training.fusion`) instead of weighted RRF and the reweight.",
                           stage=True)
    # On: better on validation on all three data sets, over 3 fits each (docs/models.md, stop 28).
    learned_priors: bool = _field(True, "learned_priors_enabled", "With the learned ranker: the reweight's "
                                  "factors (time window ×1.3, a named speaker ×(1 + speaker_beta), the asker's own "
                                  "turn ×(1 + asker_beta), surprise ×(1 + 0.2σ), a superseded turn in a "
                                  "knowledge-update question ×0.85) applied again on top of its score.", stage=True)
    current_first: bool = _field(True, "current_first_enabled", "With the learned ranker: a question asking for a "
                                 "current value (knowledge_update intent) gets the turn that superseded a candidate "
                                 "just above it (brought in when it was not retrieved).", stage=True)
    asker: bool = _field(True, "asker_enabled", "With reweight: a question in the first person prefers the user's "
                         "turns, one addressed to \"you\" the assistant's (events with roles).", stage=True)
    # Role priors fitted on the train split by `python -m bench.priors_eval fit` (asker and addressee 0-1;
    # docs/pipeline.md "Priors"): the user's turns x2 for "I", the assistant's x1.5 for "you". The speaker
    # prior, chosen on validation at stop 30 for both paths that apply it: x1.25 for a named speaker's turns
    # (LoCoMo all questions, learned ranker: mrr 0.637 -> 0.640, er@2k 0.919 -> 0.921; learned off: r@10
    # 0.717 -> 0.746, mrr 0.441 -> 0.465), though it costs the questions that name the other person (learned
    # off, adversarial r@10 0.770 -> 0.741).
    asker_beta: float = _field(1.0, "asker_beta", "A first-person question multiplies the user's turns by 1 + this.",
                               ge=0, le=10)
    addressee_beta: float = _field(0.5, "addressee_beta", "A question addressed to \"you\" multiplies the "
                                   "assistant's turns by 1 + this.", ge=0, le=10)
    speaker_beta: float = _field(0.25, "speaker_prior_beta", "A question naming a speaker multiplies that speaker's "
                                 "turns by 1 + this (0: no speaker prior).", ge=0, le=10)
    reweight_depth: int = _field(100, "reweight_depth", "How much of the fused list is reweighted (the rest keeps "
                                 "its order below).", ge=1, le=1000)
    salience_floor: float | None = _field(None, "salience_floor", "Drop candidates the gate scored below this "
                                          "salience (unset = keep all).", ge=0, le=1)
    # Off by default: the cross-encoder trained this release (docs/models.md; not shipped) cost LoCoMo
    # validation r@10 0.10 and mrr 0.11 and added ~1 s p50 on 2 shared cores
    # (bench/results/reranker-validation-20261123.md);
    # a stage that does not earn its place on validation does not run unless asked for.
    rerank: bool = _field(False, "rerank_enabled", "Cross-encoder over the top N, when a model is installed "
                          "(var/models/reranker-minilm, or the one PALIMPSEST_RERANKER_MODEL_PATH names).", stage=True)
    # 20 pairs: same held-out r@10 as 50 (0.686), p95 190 ms vs 531 ms (int8, CPU).
    rerank_top_n: int = _field(20, "rerank_top_n", "Candidates the cross-encoder scores.", ge=1, le=200)
    rerank_alpha: float = _field(0.55, "rerank_alpha", "Blend of cross-encoder and fused score.", ge=0, le=1)
    # On since stop 34: BEAM validation summarization r@10 0.250 -> 0.500 (train 0.571 -> 0.786), all 104
    # questions 0.837 -> 0.856; no other question of the three data sets has the form. Depth 5: on train,
    # 3, 5, 10 and 20 gave the same r@10 and mrr, er@2k 0.139 / 0.135 / 0.128 / 0.128 (docs/pipeline.md,
    # "Exchanges for an account").
    exchanges: bool = _field(True, "exchanges_enabled", "A question asking for a summary, recap or overview: each "
                             "of the best turns comes with its exchange next to it (a user's turn with the reply "
                             "it got, an assistant's with the turn it answers; without roles, both), read from "
                             "the conversation when not retrieved.", stage=True)
    exchange_depth: int = _field(5, "exchange_depth", "How many of the best turns bring their exchange.",
                                 ge=1, le=100)
    # Since stop 30 they fill the room the ranked candidates leave: added before them, at the server's top_k of
    # 10 they took the room of candidates that held more evidence (validation er@2k BEAM 0.725 vs 0.765
    # without, LongMemEval_S 0.896 vs 0.923); after them they still bring in the reply beside a question when
    # the candidates are few (a new conversation, lexical hits only).
    neighbours: int = _field(1, "context_neighbours", "Turns on each side of the strongest evidence added to the "
                             "context in the room the ranked candidates leave (0: none).", stage=True, ge=0, le=5)
    neighbour_of: int = _field(5, "context_neighbour_of", "Around how many of the best candidates neighbours are "
                               "added.", ge=0, le=50)
    # Off since stop 30: on validation they changed nothing at budget 2,000 and took the room of turns at 512
    # (BEAM er@512 0.669 vs 0.678 without; LoCoMo equal).
    summaries: bool = _field(False, "context_summaries", "Episode summaries stand in for direct evidence that does "
                             "not fit the budget.", stage=True)
    notice: bool = _field(True, "context_notice", "End the context with a note of what was left out.")
    compact_stamps: bool = _field(True, "context_compact_stamps", "Context lines stamped where the time changes: "
                                  "a day's first line with the date and time, a new minute with its time, a line "
                                  "in the same minute as the one above with none (room for more turns).")
    abstain_learned: bool = _field(True, "abstain_learned", "Decide abstention with the shipped model over the "
                                   "question's evidence (how many of its words occur in the conversation and in "
                                   "the first ten items, the best cosine; app/adapters/abstain_model/), where "
                                   "the learned ranker, lexical and dense ran; otherwise, off, or no model: the "
                                   "floors below.")
    # The floors (the rule before the model, and its fallback). Calibrated on BEAM's abstention questions
    # (bench/results/beam-20261122-165405.md): dense 0.31 abstains on 12.5% of them at 0.7% false
    # abstentions; rerank 0.52 on 12.5% at 6%. bench/results/abstain-*.md compares it with the model.
    abstain_dense_floor: float = _field(0.31, "abstain_dense_floor", "Abstain when the best dense cosine is below "
                                        "this (no reranker ran).", ge=-1, le=1)
    abstain_rerank_floor: float = _field(0.52, "abstain_rerank_floor", "Abstain when the best cross-encoder "
                                         "probability is below this.", ge=0, le=1)

    # ------------------------------------------------------------ what the fields say of themselves

    @classmethod
    def setting(cls, name: str) -> str:
        """The settings field (and `PALIMPSEST_` env name, upper-cased) that gives `name` its default."""
        return cls.model_fields[name].json_schema_extra["setting"]  # type: ignore[index]

    @classmethod
    def stages(cls) -> tuple[str, ...]:
        """The switchable stages in declaration order (the benchmark ablates each)."""
        return tuple(n for n, f in cls.model_fields.items() if f.json_schema_extra["stage"])  # type: ignore[index]

    @classmethod
    def off_value(cls, name: str) -> bool | int:
        """What switches a stage off: False, or 0 for a count (`neighbours`)."""
        return 0 if cls.model_fields[name].annotation is int else False

    @classmethod
    def from_settings(cls, settings: Any) -> "Recipe":
        """The server's default recipe from `app.settings.Settings` (any object with the settings' names)."""
        return cls(**{name: getattr(settings, cls.setting(name)) for name in cls.model_fields})

    # ------------------------------------------------------------ one query's recipe

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> "Recipe":
        """This recipe (or the named one under "recipe") with a request's fields set; None and unknown
        keys are left alone."""
        if not overrides:
            return self
        base = RECIPES[overrides["recipe"]] if overrides.get("recipe") else self
        update = {k: v for k, v in overrides.items() if k in Recipe.model_fields and v is not None}
        return Recipe.model_validate(base.model_dump() | update) if update else base

    def describe(self) -> dict[str, Any]:
        """The recipe as run, echoed in the response so a result can be reproduced."""
        return self.model_dump()

    def weights(self) -> dict[str, float]:
        return {"lexical": self.lexical_weight, "dense": self.dense_weight}


def _plain(**on: Any) -> Recipe:
    """Every stage off but those named: a plain baseline."""
    return Recipe(**({name: Recipe.off_value(name) for name in Recipe.stages()} | on))


DEFAULT = Recipe()
LEXICAL_ONLY = _plain(lexical=True)
DENSE_ONLY = _plain(dense=True)
HYBRID_RRF = _plain(lexical=True, dense=True)  # lexical + dense, reciprocal rank fusion, nothing else
RECIPES: dict[str, Recipe] = {"default": DEFAULT, "lexical_only": LEXICAL_ONLY, "dense_only": DENSE_ONLY,
                              "hybrid_rrf": HYBRID_RRF}
RecipeName = Literal["default", "lexical_only", "dense_only", "hybrid_rrf"]
assert set(typing.get_args(RecipeName)) == set(RECIPES)


# ---------------------------------------------------------------- derived models


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """`float | None` -> (float, True); `int` -> (int, False)."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], True
    return annotation, False


def recipe_fields(*, optional: bool, types_: Mapping[Any, Any] | None = None,
                  bounds: bool = True) -> dict[str, tuple[Any, FieldInfo]]:
    """The Recipe's fields as `create_model` arguments, keyed by field name.

    `optional`: every field `X | None = None` (a request's override) instead of the recipe's default;
    `types_`: a replacement per base type (the API's strict bool, int and float); `bounds`: keep ge/le."""
    out: dict[str, tuple[Any, FieldInfo]] = {}
    for name, info in Recipe.model_fields.items():
        base, nullable = _base_type(info.annotation)
        typ = (types_ or {}).get(base, base)
        if bounds and info.metadata:
            # Bounds first, then the replacement's own validators (a before-validator would hide them
            # from the JSON schema): Annotated[int, Ge, Le, BeforeValidator], not [int, BeforeValidator, Ge, Le].
            inner, *extra = typing.get_args(typ) if typing.get_origin(typ) is typing.Annotated else (typ,)
            typ = typing.Annotated[inner, *info.metadata, *extra]
        if optional or nullable:
            typ = typ | None
        out[name] = (typ, Field(None if optional else info.default, description=info.description))
    return out


def options_model(name: str, *, base: type[BaseModel], doc: str, types_: Mapping[Any, Any] | None = None,
                  bounds: bool = True, module: str | None = None) -> type[BaseModel]:
    """A request model of per-request overrides: every Recipe field optional (None = the default),
    plus `recipe`, a named recipe to start from instead of the server's settings."""
    fields: dict[str, Any] = {
        "recipe": (RecipeName | None, Field(None, description="A named recipe to start from instead of the "
                                            "server's settings: " + ", ".join(RECIPES) + ".")),
        **recipe_fields(optional=True, types_=types_, bounds=bounds),
    }
    return create_model(name, __base__=base, __doc__=doc, __module__=module or __name__, **fields)
