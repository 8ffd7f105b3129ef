"""Rejected experiment (bench/results/experiments/README.md): graph seeds without single-word concepts.

Run beside a bench var dir that holds LoCoMo conv-43/44/47 and BEAM conversations 1-8 (ingested by the
benchmark), rerank off, in-process:

    PALIMPSEST_VAR_DIR=var/bench .venv/bin/python bench/results/experiments/concept_seeds.py beam|locomo default|noconcept|nograph

Prints the mean share of each question's gold turns in its top 10, and mrr (questions with gold, outside
adversarial/abstention).
"""
import sys, statistics
from pathlib import Path
from bench.datasets import load_beam, load_locomo, subset
from app.settings import get_settings
from app.domain.recipe import Recipe
import app.services.query as qmod
from app.storage.candidates import Scope
from app.storage.db import connect
from app.adapters.embedder import get_embedder
which, variant = sys.argv[1], sys.argv[2]
if which == "beam":
    ds = subset(load_beam(Path("/work/shared/data")), conversations=8, limit=5)
else:
    ds = subset(load_locomo(Path("/work/shared/data")), limit=30)
    ds.questions[:] = [q for q in ds.questions if q.conversation_id in ("conv-43", "conv-44", "conv-47")]
qs = [q for q in ds.questions if q.gold and q.category not in ("adversarial", "abstention")]
recipe = Recipe.from_settings(get_settings()).with_overrides({"rerank": False})
if variant == "nograph":
    recipe = recipe.with_overrides({"graph": False})
if variant.startswith("noconcept"):
    import app.services.graph as L
    real = L.entities_named_in
    def filt(*a, **k):
        out = real(*a, **k)
        return [n for n in out if not ((n.get("data") or {}).get("kind") == "concept" or n["kind"] == "concept") or " " in n["label"]]
    L.entities_named_in = filt
emb = get_embedder()
r10, mrr = [], []
with connect() as conn:
    for q in qs:
        out = qmod.run_query(conn, qmod.QueryInput(q.question, Scope(1, q.conversation_id), 10, 2000), recipe, emb)
        ids = [it.event.event_id for it in out.items[:10]]
        gold = set(q.gold)
        r10.append(len(gold & set(ids)) / len(gold))
        mrr.append(next((1 / (i + 1) for i, x in enumerate(ids) if x in gold), 0.0))
print(which, variant, len(qs), "r@10 %.3f mrr %.3f" % (statistics.fmean(r10), statistics.fmean(mrr)))
