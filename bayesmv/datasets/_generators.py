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

    View ``i`` is ``x^i = W_i h + noise · ε`` with ``W_i`` and ``ε`` standard normal. Labels are
    a nonlinear function of ``h`` (see ``rule``), so a linear classifier on the views is near
    chance while a kernel classifier is not.

    Parameters
    ----------
    n_samples : int, default=300
        Number of samples.
    n_views : int, default=2
        Number of views.
    n_latent : int, default=2
        Dimension of the shared latent ``h``.
    n_features : int or sequence of int, default=10
        Features per view: one int for every view, or one per view.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to each view (``>= 0``).
    rule : {"circle", "xor", "cosines"}, default="circle"
        The label: ``"circle"`` (``|h|^2`` above its median), ``"xor"`` (sign of ``h_1 h_2``;
        needs ``n_latent >= 2``) or ``"cosines"`` (``Σ_k cos(a_kᵀ h)`` above its median, one
        ``a_k`` per row of ``frequencies``).
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the draws (:func:`check_random_seed`).
    frequencies : array-like of shape (K, n_latent), default=((0.5, 0.0), (0.0, 4.0))
        The ``a_k`` of ``rule="cosines"``. The default, one slow and one fast wave along the two
        latent axes, gives the label's best spectrum two well-separated modes, ±a_1 and ±a_2.
    return_latent : bool, default=False
        Whether to return the latent ``H`` too.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    Xs : list of ndarray of shape (n_samples, n_features_v)
        The views.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    H : ndarray of shape (n_samples, n_latent)
        The latent ``h`` of each sample; returned only when ``return_latent`` is true.

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``noise`` is negative, ``n_features`` has another
        number of entries than ``n_views``, ``rule`` is unknown, ``rule="xor"`` has
        ``n_latent < 2``, or (``rule="cosines"``) ``frequencies`` is not a finite
        ``(K, n_latent)`` array.

    Examples
    --------
    >>> from bayesmv.datasets import make_latent_views
    >>> Xs, y = make_latent_views(n_samples=50, n_features=(3, 4), random_state=0)
    >>> [X.shape for X in Xs], y.shape, int(y.sum())
    ([(50, 3), (50, 4)], (50,), 25)
    >>> Xs, y, H = make_latent_views(n_samples=50, rule="xor", return_latent=True)
    >>> H.shape
    (50, 2)
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
    """MVML's toy data (Huusari et al. 2018, §3.3): two classes in R^2, two views.

    View 2 is view 1 after a shear and a rotation. View 1 holds two Gaussian clouds (unit
    covariance) centred at ``±separation / 2`` in both coordinates; view 2 is view 1 times
    ``(R S)ᵀ``, ``S`` the shear ``[[1, shear], [0, 1]]`` and ``R`` the rotation by ``angle``.
    The classes alternate, 0, 1, 0, ...

    Parameters
    ----------
    n_samples : int, default=100
        Number of samples.
    shear : float, default=1.5
        The shear of view 2.
    angle : float, default=np.pi / 3
        The rotation of view 2, in radians.
    separation : float, default=3.0
        Distance between the class means along each coordinate.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the draws (:func:`check_random_seed`).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    Xs : list of ndarray of shape (n_samples, 2)
        The two views.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive integer or ``shear``, ``angle`` or ``separation`` is
        not a finite number.

    Examples
    --------
    >>> from bayesmv.datasets import make_mvml_toy
    >>> Xs, y = make_mvml_toy(n_samples=6)
    >>> [X.shape for X in Xs], y
    ([(6, 2), (6, 2)], array([0, 1, 0, 1, 0, 1]))
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
    """Rows of a TOY weight matrix ``A`` (Bhadra et al. 2017, §6.1.1, "uniformly distributed").

    Parameters
    ----------
    rng : numpy.random.Generator
        The generator to draw from.
    n_rows : int
        Number of rows (the generated samples).
    n_basis : int
        Number of columns (the basis points).

    Returns
    -------
    A : ndarray of shape (n_rows, n_basis)
        Entries i.i.d. U[0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import mkc_toy_weights
    >>> A = mkc_toy_weights(np.random.default_rng(0), 3, 2)
    >>> A.shape, bool(((A >= 0) & (A <= 1)).all())
    ((3, 2), True)
    """
    return rng.uniform(0.0, 1.0, (n_rows, n_basis))


def mkc_toy_kernel(kernel, X, Y=None):
    """One TOY view's kernel: linear, or a Gaussian of width ``w``, ``exp(-‖x−y‖² / (2 w²))``.

    See :func:`make_mkc_toy` for the width convention.

    Parameters
    ----------
    kernel : "linear" or float
        ``"linear"``, or the Gaussian's width ``w``.
    X : ndarray of shape (n_samples_X, n_features)
        The rows of the kernel matrix.
    Y : ndarray of shape (n_samples_Y, n_features), default=None
        The columns; ``X`` when None.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The kernel matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import mkc_toy_kernel
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> mkc_toy_kernel("linear", X)
    array([[0., 0.],
           [0., 1.]])
    >>> mkc_toy_kernel(1.0, X).round(4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    """
    if kernel == "linear":
        return np.asarray(linear_kernel(X, Y))
    return np.asarray(rbf_kernel(X, Y, gamma=1.0 / (2.0 * kernel**2)))


def make_mkc_toy(
    name="TOYL", n_samples=100, n_basis=10, random_state=0, groups=MKC_TOY_GROUPS, seed=SEED_DEPRECATED
):
    """MKC's TOY data (Bhadra et al. 2017, §6.1.1): five views generated from basis points.

    Each of the 5 views has ``n_samples`` points, generated from ``n_basis`` basis points.
    Literal reading of Bhadra et al. 2017, §6.1.1, sentence by sentence:

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
    below what any method can reach (``orphan_floor`` in the benchmark).

    Parameters
    ----------
    name : {"TOYL", "TOYG1", "TOYG0.1", "TOYLG1"}, default="TOYL"
        The data set: its views' kernels (:data:`MKC_TOY_KERNELS`).
    n_samples : int, default=100
        Number of samples of each view.
    n_basis : int, default=10
        Number of basis points, the first samples of each view (at most ``n_samples``).
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the draws (:func:`check_random_seed`).
    groups : tuple of tuple of int, default=((0, 1), (2, 3, 4))
        A partition of the five views into those sharing one ``A`` (default: the paper's,
        :data:`MKC_TOY_GROUPS`; ``((0, 1, 2, 3, 4),)`` shares one matrix among all views).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    Ks : list of ndarray of shape (n_samples, n_samples)
        The five views' kernel matrices.
    Xs : list of ndarray of shape (n_samples, n_features_v)
        The five views (5, 5, 10, 10 and 10 features).

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``n_samples`` or ``n_basis`` is not a positive integer,
        ``n_basis > n_samples``, or ``groups`` does not partition the views 0..4.

    Examples
    --------
    >>> from bayesmv.datasets import make_mkc_toy
    >>> Ks, Xs = make_mkc_toy("TOYLG1", n_samples=20, n_basis=4)
    >>> [K.shape for K in Ks][0], [X.shape[1] for X in Xs]
    ((20, 20), [5, 5, 10, 10, 10])
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
    """ONORMA's synthetic multi-task data (Audiffren and Kadri 2013, §5; Evgeniou et al. 2005).

    ``x ~ U[0, 1]^20`` (``n_features`` in general), ``φ(x) = (x1², x4², x1 x2, x3 x5, x2, x4,
    1)``, task weights ``w^i ~ N(0, diag(0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15))``, outputs
    ``y^i = w^i · φ(x)``.

    Parameters
    ----------
    n_samples : int, default=5000
        Number of samples.
    n_tasks : int, default=10
        Number of tasks (outputs).
    n_features : int, default=20
        Number of input features (at least 5; only the first five enter ``φ``).
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the draws (:func:`check_random_seed`).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The inputs.
    Y : ndarray of shape (n_samples, n_tasks)
        The outputs, one column per task.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``n_features < 5``.

    Examples
    --------
    >>> from bayesmv.datasets import make_multitask
    >>> X, Y = make_multitask(n_samples=100, n_tasks=3)
    >>> X.shape, Y.shape
    ((100, 20), (100, 3))
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
