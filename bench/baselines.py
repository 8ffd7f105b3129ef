"""The plain baselines every table compares the service with, on the same turns:

- `bm25`: rank-bm25's BM25Okapi over lower-cased regex word tokens minus a standard English stop-word
  list (NLTK's), one index per conversation;
- `dense`: cosine similarity with the packaged all-MiniLM-L6-v2 (`baseline_encoder`), the issue's
  fixed "dense (MiniLM)" reference, whatever the service itself embeds with (since stop 31 its own
  fine-tune, docs/models.md);
- `rrf`: reciprocal rank fusion of the two full rankings, k = 60.

Each ranks every turn of the question's conversation; the search is restricted to that conversation.
The text a baseline indexes is the turn exactly as it puts it into a context (`render_turn`:
`[YYYY-MM-DD HH:MM] speaker: content`): names and dates are searchable, as in the service's context.
On LoCoMo dev this measures r@10 0.64 / 0.53 / 0.62 (content alone: 0.60 / 0.38 / 0.52).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from app.settings import PACKAGED_MINILM_NAME as BASELINE_EMBEDDER  # the dense baseline's model, by name
from bench.datasets import Dataset

BASELINES = ("bm25", "dense", "rrf")
RRF_K = 60

# NLTK's English stop-word list (the standard one, 179 words).
STOP_WORDS = frozenset(["i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "you're", "you've", "you'll", "you'd", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "she's", "her", "hers", "herself", "it", "it's", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "that'll", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "don't", "should", "should've", "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "aren't", "couldn", "couldn't", "didn", "didn't", "doesn", "doesn't", "hadn", "hadn't", "hasn", "hasn't", "haven", "haven't", "isn", "isn't", "ma", "mightn", "mightn't", "mustn", "mustn't", "needn", "needn't", "shan", "shan't", "shouldn", "shouldn't", "wasn", "wasn't", "weren", "weren't", "won", "won't", "wouldn", "wouldn't"])

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words (an apostrophe suffix stays on its word)."""
    return [w for w in _WORD.findall(text.lower().replace("\u2019", "'")) if w not in STOP_WORDS]


def rank_scores(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    """Ids by descending score; ties keep the conversation's order."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [ids[i] for i in order]


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of full rankings: score = sum of 1 / (k + rank), rank 1-based.
    Ties keep the order of first appearance in the first ranking."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for r, eid in enumerate(ranking, 1):
            scores[eid] = scores.get(eid, 0.0) + 1.0 / (k + r)
    first = list(dict.fromkeys(e for ranking in rankings for e in ranking))
    pos = {e: i for i, e in enumerate(first)}
    return sorted(first, key=lambda e: (-scores[e], pos[e]))


def _encode_cached(texts: list[str], encode: Callable[[list[str]], np.ndarray], cache_dir: Path | None,
                   tag: str) -> np.ndarray:
    if cache_dir is None:
        return encode(texts)
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    path = Path(cache_dir) / f"{tag}-{h.hexdigest()[:16]}.npy"
    if path.exists():
        arr = np.load(path)
        if arr.shape[0] == len(texts):
            return arr
    arr = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, arr)
    return arr


def baseline_encoder() -> Callable[[list[str]], np.ndarray]:
    """The dense baseline's encoder: the packaged all-MiniLM-L6-v2 (loaded once per process)."""
    from app.adapters.embedder import load_embedder
    from app.settings import get_settings, packaged_minilm_path

    s = get_settings()
    return load_embedder(packaged_minilm_path(), BASELINE_EMBEDDER, s.embedding_batch_size, s.torch_threads).encode


def run_baselines(ds: Dataset, encode: Callable[[list[str]], np.ndarray] | None = None,
                  cache_dir: Path | None = None, model_tag: str = BASELINE_EMBEDDER,
                  log: Callable[[str], None] = lambda s: None) -> dict[str, dict[str, list[str]]]:
    """Full rankings per baseline and question: {baseline: {qid: [event_id, ...]}}."""
    from rank_bm25 import BM25Okapi

    if encode is None:
        encode = baseline_encoder()

    out: dict[str, dict[str, list[str]]] = {b: {} for b in BASELINES}
    by_conv: dict[str, list] = {}
    for q in ds.questions:
        by_conv.setdefault(q.conversation_id, []).append(q)

    # Dense: every turn and every question of the run, encoded once (and cached on disk).
    from bench.context import render_turn

    docs = {c.id: [render_turn(t.speaker, t.content, t.occurred_at) for t in c.turns] for c in ds.conversations}
    all_docs = [d for c in ds.conversations for d in docs[c.id]]
    log(f"dense baseline: encoding {len(all_docs)} turns and {len(ds.questions)} questions")
    turn_vecs = _encode_cached(all_docs, encode, cache_dir, f"{ds.name}-turns-{model_tag}")
    q_vecs = _encode_cached([q.question for q in ds.questions], encode, cache_dir, f"{ds.name}-q-{model_tag}")
    q_row = {q.qid: i for i, q in enumerate(ds.questions)}

    start = 0
    for conv in ds.conversations:
        ids = [t.event_id for t in conv.turns]
        mat = turn_vecs[start:start + len(ids)]
        start += len(ids)
        qs = by_conv.get(conv.id, [])
        if not qs:
            continue
        bm25 = BM25Okapi([tokenize(d) or ["\x00"] for d in docs[conv.id]])
        for q in qs:
            lex = rank_scores(bm25.get_scores(tokenize(q.question)), ids)
            den = rank_scores(mat @ q_vecs[q_row[q.qid]], ids)
            out["bm25"][q.qid] = lex
            out["dense"][q.qid] = den
            out["rrf"][q.qid] = rrf([lex, den])
    return out


def baseline_answers(ds: Dataset, rankings: dict[str, list[str]], budgets: Sequence[int], top_k: int,
                     count: Callable[[str], int] | None = None) -> dict:
    """Turn a baseline's full rankings into `SystemAnswer`s: its top_k, and per budget the context
    packed in rank order (stop at the first turn that does not fit), with that context's tokens
    counted again on the joined text by the fixed tokenizer."""
    from bench.context import (
        build_context,
        count_tokens,
        count_tokens_batch,
        render_turn,
    )
    from bench.evaluate import SystemAnswer

    count = count or count_tokens
    lines: dict[str, dict[str, str]] = {}
    tokens: dict[str, dict[str, int]] = {}
    for conv in ds.conversations:
        ls = {t.event_id: render_turn(t.speaker, t.content, t.occurred_at) for t in conv.turns}
        lines[conv.id] = ls
        tokens[conv.id] = dict(zip(ls, count_tokens_batch(list(ls.values()))))
    answers = {}
    for q in ds.questions:
        ranked = rankings.get(q.qid)
        if ranked is None:
            continue
        in_ctx: dict[int, list[str]] = {}
        ctx_tok: dict[int, int] = {}
        for b in budgets:
            ids, text = build_context(ranked, lines[q.conversation_id], tokens[q.conversation_id], b)
            in_ctx[b] = ids
            ctx_tok[b] = count(text) if text else 0
        answers[q.qid] = SystemAnswer(ranked=list(ranked[:top_k]), in_context=in_ctx, ctx_tokens=ctx_tok)
    return answers
