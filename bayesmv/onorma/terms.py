"""Operator-valued kernels as lists of separable terms ``Σ_l w_l k_l(x, x') T_l`` (every kernel
of :mod:`bayesmv.kernels`), and the inputs prepared for them: one float64 array with per-view
column ranges."""

from __future__ import annotations

import numpy as np

from ..datasets import MultiViewArray, check_views, is_view_list
from ..kernels import DiagonalMultiViewKernel, Kernel, SeparableKernel, SumOfSeparableKernels

__all__ = ["kernel_terms"]


def kernel_terms(kernel):
    """The separable terms ``Σ_l w_l k_l(x, x') T_l`` of an operator-valued kernel.

    Parameters
    ----------
    kernel : SeparableKernel, SumOfSeparableKernels or DiagonalMultiViewKernel
        An operator-valued kernel from :mod:`bayesmv.kernels` (``nonseparable_kernel(...)``
        gives a ``SumOfSeparableKernels``).

    Returns
    -------
    terms : list of tuple
        ``[(k_l, w_l T_l, view_l), ...]``: the scalar kernel, the weighted ``(d, d)`` output
        matrix and ``view_l``, ``None`` for single-view inputs, else the view index the scalar
        kernel acts on.
    output_dim : int
        The output dimension ``d``.
    multiview : bool
        Whether the kernel's inputs are multi-view.

    Raises
    ------
    TypeError
        If ``kernel`` is not one of these kernels, a sum holds multi-view kernels, or a
        ``DiagonalMultiViewKernel`` holds something other than scalar kernels.
    ValueError
        If a ``DiagonalMultiViewKernel`` has no kernel.
    """
    if isinstance(kernel, SeparableKernel):
        return [(kernel.scalar_kernel, np.asarray(kernel.T, dtype=float), None)], kernel.output_dim, False
    if isinstance(kernel, SumOfSeparableKernels):
        terms = []
        for w, k in zip(kernel.weights, kernel.kernels):
            sub, _, mv = kernel_terms(k)
            if mv:
                raise TypeError("sums of multi-view kernels are not supported")
            terms += [(kf, w * T, None) for kf, T, _ in sub]
        return terms, kernel.output_dim, False
    if isinstance(kernel, DiagonalMultiViewKernel):
        m = kernel.output_dim
        if m == 0:
            raise ValueError("DiagonalMultiViewKernel needs one scalar kernel per view")
        terms = []
        for v, kv in enumerate(kernel.kernels):
            if not isinstance(kv, Kernel):
                kv = Kernel(kv) if callable(kv) else None
            if kv is None:
                raise TypeError("DiagonalMultiViewKernel.kernels must be scalar kernels (see get_kernel)")
            E = np.zeros((m, m))
            E[v, v] = 1.0
            terms.append((kv, E, v))
        return terms, m, True
    raise TypeError(
        f"kernel must be an operator-valued kernel from bayesmv.kernels (SeparableKernel, "
        f"SumOfSeparableKernels, nonseparable_kernel(...), DiagonalMultiViewKernel); got {type(kernel).__name__}"
    )


def _prepare_inputs(X, multiview, n_features=None, name="X", owner="the estimator"):
    """Validated float64 inputs as one 2-D array (views concatenated) plus per-view column ranges."""
    if not multiview and (isinstance(X, MultiViewArray) or is_view_list(X)):
        raise ValueError(f"{name} is a list of views but the kernel is single-view; pass one 2-D array")
    views = check_views(X, n_features=n_features, name=name, owner=owner)
    sizes = [V.shape[1] for V in views]
    edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    ranges = tuple((int(edges[v]), int(edges[v + 1])) for v in range(len(views)))
    return np.concatenate(views, axis=1) if len(views) > 1 else views[0], tuple(sizes), ranges


def _static_terms(terms, ranges, n_views):
    """Static description for jit: scalar kernels and column ranges (hashable)."""
    kfns, cols = [], []
    for kf, _, view in terms:
        if view is not None and view >= n_views:
            raise ValueError(f"the kernel needs view {view} but the input has {n_views} view(s)")
        kfns.append(kf)
        cols.append(None if view is None else ranges[view])
    return tuple(kfns), tuple(cols)


def _kern(kfn, col, X1, X2):
    if col is not None:
        X1, X2 = X1[:, col[0] : col[1]], X2[:, col[0] : col[1]]
    return kfn(X1, X2)
