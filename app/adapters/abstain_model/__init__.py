"""The abstention model (issue #17 item 9): `abstain.json` beside this file, written by
`python -m training.abstain` (a logistic regression over `app.domain.retrieval.abstain.AbstainFeatures`,
fitted with grouped cross-validation on the validation split; the file holds its features,
standardisation, coefficients, threshold and the validation table it was chosen by).
`installed_abstain_model()` is None when the file is missing: the query then abstains by the floors."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from app.domain.retrieval.abstain import AbstainModel

MODEL_FILE = Path(__file__).with_name("abstain.json")


def load(path: Path | str = MODEL_FILE) -> AbstainModel:
    return AbstainModel.from_dict(json.loads(Path(path).read_text()))


@lru_cache(maxsize=1)
def installed_abstain_model() -> AbstainModel | None:
    """The shipped model, or None when there is no file."""
    return load() if MODEL_FILE.is_file() else None
