"""The bundled UCI Multiple Features data (van Breukelen et al. 1998; UCI ML Repository, CC BY 4.0)."""

from __future__ import annotations

from importlib import resources

import numpy as np

__all__ = ["MFEAT_VIEWS", "load_mfeat"]

MFEAT_VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")


def load_mfeat(views=None):
    """Load the embedded mfeat digits: 2000 samples, 10 classes, six views.

    The UCI Multiple Features data (van Breukelen et al. 1998), bundled with the package: no
    network access.

    Parameters
    ----------
    views : sequence of str or int, default=None
        The views to load, by name (``"fou"``, ``"fac"``, ``"kar"``, ``"pix"``, ``"zer"``,
        ``"mor"``: :data:`MFEAT_VIEWS`) or index, in the order given; default all six.

    Returns
    -------
    Xs : list of ndarray of shape (2000, n_features_v)
        The selected views, float64.
    y : ndarray of shape (2000,)
        Integer labels 0..9.

    Raises
    ------
    ValueError
        If a view is unknown or ``views`` selects none.

    Examples
    --------
    >>> from bayesmv.datasets import load_mfeat
    >>> Xs, y = load_mfeat(views=["fou", 2])
    >>> [X.shape for X in Xs], y.shape, int(y.max())
    ([(2000, 76), (2000, 64)], (2000,), 9)
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
