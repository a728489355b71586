"""Nyström approximation (plain and block-wise across views), MVML §3.5.

A kernel matrix ``K`` is approximated as ``Q W^+ Q' = U U'`` with ``Q = K[:, S]``,
``W = K[S, S]`` for ``p`` landmark samples ``S`` chosen by a seeded random ordering, and
``U = Q (W^+)^{1/2}``. Test rows extend the approximation as ``K_test ≈ Q_test (W^+)^{1/2} U'``,
i.e. test features ``U_test = Q_test (W^+)^{1/2}``. With ``p = n`` the approximation is exact.
As for the pairwise kernels, NumPy inputs are computed with NumPy and JAX inputs with
``jax.numpy``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ..datasets._validation import SEED_DEPRECATED, check_random_seed
from .pairwise import array_namespace, get_kernel

__all__ = [
    "BlockNystrom",
    "NystromFactors",
    "block_nystrom",
    "n_landmarks",
    "nystrom",
    "nystrom_from_columns",
    "nystrom_ordering",
    "nystrom_transform",
    "pinv_sqrt",
]


def nystrom_ordering(n_samples: int, random_state=0, seed=SEED_DEPRECATED) -> np.ndarray:
    """Random ordering of the samples (a permutation); its first ``p`` entries are the landmarks.

    :func:`nystrom` and :func:`block_nystrom` take their landmarks from this ordering, so the
    same integer ``random_state`` gives nested landmark sets for growing ``p``.

    Parameters
    ----------
    n_samples : int
        Number of samples to order.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the random ordering of the samples; ``None`` draws fresh entropy.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    ordering : ndarray of shape (n_samples,)
        A permutation of ``0, ..., n_samples - 1``.

    Raises
    ------
    ValueError
        If ``random_state`` is not an int >= 0, None, a ``RandomState`` or a ``Generator``.

    Examples
    --------
    >>> from bayesmv.kernels import nystrom_ordering
    >>> order = nystrom_ordering(5, random_state=0)
    >>> sorted(order.tolist())
    [0, 1, 2, 3, 4]
    """
    seed = check_random_seed(random_state, seed, "nystrom_ordering")
    return np.random.default_rng(seed).permutation(n_samples)


def n_landmarks(nystrom, n_samples: int) -> int:
    """Number of landmarks for a Nyström level given as a fraction or a count.

    Parameters
    ----------
    nystrom : float or int
        A fraction in (0, 1] of the samples (rounded, at least 1) or an integer count.
    n_samples : int
        Number of samples.

    Returns
    -------
    p : int
        Number of landmarks, ``1 <= p <= n_samples``.

    Raises
    ------
    ValueError
        If ``nystrom`` is a bool, a float outside (0, 1], not a number, or gives ``p``
        outside ``[1, n_samples]``.

    Examples
    --------
    >>> from bayesmv.kernels import n_landmarks
    >>> n_landmarks(0.5, 10), n_landmarks(3, 10), n_landmarks(1.0, 10)
    (5, 3, 10)
    """
    if isinstance(nystrom, (bool, np.bool_)):
        raise ValueError(f"nystrom must be a fraction in (0, 1] or an integer >= 1, got {nystrom!r}")
    if isinstance(nystrom, (int, np.integer)):
        p = int(nystrom)
    elif isinstance(nystrom, (float, np.floating)) and 0.0 < nystrom <= 1.0:
        p = max(1, int(round(float(nystrom) * n_samples)))
    else:
        raise ValueError(f"nystrom must be a fraction in (0, 1] or an integer >= 1, got {nystrom!r}")
    if not 1 <= p <= n_samples:
        raise ValueError(f"nystrom={nystrom!r} gives {p} landmarks; need 1 <= p <= n_samples={n_samples}")
    return p


def pinv_sqrt(W, rcond=None):
    """Square root of the pseudo-inverse, ``(W^+)^{1/2}``, of a symmetric PSD matrix.

    Computed by eigen-decomposition of the symmetrised ``(W + W') / 2``; eigenvalues at or
    below ``rcond`` times the largest absolute eigenvalue are dropped (their inverse square
    root is set to 0).

    Parameters
    ----------
    W : array-like of shape (p, p)
        Symmetric positive semi-definite matrix; a NumPy or JAX array.
    rcond : float, default=None
        Relative cut-off for small eigenvalues; ``None`` means ``p * eps`` of the dtype.

    Returns
    -------
    W_pinv_sqrt : ndarray of shape (p, p)
        ``(W^+)^{1/2}``, in the namespace of ``W`` (``jax.Array`` for JAX input).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import pinv_sqrt
    >>> pinv_sqrt(np.diag([4.0, 0.25]))
    array([[0.5, 0. ],
           [0. , 2. ]])
    >>> pinv_sqrt(np.diag([4.0, 0.0]))  # the zero eigenvalue is dropped
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    xp = array_namespace(W)
    W = xp.asarray(W)
    W = 0.5 * (W + W.T)
    evals, evecs = xp.linalg.eigh(W)
    if rcond is None:
        rcond = W.shape[0] * xp.finfo(W.dtype).eps
    keep = evals > rcond * xp.max(xp.abs(evals))
    inv_sqrt = xp.where(keep, 1.0 / xp.sqrt(xp.where(keep, evals, 1.0)), 0.0)
    return (evecs * inv_sqrt[None, :]) @ evecs.T


class NystromFactors(NamedTuple):
    """Nyström factors of one kernel: ``K ≈ U U'``.

    Returned by :func:`nystrom` and :func:`nystrom_from_columns`; :func:`nystrom_transform`
    extends them to test samples. ``U`` and ``W_pinv_sqrt`` are in the namespace of the kernel
    (NumPy or JAX).

    Parameters
    ----------
    landmarks : ndarray of int of shape (p,)
        Indices ``S`` of the ``p`` landmark samples.
    W_pinv_sqrt : ndarray or jax.Array of shape (p, p)
        ``(K[S, S]^+)^{1/2}``, the square root of the pseudo-inverse of the kernel between the
        landmarks.
    U : ndarray or jax.Array of shape (n, p)
        The factor ``U = K[:, S] (K[S, S]^+)^{1/2}``, so that ``K ≈ U U'``.
    """

    landmarks: np.ndarray  # indices S of the p landmark samples
    W_pinv_sqrt: np.ndarray | jnp.ndarray  # (p, p): (K[S, S]^+)^{1/2}
    U: np.ndarray | jnp.ndarray  # (n, p)


def nystrom_from_columns(Q, landmarks, rcond=None) -> NystromFactors:
    """Nyström factors from the kernel columns ``Q = K[:, landmarks]``.

    ``W = Q[landmarks] = K[S, S]`` and ``U = Q (W^+)^{1/2}``, so that ``K ≈ U U'``
    (MVML §3.5; Huusari et al. 2018).

    Parameters
    ----------
    Q : array-like of shape (n, p)
        Kernel between all ``n`` samples and the ``p`` landmarks.
    landmarks : array-like of int of shape (p,)
        Indices ``S`` of the landmark samples among the ``n`` rows.
    rcond : float, default=None
        Relative cut-off for small eigenvalues of ``W``, as in :func:`pinv_sqrt`.

    Returns
    -------
    factors : NystromFactors
        The named tuple ``(landmarks, W_pinv_sqrt, U)``: the landmark indices, ``(W^+)^{1/2}``
        of shape ``(p, p)`` and ``U`` of shape ``(n, p)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import nystrom_from_columns, rbf_kernel
    >>> X = np.random.default_rng(0).normal(size=(6, 2))
    >>> landmarks = np.array([3, 2, 5])
    >>> factors = nystrom_from_columns(rbf_kernel(X, X[landmarks]), landmarks)
    >>> factors.U.shape, factors.W_pinv_sqrt.shape
    ((6, 3), (3, 3))
    """
    Q = array_namespace(Q).asarray(Q)
    landmarks = np.asarray(landmarks)
    W_pinv_sqrt = pinv_sqrt(Q[landmarks], rcond)
    return NystromFactors(landmarks, W_pinv_sqrt, Q @ W_pinv_sqrt)


def nystrom_transform(Q_test, factors: NystromFactors):
    """Test-time extension of Nyström factors: ``U_test = Q_test (W^+)^{1/2}``.

    Then ``K_test ≈ U_test U'`` (MVML §3.5; Huusari et al. 2018).

    Parameters
    ----------
    Q_test : array-like of shape (m, p)
        Kernel between ``m`` test samples and the ``p`` landmarks.
    factors : NystromFactors
        The training factors, from :func:`nystrom` or :func:`nystrom_from_columns`.

    Returns
    -------
    U_test : ndarray of shape (m, p)
        Test factors, in the namespace of ``Q_test`` (``jax.Array`` for JAX input).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import nystrom, nystrom_transform, rbf_kernel
    >>> X = np.random.default_rng(0).normal(size=(6, 2))
    >>> factors = nystrom(X, "rbf", n_components=3, gamma=0.5)
    >>> Q_test = rbf_kernel(X[:2], X[factors.landmarks], gamma=0.5)
    >>> nystrom_transform(Q_test, factors).shape
    (2, 3)
    """
    return array_namespace(Q_test).asarray(Q_test) @ factors.W_pinv_sqrt


def nystrom(
    X, kernel="rbf", n_components=1.0, random_state=0, seed=SEED_DEPRECATED, **kernel_params
) -> NystromFactors:
    """Nyström factors ``K ≈ U U'`` of a kernel on ``X``.

    The ``p`` landmarks are the first entries of :func:`nystrom_ordering`; with ``p = n`` the
    approximation is exact (MVML §3.5; Huusari et al. 2018).

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        Samples; a NumPy or JAX array (the computation follows its namespace).
    kernel : str, callable or Kernel, default="rbf"
        The kernel, as accepted by :func:`get_kernel`.
    n_components : float or int, default=1.0
        Number of landmarks: a fraction in (0, 1] of the samples or an integer count.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the random ordering of the samples; ``None`` draws fresh entropy.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.
    **kernel_params
        Parameters of the kernel (``gamma``, ...).

    Returns
    -------
    factors : NystromFactors
        The named tuple ``(landmarks, W_pinv_sqrt, U)``: the landmark indices of shape
        ``(p,)``, ``(K[S, S]^+)^{1/2}`` of shape ``(p, p)`` and ``U`` of shape ``(n, p)``.

    Raises
    ------
    ValueError
        If ``n_components`` is not a valid number of landmarks (see :func:`n_landmarks`), if
        ``kernel`` is unknown, or if ``random_state`` is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import nystrom, rbf_kernel
    >>> X = np.random.default_rng(0).normal(size=(6, 2))
    >>> factors = nystrom(X, "rbf", n_components=3, gamma=0.5)
    >>> factors.U.shape
    (6, 3)
    >>> full = nystrom(X, "rbf", n_components=1.0, gamma=0.5)  # p = n: exact
    >>> bool(np.allclose(full.U @ full.U.T, rbf_kernel(X, gamma=0.5)))
    True
    """
    seed = check_random_seed(random_state, seed, "nystrom")
    X = array_namespace(X).asarray(X)
    p = n_landmarks(n_components, X.shape[0])
    landmarks = nystrom_ordering(X.shape[0], seed)[:p]
    k = get_kernel(kernel, **kernel_params)
    return nystrom_from_columns(k(X, X[landmarks]), landmarks)


class BlockNystrom(NamedTuple):
    """Block-wise Nyström over views with one shared landmark set (MVML §3.5).

    Returned by :func:`block_nystrom`; ``blockdiag(U_1, ..., U_V)`` approximates the square
    root of ``H = blockdiag(K_1, ..., K_V)``.

    Parameters
    ----------
    landmarks : ndarray of int of shape (p,)
        Indices ``S`` of the ``p`` landmark samples, shared by the views.
    factors : list of NystromFactors
        One :class:`NystromFactors` per view.
    kernels : list of Kernel or None
        One bound kernel per view (None when precomputed).
    landmark_views : list of array-like of shape (p, n_features_v) or None
        The landmark rows of each view (None when precomputed).

    Attributes
    ----------
    U : list of array-like of shape (n, p)
        The per-view factors ``U_v``.
    """

    landmarks: np.ndarray
    factors: list  # one NystromFactors per view
    kernels: list  # one bound kernel per view (None when precomputed)
    landmark_views: list  # the landmark rows of each view (None when precomputed)

    @property
    def U(self):
        """The per-view factors ``U_v``; ``blockdiag(U_1..U_V)`` approximates ``H``'s square root."""
        return [f.U for f in self.factors]

    def transform(self, Xs):
        """Test factors ``U_test_v`` for new views ``Xs`` (raw data; not for precomputed kernels).

        ``U_test_v = k_v(X_v, landmark_views[v]) (W_v^+)^{1/2}`` (:func:`nystrom_transform`).

        Parameters
        ----------
        Xs : list of array-like of shape (m, n_features_v)
            The new samples of each view.

        Returns
        -------
        Us_test : list of array-like of shape (m, p)
            The test factors of each view, in the namespace of the view (``jax.Array`` for JAX
            input).

        Raises
        ------
        ValueError
            If the factors were built from precomputed kernels; use :meth:`transform_columns`.
        """
        if self.kernels[0] is None:
            raise ValueError("this BlockNystrom was built from precomputed kernels; use transform_columns")
        return [
            nystrom_transform(k(X, L), f)
            for X, k, L, f in zip(Xs, self.kernels, self.landmark_views, self.factors)
        ]

    def transform_columns(self, Qs_test):
        """Test factors from test-vs-landmark kernel columns ``Q_test_v`` (shape ``(m, p)``).

        ``U_test_v = Q_test_v (W_v^+)^{1/2}`` (:func:`nystrom_transform`); for factors built from
        precomputed kernels too.

        Parameters
        ----------
        Qs_test : list of array-like of shape (m, p)
            The kernel of each view between the ``m`` test samples and the ``p`` landmarks.

        Returns
        -------
        Us_test : list of array-like of shape (m, p)
            The test factors of each view, in the namespace of ``Q_test_v`` (``jax.Array`` for
            JAX input).
        """
        return [nystrom_transform(Q, f) for Q, f in zip(Qs_test, self.factors)]


def block_nystrom(
    Xs,
    kernels="rbf",
    n_components=1.0,
    random_state=0,
    kernel_params=None,
    precomputed=False,
    seed=SEED_DEPRECATED,
):
    """Block-wise Nyström of several views, with one random sample ordering for all views.

    Every view shares the landmark set ``S`` (MVML §3.5; Huusari et al. 2018);
    ``blockdiag(U_1, ..., U_V)`` approximates the square root of ``H = blockdiag(K_1, ...,
    K_V)``.

    Parameters
    ----------
    Xs : list of array-like of shape (n, n_features_v)
        The views, all with the same ``n`` samples; with ``precomputed=True``, full
        ``n x n`` Gram matrices.
    kernels : str, callable, Kernel or list, default="rbf"
        One kernel (name/callable) for every view, or a list with one per view.
    n_components : float or int, default=1.0
        Number of landmarks: a fraction in (0, 1] of the samples or an integer count.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the random ordering of the samples; ``None`` draws fresh entropy.
    kernel_params : dict or list of dict, default=None
        Kernel parameters: one dict for every view, or a list with one per view.
    precomputed : bool, default=False
        Whether ``Xs`` are Gram matrices rather than raw views.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    factors : BlockNystrom
        The shared ``landmarks``, one :class:`NystromFactors` per view, and, for raw views, the
        bound kernels and landmark rows that :meth:`BlockNystrom.transform` uses.

    Raises
    ------
    ValueError
        If ``n_components`` is not a valid number of landmarks (see :func:`n_landmarks`), if a
        kernel is unknown, or if ``random_state`` is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import block_nystrom
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(6, 2)), rng.normal(size=(6, 3))]
    >>> bn = block_nystrom(Xs, "rbf", n_components=0.5, kernel_params={"gamma": 0.5})
    >>> [U.shape for U in bn.U]
    [(6, 3), (6, 3)]
    >>> [U.shape for U in bn.transform([X[:2] for X in Xs])]
    [(2, 3), (2, 3)]
    """
    seed = check_random_seed(random_state, seed, "block_nystrom")
    V = len(Xs)
    n = Xs[0].shape[0]
    p = n_landmarks(n_components, n)
    landmarks = nystrom_ordering(n, seed)[:p]
    if precomputed:
        factors = [nystrom_from_columns(array_namespace(K).asarray(K)[:, landmarks], landmarks) for K in Xs]
        return BlockNystrom(landmarks, factors, [None] * V, [None] * V)
    kernels = list(kernels) if isinstance(kernels, (list, tuple)) else [kernels] * V
    kernel_params = kernel_params or {}
    params = list(kernel_params) if isinstance(kernel_params, (list, tuple)) else [kernel_params] * V
    bound = [get_kernel(k, **(kp or {})) for k, kp in zip(kernels, params)]
    views = [array_namespace(X).asarray(X) for X in Xs]
    marks = [X[landmarks] for X in views]
    factors = [nystrom_from_columns(k(X, L), landmarks) for k, X, L in zip(bound, views, marks)]
    return BlockNystrom(landmarks, factors, bound, marks)
