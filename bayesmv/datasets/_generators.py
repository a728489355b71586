"""Synthetic data generators from the papers."""

from __future__ import annotations

import numpy as np

from ..kernels import linear_kernel, rbf_kernel
from ._validation import SEED_DEPRECATED, check_positive, check_random_seed

__all__ = ["make_latent_views", "make_mkc_toy", "make_multitask", "make_mvml_toy"]


TWO_FREQUENCIES = ((0.5, 0.0), (0.0, 4.0))  # rule="cosines": one slow and one fast wave


def make_latent_views(
    n_samples=300,
    n_views=2,
    n_latent=2,
    n_features=10,
    noise=0.1,
    rule="circle",
    random_state=0,
    frequencies=TWO_FREQUENCIES,
    return_latent=False,
    seed=SEED_DEPRECATED,
):
    """M3LAK-style data: a shared latent ``h ~ N(0, I)``; each view is a noisy linear map of ``h``.

    Labels are a nonlinear function of ``h``: ``"circle"`` (``|h|^2`` above its median), ``"xor"``
    (sign of ``h_1 h_2``) or ``"cosines"`` (``Σ_k cos(a_kᵀ h)`` above its median, one ``a_k`` per
    row of ``frequencies``, shape ``(K, n_latent)``: with the default, one slow and one fast wave
    along the two latent axes, the label's best spectrum has two well-separated modes, ±a_1 and
    ±a_2), so a linear classifier on the views is near chance while a kernel classifier is not.
    ``n_features`` is one int or one per view. Returns ``(Xs, y)`` with ``y`` in {0, 1}, and
    ``(Xs, y, H)`` with the latent ``H`` ``(n_samples, n_latent)`` if ``return_latent``.
    """
    seed = check_random_seed(random_state, seed, "make_latent_views")
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
    freqs = np.asarray(frequencies, dtype=np.float64)
    if rule == "cosines" and (
        freqs.ndim != 2 or freqs.shape[1] != n_latent or not np.all(np.isfinite(freqs))
    ):
        raise ValueError(
            f"frequencies must be a finite (K, n_latent={n_latent}) array, got shape {freqs.shape}"
        )
    H = rng.standard_normal((n_samples, n_latent))
    Xs = []
    for d in dims:
        W = rng.standard_normal((d, n_latent))
        Xs.append(H @ W.T + noise * rng.standard_normal((n_samples, d)))
    if rule == "circle":
        score = np.sum(H**2, axis=1)
    elif rule == "xor":
        score = H[:, 0] * H[:, 1]
    elif rule == "cosines":
        score = np.sum(np.cos(H @ freqs.T), axis=1)
    else:
        raise ValueError(f"rule must be 'circle', 'xor' or 'cosines', got {rule!r}")
    threshold = 0.0 if rule == "xor" else np.median(score)
    y = (score > threshold).astype(np.int64)
    return (Xs, y, H) if return_latent else (Xs, y)


def make_mvml_toy(
    n_samples=100, shear=1.5, angle=np.pi / 3, separation=3.0, random_state=0, seed=SEED_DEPRECATED
):
    """MVML §3.3 toy data: two classes in R^2; view 2 is view 1 after a shear and a rotation.

    Returns ``(Xs, y)`` with ``y`` in {0, 1}.
    """
    seed = check_random_seed(random_state, seed, "make_mvml_toy")
    check_positive("n_samples", n_samples, integer=True)
    for name, value in (("shear", shear), ("angle", angle), ("separation", separation)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.number))
            or not np.isfinite(value)
        ):
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


# §6.1.1: "We chose A^(1)=A^(2) and A^(3)=A^(4)=A^(5)": the views of a group share one weight matrix.
MKC_TOY_GROUPS = ((0, 1), (2, 3, 4))


def mkc_toy_weights(rng, n_rows, n_basis):
    """Rows of a TOY weight matrix ``A`` (§6.1.1, "uniformly distributed"): i.i.d. U[0, 1]."""
    return rng.uniform(0.0, 1.0, (n_rows, n_basis))


def mkc_toy_kernel(kernel, X, Y=None):
    """One TOY view's kernel: ``"linear"``, or a Gaussian of width ``kernel``,
    ``exp(-‖x−y‖² / (2 w²))`` (see :func:`make_mkc_toy` for the width convention)."""
    if kernel == "linear":
        return np.asarray(linear_kernel(X, Y))
    return np.asarray(rbf_kernel(X, Y, gamma=1.0 / (2.0 * kernel**2)))


