"""The learned metric's picture (the paper's Figure 3)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_metric"]


def plot_metric(A, n_views, ax=None, view_names=None, log=True, title=None):
    """Plot the image of ``|Ã|`` with the view-pair block grid.

    The picture of Figure 3 of Huusari, Kadri & Capponi 2018, with a colour bar.

    Parameters
    ----------
    A : array-like of shape (Vq, Vq)
        The metric ``Ã`` (view-major blocks).
    n_views : int
        The number of views ``V``.
    ax : matplotlib Axes or None, default=None
        The axes to draw on; None: a new figure.
    view_names : sequence of str or None, default=None
        The tick label of each view; None: ``"view 0"``, ``"view 1"``, ...
    log : bool, default=True
        Use a logarithmic colour scale (over at most eight decades below the largest entry;
        zero entries are left blank).
    title : str or None, default=None
        The title; None: ``"learned metric |Ã| (view-pair blocks)"``.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If ``A`` is not a square matrix whose size is a multiple of ``n_views``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    A = np.abs(np.asarray(A, dtype=float))
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] % n_views:
        raise ValueError(f"A must be a square (V q, V q) matrix for {n_views} views, got shape {A.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4))
    q = A.shape[0] // n_views
    positive = A[A > 0]
    norm = None
    if log and positive.size:
        lo = max(positive.min(), positive.max() * 1e-8)
        norm = LogNorm(vmin=lo, vmax=positive.max())
        A = np.where(A > 0, np.maximum(A, lo), np.nan)
    im = ax.imshow(A, cmap="viridis", norm=norm, interpolation="nearest")
    for b in range(1, n_views):
        ax.axhline(b * q - 0.5, color="w", lw=1)
        ax.axvline(b * q - 0.5, color="w", lw=1)
    centers = [(v + 0.5) * q - 0.5 for v in range(n_views)]
    names = list(view_names) if view_names is not None else [f"view {v}" for v in range(n_views)]
    ax.set_xticks(centers, names)
    ax.set_yticks(centers, names)
    ax.set_title(title or "learned metric |Ã| (view-pair blocks)")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return ax
