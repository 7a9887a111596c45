"""The best simple rule the model must beat: cosine, refused by cheap gates.

A Python copy of refrain's own gates (src/verify/gate.rs) so training figures compare the model
with exactly what refrain would do without it:
- values: the numbers and versions the two texts mention must agree;
- negation: one text negated an odd number of times and the other not refuses;
- direction: "X to Y" in one text and "Y to X" in the other refuses.
Plans are compared on masked text, where numbers are placeholders: there only negation and
direction can refuse.
"""
from __future__ import annotations

import re

import numpy as np

NEGATIONS = {"not", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "without", "no"}
ARTICLES = {"a", "an", "the", "my", "your", "its", "this", "that", "some"}


def tokens(text: str) -> list[str]:
    """Runs of letters, digits and `_`, keeping inner `.`, `-`, `/` and `'` (as gate.rs does)."""
    out = []
    for raw in re.split(r"[^\w.\-/']+", text):
        w = re.sub(r"^[^\w]+|[^\w]+$", "", raw)
        if w:
            out.append(w)
    return out


def values(text: str) -> set[str]:
    return {w.lower().lstrip("v") for w in tokens(text) if any(c.isdigit() for c in w)}


def negated(text: str) -> bool:
    toks = tokens(text)
    n = sum(1 for w in toks if w.lower() in NEGATIONS or w.lower().endswith("n't") or w.lower().endswith("nt'"))
    if toks and toks[0].lower() == "no" and text.lstrip()[2:].lstrip().startswith(","):
        n -= 1
    return n % 2 == 1


def _directions(text: str) -> list[tuple[str, str]]:
    words = [w.lower() for w in tokens(text) if w.lower() not in ARTICLES]
    return [(words[i - 1], words[i + 1]) for i, w in enumerate(words)
            if w in ("to", "into") and 0 < i < len(words) - 1]


def reversed_direction(a: str, b: str) -> bool:
    db = _directions(b)
    return any(x != y and any(p == y and q == x for p, q in db) for x, y in _directions(a))


def refused(a: str, b: str) -> str | None:
    """The first gate that refuses the pair, or None."""
    if values(a) != values(b):
        return "values"
    if negated(a) != negated(b):
        return "negation"
    if reversed_direction(a, b):
        return "direction"
    return None


def gated(rows, scores: np.ndarray, floor: float = -1e9) -> np.ndarray:
    """Scores with every gated pair pushed to `floor` (refused whatever its score)."""
    out = np.asarray(scores, dtype=np.float64).copy()
    for i, r in enumerate(rows):
        if refused(r["a_in"], r["b_in"]):
            out[i] = floor
    return out
