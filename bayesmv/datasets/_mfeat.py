"""The bundled UCI Multiple Features data (van Breukelen et al. 1998; UCI ML Repository, CC BY 4.0)."""

from __future__ import annotations

from importlib import resources

import numpy as np

__all__ = ["MFEAT_VIEWS", "load_mfeat"]

MFEAT_VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")


def load_mfeat(views=None):
    """Load the embedded mfeat digits: 2000 samples, 10 classes, six views.

    ``views`` selects views by name (``"fou"``, ``"fac"``, ``"kar"``, ``"pix"``, ``"zer"``,
    ``"mor"``) or index, in the order given; default all six. Returns ``(Xs, y)``: a list of
    float64 arrays and integer labels 0..9. No network access.
    """
    selected = list(MFEAT_VIEWS) if views is None else list(views)
    names = []
    for v in selected:
        if isinstance(v, (int, np.integer)) and 0 <= v < len(MFEAT_VIEWS):
            names.append(MFEAT_VIEWS[v])
        elif v in MFEAT_VIEWS:
            names.append(v)
        else:
            raise ValueError(f"unknown mfeat view {v!r}; choose from {MFEAT_VIEWS} or indices 0..5")
    if not names:
        raise ValueError("views must select at least one view")
    with resources.files("bayesmv.datasets").joinpath("data/mfeat.npz").open("rb") as fh:
        data = np.load(fh)
        Xs = [np.asarray(data[f"view_{name}"], dtype=np.float64) for name in names]
        y = np.asarray(data["labels"], dtype=np.int64)
    return Xs, y
