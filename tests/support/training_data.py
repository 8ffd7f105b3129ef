"""Tiny training data in the benchmark's formats, for the training jobs' tests (reranker, embedder)."""
from __future__ import annotations

import json
from pathlib import Path


def tiny_locomo(path: Path) -> None:
    """A two-session conversation in LoCoMo's format, three questions with gold evidence."""
    path.parent.mkdir(parents=True, exist_ok=True)
    turns1 = [("Ana", "Hi Ben, how are you?"), ("Ben", "Great! I adopted a puppy named Rex."),
              ("Ana", "Lovely. I started violin lessons this week."), ("Ben", "Cool, which teacher?"),
              ("Ana", "Mrs. Park, she is strict but kind."), ("Ben", "I am moving to Denver next month.")]
    turns2 = [("Ana", "How is Denver?"), ("Ben", "Snowy. Rex loves the snow."),
              ("Ana", "My violin recital is on Friday."), ("Ben", "Good luck with the recital!")]
    conv = {"speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "3:00 pm on 20 June, 2023",
            "session_1": [{"speaker": s, "dia_id": f"D1:{i + 1}", "text": t} for i, (s, t) in enumerate(turns1)],
            "session_2": [{"speaker": s, "dia_id": f"D2:{i + 1}", "text": t} for i, (s, t) in enumerate(turns2)]}
    qa = [{"question": "What is the name of Ben's puppy?", "answer": "Rex", "evidence": ["D1:2"], "category": 4},
          {"question": "Who teaches Ana violin?", "answer": "Mrs. Park", "evidence": ["D1:5"], "category": 4},
          {"question": "Where did Ben move?", "answer": "Denver", "evidence": ["D1:6; D2:2"], "category": 1}]
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conv, "qa": qa}]))


def tiny_longmemeval(data_dir: Path, qids=("q-train", "q-abs_abs")) -> None:
    """LongMemEval_S's format: sessions by id, questions with their haystack and `has_answer` turns."""
    import gzip

    sessions = {"s1": [{"role": "user", "content": "I bought a blue bike on Sunday.", "has_answer": True},
                       {"role": "assistant", "content": "A blue bike, nice choice!"}],
                "s2": [{"role": "user", "content": "Any tips for a pasta dinner?"},
                       {"role": "assistant", "content": "Salt the water well."},
                       {"role": "user", "content": "Thanks, the weather is cold today."}]}
    qs = [{"question_id": qid, "question_type": "single-session-user", "question": "What colour is my bike?",
           "answer": "blue", "question_date": "2023/05/30 (Tue) 10:00",
           "haystack_session_ids": ["s1", "s2"], "haystack_dates": ["2023/05/28 (Sun) 09:00", "2023/05/29 (Mon) 09:00"],
           "answer_session_ids": ["s1"]} for qid in qids]
    (data_dir / "longmemeval").mkdir(parents=True, exist_ok=True)
    with gzip.open(data_dir / "longmemeval" / "longmemeval_s_train.json.gz", "wt") as fh:
        json.dump({"sessions": sessions, "questions": qs}, fh)
