"""The cross-claim step of the timeline's assertions: what one claim means given the conversation's
earlier claims. One implementation for both extractors, the rules (`assertions.extract_all`) and the
LLM (`llm_assertions.LLMAssertionExtractor`), so the two cannot drift apart:

* a named value said again in a shorter or longer form ("I left Tallow" after "I joined Tallow
  Studio") takes the value key it was first given, so a restatement or a negation meets the claim it
  is about;
* a cancellation that names no plan ("we called off the trip") takes the plan it ends: the latest
  standing plan of that kind, the entity's own first, else anyone's in the conversation;
* a negation of a value the entity holds under another attribute takes that attribute ("I cancelled
  FitHaus" read as a cancelled trip, after "I'm a member of FitHaus": the membership ends);
* a job or move ended without its name ("I got laid off") takes the one that stands for that entity;
  without one it is dropped, and a second such retraction in the same event only lends its date to
  the first ("I'm no longer at X. I was let go on Friday.").

State is per conversation. Pure: no I/O.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable

from app.domain.layers.assertion_context import same_name

if TYPE_CHECKING:  # only for the annotations: assertions imports this module
    from app.domain.layers.assertion_model import Assertion

# attributes whose retraction may name nothing ("I got laid off", "the move is off"): it ends the one standing
UNNAMED_RETRACTIONS = ("works_at", "moving_to")


def is_unnamed_retraction(a: "Assertion") -> bool:
    """A negation that names no value: its value key is empty (the extractors key it so)."""
    return a.negated and a.value_key == ""


class CrossClaims:
    """The conversation state the step reads: value keys of named values, and the latest standing plan,
    job and move. Feed every assertion in the events' order through `settle`."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], list[str]] = {}  # (conversation, attribute) -> value keys given
        self.latest: dict[tuple[str, str, str], "Assertion"] = {}  # (conversation, entity key, attribute)
        self.latest_any: dict[tuple[str, str], "Assertion"] = {}  # (conversation, plan attribute)
        self.held: dict[tuple[str, str], list["Assertion"]] = {}  # (conversation, entity key) -> its claims

    def settle(self, a: "Assertion", out: list["Assertion"], conversation: str = "") -> "Assertion | None":
        """`a` as it joins `out` (the assertions kept so far, in order), or None when it is dropped (an
        unnamed retraction with nothing to end). May date an earlier retraction of the same event in `out`."""
        held = self.held.setdefault((conversation, a.entity_key), [])
        if a.negated and a.value_key:
            a = _attribute_held(a, held)
        if a.value[:1].isupper() and a.value_key:
            seen = self.keys.setdefault((conversation, a.attribute), [])
            first = next((k for k in seen if same_name(k, a.value_key)), None)
            if first is not None:
                a = replace(a, value_key=first)
            elif a.value_key not in seen:
                seen.append(a.value_key)
        slot = (conversation, a.entity_key, a.attribute)
        if a.attribute in UNNAMED_RETRACTIONS:
            if is_unnamed_retraction(a):
                prior = self.latest.get(slot)
                same = next((i for i, o in enumerate(out) if o.event_id == a.event_id and o.attribute == a.attribute
                             and o.negated and o.entity_key == a.entity_key), None)
                if same is not None and out[same].valid_from is None:
                    out[same] = replace(out[same], valid_from=a.valid_from)
                if prior is None or same is not None:
                    return None
                a = replace(a, value=prior.value, value_key=prior.value_key)
            elif not a.negated:
                self.latest[slot] = a
        if a.attribute.startswith("plan:"):
            if is_unnamed_retraction(a):
                prior = self.latest.get(slot) or self.latest_any.get((conversation, a.attribute))
                if prior is not None:
                    a = replace(a, entity=prior.entity, value=prior.value, value_key=prior.value_key)
            elif not a.negated:
                self.latest[slot] = self.latest_any[(conversation, a.attribute)] = a
        if not a.negated:
            held.append(a)
        return a


def _attribute_held(a: "Assertion", held: list["Assertion"]) -> "Assertion":
    """A negation under the attribute the entity holds its value by, when it holds it under exactly
    one other attribute and not under the negation's own."""
    def names(b: "Assertion") -> bool:
        return b.value_key == a.value_key or same_name(b.value_key, a.value_key)

    if any(b.attribute == a.attribute and names(b) for b in held):
        return a
    others = {b.attribute: b for b in held if names(b)}
    if len(others) != 1:
        return a
    b = next(iter(others.values()))
    return replace(a, attribute=b.attribute, value=b.value, value_key=b.value_key)


def settle_all(found: Iterable["Assertion"],
               conversation_of: Callable[["Assertion"], str] = lambda _: "") -> list["Assertion"]:
    """Every assertion of `found` (in the events' order) through one `CrossClaims`."""
    cross, out = CrossClaims(), []
    for a in found:
        settled = cross.settle(a, out, conversation_of(a))
        if settled is not None:
            out.append(settled)
    return out