def make_mkc_toy(
    name="TOYL", n_samples=100, n_basis=10, random_state=0, groups=MKC_TOY_GROUPS, seed=SEED_DEPRECATED
):
    """MKC §6.1.1 TOY data: 5 views of ``n_samples`` points generated from ``n_basis`` basis points.

    Literal reading of §6.1.1 (paper 002), sentence by sentence:

    * "We generated the first 10 points (X_B^(m)) for each view, where X_B^(1) and X_B^(2) are
      uniformly distributed in [-1,1]^5 and X_B^(3), X_B^(4) and, X_B^(5) are uniformly distributed
      in [-1,1]^10" — one independent basis per view, the first ``n_basis`` samples.
    * "further 90 data points in each view were generated by X^(m) = A^(m) X_B^(m), where the A^(m)
      are uniformly distributed random matrices ∈ R^{90×10}. We chose A^(1)=A^(2) and
      A^(3)=A^(4)=A^(5)" — ``A`` entries i.i.d. U[0, 1] (the standard uniform; no range is given),
      one matrix for views 1–2 and an independent one for views 3–5.
    * "Gaussian kernel ... where the kernel with of the Gaussian kernel are 1 and 0.1" — width
      ``w`` read as the standard deviation, ``exp(-‖x−y‖² / (2 w²))``. Of the conventions
      ``2w²``, ``w²`` and ``w`` in the denominator, ``2w²`` puts the paper's kNN / wkNN baselines
      (§6.1.3) closest to Table 1 on TOYG1 and TOYG0.1 (``benchmarks/mkc_toy.py``).
    * "TOYLG1: Linear kernel for the first 3 views and Gaussian kernel for the last two views with
      the kernel width 1."

    Because the two weight groups are independent, a sample whose views 1–2 (or 3–5) are all
    deleted keeps no information on its kernel rows there beyond their distribution; under this
    reading Table 1's TOYL values for 2–3 missing views (mean + sd) and several TOYLG1 means lie
    below what any method can reach (``orphan_floor`` in the benchmark). ``groups`` partitions the
    five views into those sharing one ``A`` (default: the paper's; ``((0, 1, 2, 3, 4),)`` shares one
    matrix among all views). Returns ``(Ks, Xs)``.
    """
    seed = check_random_seed(random_state, seed, "make_mkc_toy")
    if name not in MKC_TOY_KERNELS:
        raise ValueError(f"name must be one of {sorted(MKC_TOY_KERNELS)}, got {name!r}")
    check_positive("n_basis", n_basis, integer=True)
    check_positive("n_samples", n_samples, integer=True)
    if n_basis > n_samples:
        raise ValueError(f"n_basis={n_basis} must not exceed n_samples={n_samples}")
    if sorted(m for group in groups for m in group) != list(range(5)):
        raise ValueError(f"groups must partition the views 0..4, got {groups!r}")
    rng = np.random.default_rng(seed)
    dims = (5, 5, 10, 10, 10)
    bases = [rng.uniform(-1.0, 1.0, (n_basis, d)) for d in dims]
    weights = {}  # view -> its group's A, drawn group by group
    for group in groups:
        weights.update(dict.fromkeys(group, mkc_toy_weights(rng, n_samples - n_basis, n_basis)))
    Xs = [np.vstack([B, weights[m] @ B]) for m, B in enumerate(bases)]
    return [mkc_toy_kernel(kern, X) for X, kern in zip(Xs, MKC_TOY_KERNELS[name])], Xs


def make_multitask(n_samples=5000, n_tasks=10, n_features=20, random_state=0, seed=SEED_DEPRECATED):
    """ONORMA §5 synthetic multi-task data (Evgeniou et al. 2005).

    ``x ~ U[0, 1]^20``, ``φ(x) = (x1², x4², x1 x2, x3 x5, x2, x4, 1)``, task weights
    ``w^i ~ N(0, diag(0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15))``, outputs ``y^i = w^i · φ(x)``.
    Returns ``(X, Y)`` with ``Y`` of shape ``(n_samples, n_tasks)``.
    """
    seed = check_random_seed(random_state, seed, "make_multitask")
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
