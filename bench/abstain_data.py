"""The questions the abstention decision is chosen on, and the LongMemEval haystacks they need.

    python -m bench.abstain_data add-longmemeval [--var-dir var/eval] [--answerable 24]

(one haystack at a time, in file order; about 1-2 minutes each on a shared 2-core machine)

adds to the development database (`bench.evaldb`, tenant `eval`) the haystacks of every LongMemEval_S
abstention question (`_abs`; 1 in the validation split, 16 in train: the learned ranker never read
LongMemEval, so its train questions are as unseen to it as validation's) and of the first
`--answerable` answerable validation questions. Conversations already there are skipped.

`questions(...)` lists every question the abstention study asks, each with its label (1: the
service should abstain) and the conversation it is asked of (the cross-validation's group):

- positives: BEAM's abstention questions (validation conversations), LongMemEval's `_abs` questions,
  and the off-topic probes of `bench/data/probes/offtopic.json` (a probe whose key phrases occur
  anywhere in a conversation might be answerable there: that pair is dropped);
- negatives: LoCoMo's answerable questions (not the adversarial category), BEAM's other questions,
  LongMemEval's answerable questions.

LoCoMo's adversarial questions (a fact of one speaker asked of the other) are kept apart, labelled
"adversarial", reported but not fitted on: their topic was discussed, so retrieval evidence exists.
Subsampled for time (the constants below): every BEAM and LongMemEval question, half of LoCoMo's.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.golden import ROOT

PROBES = ROOT / "bench" / "data" / "probes" / "offtopic.json"
# Every question costs a full query on a shared 2-core machine: LoCoMo's answerable questions are
# taken one in LOCOMO_EVERY (its adversarial ones one in LOCOMO_ADVERSARIAL_EVERY), and each conversation
# is asked one probe in PROBES_EVERY, rotating, so every probe is still asked of a third of them.
LOCOMO_EVERY = 2
LOCOMO_ADVERSARIAL_EVERY = 4
PROBES_EVERY = 3


@dataclass(frozen=True)
class AbstainQuestion:
    qid: str
    dataset: str  # locomo | beam | longmemeval | probe
    conversation: str  # "<dataset>/<conversation id>" as stored
    question: str
    label: int  # 1: should abstain
    kind: str  # the question's category (probe: "probe")
    as_of: datetime | None = None


def load_probes(path: Path = PROBES) -> list[dict]:
    return json.loads(path.read_text())


def _key_re(keys: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(k.lower()) for k in keys) + r")", re.IGNORECASE)


def probe_hits(probes: list[dict], text: str) -> set[str]:
    """The ids of the probes one of whose key phrases occurs in `text` (a conversation's turns)."""
    return {p["id"] for p in probes if _key_re(p["keys"]).search(text)}


def lme_ids(answerable: int) -> list[str]:
    from bench.splits import ids

    val = list(ids("longmemeval", "validation"))
    train = list(ids("longmemeval", "train"))
    return [q for q in val + train if q.endswith("_abs")] + [q for q in val if not q.endswith("_abs")][:answerable]


def add_longmemeval(var_dir: Path, answerable: int) -> None:
    from bench.datasets import default_data_dir, subset
    from bench.evaldb import TENANT, attach
    from bench.golden import ingest
    from bench.longmemeval import load_longmemeval

    tid = attach(var_dir)
    from sqlalchemy import text

    from app.storage.db import connect

    with connect() as conn:
        have = {r[0] for r in conn.execute(text("SELECT DISTINCT conversation_id FROM events WHERE tenant_id = :t"),
                                           {"t": tid})}
    want = [q for q in lme_ids(answerable) if f"longmemeval/{q}" not in have]
    print(f"adding {len(want)} LongMemEval haystacks", file=sys.stderr)
    if want:
        ingest([subset(load_longmemeval(default_data_dir()), only=tuple(want))], tenant=TENANT)


def questions(conversations_present: set[str], answerable: int = 24) -> list[AbstainQuestion]:
    """Every question of the study whose conversation is in the database (validation LoCoMo, BEAM;
    the chosen LongMemEval haystacks), and the probes asked of each of those conversations."""
    from bench.datasets import default_data_dir
    from bench.longmemeval import load_longmemeval
    from bench.splits import load_split

    data = default_data_dir()
    sets = load_split("validation", data)
    lme = load_longmemeval(data)
    keep = set(lme_ids(answerable))
    lme.conversations = [c for c in lme.conversations if c.id in keep]
    lme.questions = [q for q in lme.questions if q.conversation_id in keep]
    sets["longmemeval"] = lme
    out: list[AbstainQuestion] = []
    probes = load_probes()
    for name, ds in sets.items():
        for n, q in enumerate(ds.questions):
            conv = f"{name}/{q.conversation_id}"
            if conv not in conversations_present:
                continue
            if name == "locomo" and q.category == "adversarial":
                if n % LOCOMO_ADVERSARIAL_EVERY == 0:
                    out.append(AbstainQuestion(q.qid, name, conv, q.question, 0, "adversarial"))
                continue
            if name == "locomo" and n % LOCOMO_EVERY:
                continue
            pos = q.category in ("abstention",)
            if not pos and not q.gold:
                continue  # unusable evidence: neither answerable for sure nor unanswerable
            out.append(AbstainQuestion(q.qid, name, conv, q.question, int(pos), q.category, q.as_of))
        for c, conv in enumerate(ds.conversations):
            cid = f"{name}/{conv.id}"
            if cid not in conversations_present:
                continue
            hits = probe_hits(probes, "\n".join(t.content for t in conv.turns))
            as_of = next((q.as_of for q in ds.questions if q.conversation_id == conv.id and q.as_of), None)
            for i, p in enumerate(probes):
                if p["id"] in hits or (i + c) % PROBES_EVERY:
                    continue
                out.append(AbstainQuestion(f"{cid}:{p['id']}", "probe", cid, p["question"], 1, "probe", as_of))
    return out


def dropped_probe_pairs(conversations_present: set[str], answerable: int = 24) -> tuple[int, int]:
    """(pairs dropped because a key phrase occurs in the conversation, pairs in all)."""
    from bench.datasets import default_data_dir
    from bench.longmemeval import load_longmemeval
    from bench.splits import load_split

    data = default_data_dir()
    sets = load_split("validation", data)
    keep = set(lme_ids(answerable))
    lme = load_longmemeval(data)
    lme.conversations = [c for c in lme.conversations if c.id in keep]
    sets["longmemeval"] = lme
    probes = load_probes()
    dropped = total = 0
    for name, ds in sets.items():
        for conv in ds.conversations:
            if f"{name}/{conv.id}" in conversations_present:
                total += len(probes)
                dropped += len(probe_hits(probes, "\n".join(t.content for t in conv.turns)))
    return dropped, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["add-longmemeval"])
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "eval")
    p.add_argument("--answerable", type=int, default=24)
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_LOG_LEVEL", "WARNING")
    add_longmemeval(a.var_dir.resolve(), a.answerable)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
