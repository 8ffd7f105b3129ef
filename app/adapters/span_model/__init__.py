"""The span-claim model (issue #19): `span_model.json` beside this file, written by
`python -m training.span_claims` (a multinomial logistic model over
`app.domain.layers.assertion_spans.span_features`, fitted on the hand-labelled layer set's dev split; the
file holds its classes, intercepts, feature weights, threshold and the cross-validated table it was
chosen by). `installed_span_model()` is None when the file is missing: the timeline then holds the
rules' claims alone."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from app.domain.layers.assertion_spans import SpanModel

MODEL_FILE = Path(__file__).with_name("span_model.json")


def load(path: Path | str = MODEL_FILE) -> SpanModel:
    return SpanModel.from_dict(json.loads(Path(path).read_text()))


@lru_cache(maxsize=1)
def installed_span_model() -> SpanModel | None:
    """The shipped model, or None when there is no file."""
    return load() if MODEL_FILE.is_file() else None
