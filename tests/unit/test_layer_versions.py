"""A layer whose stored rows carry resolved dates is rebuilt when the time resolver changes: its version
names the resolver's (`timeparse.LAYER_VERSION`), as the surprise layer's always has."""
from __future__ import annotations

import pytest

from app.domain.layers import timeparse
from app.services.builds import surprise_version
from app.services.consolidation_build import consolidation_version
from app.services.graph_build import graph_version


@pytest.mark.parametrize("version", [graph_version, consolidation_version, surprise_version])
def test_a_new_time_resolver_gives_the_dated_layers_a_new_version(version, monkeypatch):
    before = version()
    monkeypatch.setattr(timeparse, "LAYER_VERSION", "timeparse/next")
    after = version()
    assert before != after and "timeparse/next" in after.split("+")
