"""Synthetic data generators from the papers."""

from __future__ import annotations

import numpy as np

from ..kernels import linear_kernel, rbf_kernel
from ._validation import check_positive

__all__ = ["make_latent_views", "make_mkc_toy", "make_multitask", "make_mvml_toy"]


def make_latent_views(
    n_samples=300, n_views=2, n_latent=2, n_features=10, noise=0.1, rule="circle", seed=0
):
    """M3LAK-style data: a shared latent ``h ~ N(0, I)``; each view is a noisy linear map of ``h``.

    Labels are a nonlinear function of ``h``: ``"circle"`` (``|h|^2`` above its median) or
    ``"xor"`` (sign of ``h_1 h_2``), so a linear classifier on the views is near chance while a
    kernel classifier is not. ``n_features`` is one int or one per view. Returns ``(Xs, y)``
    with ``y`` in {0, 1}.
    """
    check_positive("n_samples", n_samples, integer=True)
    check_positive("n_views", n_views, integer=True)
    check_positive("n_latent", n_latent, integer=True)
    check_positive("noise", noise, allow_zero=True)
    rng = np.random.default_rng(seed)
    dims = [n_features] * n_views if n_features is None or np.isscalar(n_features) else list(n_features)
    if len(dims) != n_views:
        raise ValueError(f"n_features must be an int or have {n_views} entries, got {dims}")
    for d in dims:
        check_positive("n_features", d, integer=True)
    if rule == "xor" and n_latent < 2:
        raise ValueError(f"rule='xor' needs n_latent >= 2, got {n_latent}")
    H = rng.standard_normal((n_samples, n_latent))
    Xs = []
    for d in dims:
        W = rng.standard_normal((d, n_latent))
        Xs.append(H @ W.T + noise * rng.standard_normal((n_samples, d)))
    if rule == "circle":
        r = np.sum(H**2, axis=1)
        y = (r > np.median(r)).astype(np.int64)
    elif rule == "xor":
        y = (H[:, 0] * H[:, 1] > 0).astype(np.int64)
    else:
        raise ValueError(f"rule must be 'circle' or 'xor', got {rule!r}")
    return Xs, y


def make_mvml_toy(n_samples=100, shear=1.5, angle=np.pi / 3, separation=3.0, seed=0):
    """MVML §3.3 toy data: two classes in R^2; view 2 is view 1 after a shear and a rotation.

    Returns ``(Xs, y)`` with ``y`` in {0, 1}.
    """
    check_positive("n_samples", n_samples, integer=True)
    for name, value in (("shear", shear), ("angle", angle), ("separation", separation)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 2
    X1 = rng.standard_normal((n_samples, 2)) + np.where(y[:, None] == 1, separation / 2, -separation / 2)
    S = np.array([[1.0, shear], [0.0, 1.0]])
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    X2 = X1 @ (R @ S).T
    return [X1, X2], y


MKC_TOY_KERNELS = {
    "TOYL": ("linear",) * 5,
    "TOYG1": (1.0,) * 5,
    "TOYG0.1": (0.1,) * 5,
    "TOYLG1": ("linear", "linear", "linear", 1.0, 1.0),
}


def make_mkc_toy(name="TOYL", n_samples=100, n_basis=10, seed=0):
    """MKC §6.1.1 TOY data: 5 views of ``n_samples`` points generated from ``n_basis`` basis points.

    Views 1–2 live in [-1, 1]^5 and views 3–5 in [-1, 1]^10; the remaining points of each view
    are uniform random combinations ``A^(m) X_B^(m)`` with ``A^(1) = A^(2)`` and
    ``A^(3) = A^(4) = A^(5)``. Kernels: ``TOYL`` linear; ``TOYG1``/``TOYG0.1`` Gaussian of width
    1 / 0.1 (``exp(-|x-y|^2 / (2 w^2))``); ``TOYLG1`` linear for views 1–3, Gaussian width 1 for
    views 4–5. The first ``n_basis`` samples are the basis. Returns ``(Ks, Xs)``.
    """
    if name not in MKC_TOY_KERNELS:
        raise ValueError(f"name must be one of {sorted(MKC_TOY_KERNELS)}, got {name!r}")
    check_positive("n_basis", n_basis, integer=True)
    check_positive("n_samples", n_samples, integer=True)
    if n_basis > n_samples:
        raise ValueError(f"n_basis={n_basis} must not exceed n_samples={n_samples}")
    rng = np.random.default_rng(seed)
    dims = (5, 5, 10, 10, 10)
    bases = [rng.uniform(-1.0, 1.0, (n_basis, d)) for d in dims]
    A12 = rng.uniform(0.0, 1.0, (n_samples - n_basis, n_basis))
    A345 = rng.uniform(0.0, 1.0, (n_samples - n_basis, n_basis))
    Xs = [np.vstack([B, (A12 if m < 2 else A345) @ B]) for m, B in enumerate(bases)]
    Ks = []
    for X, kern in zip(Xs, MKC_TOY_KERNELS[name]):
        if kern == "linear":
            Ks.append(np.asarray(linear_kernel(X)))
        else:
            Ks.append(np.asarray(rbf_kernel(X, gamma=1.0 / (2.0 * kern**2))))
    return Ks, Xs


def make_multitask(n_samples=5000, n_tasks=10, n_features=20, seed=0):
    """ONORMA §5 synthetic multi-task data (Evgeniou et al. 2005).

    ``x ~ U[0, 1]^20``, ``φ(x) = (x1², x4², x1 x2, x3 x5, x2, x4, 1)``, task weights
    ``w^i ~ N(0, diag(0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15))``, outputs ``y^i = w^i · φ(x)``.
    Returns ``(X, Y)`` with ``Y`` of shape ``(n_samples, n_tasks)``.
    """
    check_positive("n_samples", n_samples, integer=True)
    check_positive("n_tasks", n_tasks, integer=True)
    check_positive("n_features", n_features, integer=True)
    if n_features < 5:
        raise ValueError(f"n_features must be >= 5, got {n_features}")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n_samples, n_features))
    x1, x2, x3, x4, x5 = (X[:, i] for i in range(5))
    phi = np.stack([x1**2, x4**2, x1 * x2, x3 * x5, x2, x4, np.ones(n_samples)], axis=1)
    cov = np.array([0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15])
    W = rng.standard_normal((n_tasks, 7)) * np.sqrt(cov)
    return X, phi @ W.T
