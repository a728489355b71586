"""MKC, the estimator, and the functions around it: the λ grid in one vmapped solve, completion
of raw views with missing samples, and features whose linear kernel is a completed kernel
(Bhadra, Kaski & Rousu 2017)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator

from ..base import PersistenceMixin
from ..datasets import SEED_DEPRECATED, MultiViewArray, check_positive, check_random_seed, check_views
from ..diagnostics import FitTrace
from ..kernels import get_kernel, nystrom_from_columns
from .problem import _check_inputs, completed_kernels, completion_problem
from .solver import METHODS, solve_completion

__all__ = ["MKC", "complete_views", "fitted_attributes", "kernel_features", "mkc_lambda_grid"]


def fitted_attributes(method, problem, theta, S, objective, n_iter, converged):
    """MKC's fitted attributes from a :func:`~bayesmv.mkc.solver.solve_completion` result.

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}
        The completion variant.
    problem : CompletionProblem
        The problem that was solved.
    theta : array-like
        The solution: reconstruction weights, or the kernels for ``"sdp"``.
    S : array-like of shape (n_views, n_views)
        The between-view weights.
    objective : array-like
        The objective after each iteration (NaN-padded past ``n_iter``).
    n_iter : int
        The number of iterations run.
    converged : bool
        Whether the solver converged.

    Returns
    -------
    attributes : dict
        ``completed_kernels_``, ``observed_``, ``kernel_scale_``, ``between_view_weights_``
        (None for ``"embd_hm"``), ``reconstruction_weights_`` and ``basis_`` (the samples with
        a non-zero reconstruction row per view; both None for ``"sdp"``), ``n_iter_``,
        ``converged_`` and ``fit_trace_``.

    Raises
    ------
    FloatingPointError
        If the objective is not finite.
    """
    k = int(n_iter)
    hist = np.asarray(objective)[:k]
    if not np.all(np.isfinite(hist)):
        raise FloatingPointError("MKC objective became non-finite; check the kernels' scale")
    obs = problem.observed
    theta, S = np.asarray(theta), np.asarray(S)
    out = {
        "observed_": obs,
        "kernel_scale_": problem.scale,
        "completed_kernels_": list(completed_kernels(method, theta, problem)),
        "between_view_weights_": None if method == "embd_hm" else S,
        "reconstruction_weights_": None,
        "basis_": None,
    }
    if method != "sdp":
        out["reconstruction_weights_"] = theta
        A = theta if theta.ndim == 3 else np.broadcast_to(theta, (len(obs),) + theta.shape) * obs[:, :, None]
        rn = np.sqrt((A**2).sum(axis=-1))
        out["basis_"] = [np.flatnonzero(r > 1e-8 * max(r.max(initial=0.0), 1e-300)) for r in rn]
    out["n_iter_"] = k
    out["converged_"] = bool(converged)
    out["fit_trace_"] = FitTrace(
        estimates={"between_view_weights": S},
        traces={"objective": hist},
        converged=out["converged_"],
        method=f"MKC_{method}",
    )
    return out


class MKC(PersistenceMixin, BaseEstimator):
    """Multi-view kernel completion (MKC).

    Completes the kernel matrices of several views of the same samples when some samples are
    missing from some views, by learning how each sample is reconstructed from the others in
    each view and how the views' reconstructions relate to one another (Bhadra, Kaski and Rousu
    [1]_, §4-5). No view needs to be complete, but every sample must be seen in at least one
    view. The completed kernels are positive semi-definite; their observed entries are
    reconstructed too, not copied from the input.

    MKC is transductive: it completes the kernels of one fixed set of samples, without labels;
    :func:`kernel_features` turns the completed kernels into features that can be split for
    cross-validation downstream.

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}, default="embd_ht"
        ``"embd_ht"``: per-view reconstructions tied across views (eq. 24); ``"embd_hm"``: one
        shared by all views (eq. 23); ``"app"``: a between-view loss on kernel values (eq. 25);
        ``"sdp"``: the PSD kernels themselves (eq. 22); ``"rnd"``: ``"embd_ht"`` on a random basis.
    lambda1 : float, default=1.0
        Weight of the between-view loss (λ1 in eqs. 22, 24 and 25); larger values make the views'
        reconstructions agree more. Not used by ``"embd_hm"``.
    lambda2 : float, default=0.1
        Weight of the ℓ2,1 norm on the reconstruction weights (λ2; λ of eq. 23); larger values
        reconstruct each view from fewer samples. Not used by ``"sdp"``.
    max_iter : int, default=500
        Maximum number of outer block-coordinate descent iterations.
    tol : float, default=1e-7
        Stop when the relative change of the objective between iterations is at most ``tol``.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seeds the draw of the random basis of ``"rnd"`` (the integer used is stored as
        ``random_seed_``); the other variants are deterministic.
    n_basis : int or None, default=None
        Size of the random basis of ``"rnd"``, drawn first among the samples seen in every view;
        None: half the samples. Not used by the other variants.
    ridge : float, default=1e-9
        Relative ridge of the joint self-representation that gives the starting point of the
        reconstruction weights.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Attributes
    ----------
    completed_kernels_ : list of ndarray of shape (n_samples, n_samples)
        The completed, positive semi-definite kernel of each view.
    observed_ : ndarray of shape (n_views, n_samples), dtype=bool
        The mask of observed samples used (True where a sample is seen in a view).
    between_view_weights_ : ndarray of shape (n_views, n_views) or None
        The matrix ``S`` relating the views (rows on the simplex, zero diagonal); None for
        ``"embd_hm"``.
    reconstruction_weights_ : ndarray of shape (n_views, n_samples, n_samples) or None
        The reconstruction weights ``A^(m)`` on the scaled kernels ``K^(m) / kernel_scale_[m]``;
        one shared ``(n_samples, n_samples)`` matrix for ``"embd_hm"``; None for ``"sdp"``.
    basis_ : list of ndarray or None
        Per view, the indices of the samples with a non-zero row of reconstruction weights (the
        samples the view is reconstructed from); None for ``"sdp"``.
    kernel_scale_ : ndarray of shape (n_views,)
        Each view's scale: the mean of its diagonal over the samples seen in every view (over its
        observed samples when fewer than two are seen everywhere).
    n_iter_ : int
        Number of outer iterations run.
    converged_ : bool
        Whether the relative change of the objective fell to ``tol`` within ``max_iter``.
    fit_trace_ : FitTrace
        The objective per iteration and the between-view weights
        (:class:`~bayesmv.diagnostics.FitTrace`).
    random_seed_ : int
        The integer seed used (from ``random_state``).

    See Also
    --------
    complete_views : Complete the kernels of raw views with missing samples.
    mkc_lambda_grid : Completed kernels for many ``(lambda1, lambda2)`` pairs in one solve.
    kernel_features : Features whose linear kernel is a completed kernel.

    References
    ----------
    .. [1] S. Bhadra, S. Kaski and J. Rousu, "Multi-view kernel completion", Machine Learning
       106(5):713-739, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import MKC
    >>> from bayesmv.datasets import make_mkc_toy
    >>> Ks, _ = make_mkc_toy(n_samples=30, n_basis=5)
    >>> Ks[0][:3, :] = np.nan  # the first 3 samples are missing from view 0
    >>> Ks[0][:, :3] = np.nan
    >>> mkc = MKC(max_iter=50)
    >>> completed = mkc.fit_transform(Ks)
    >>> len(completed), completed[0].shape
    (5, (30, 30))
    >>> mkc.observed_.sum(axis=1)
    array([27, 30, 30, 30, 30])
    """

    def __init__(
        self,
        method="embd_ht",
        lambda1=1.0,
        lambda2=0.1,
        max_iter=500,
        tol=1e-7,
        random_state=0,
        n_basis=None,
        ridge=1e-9,
        seed=SEED_DEPRECATED,
    ):
        self.method = method
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.seed = seed
        self.n_basis = n_basis
        self.ridge = ridge

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True  # kernel matrices in, kernel matrices out
        tags.input_tags.allow_nan = True  # a missing sample is a NaN row and column
        return tags

    def _check_params(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_positive("lambda1", self.lambda1, allow_zero=True)
        check_positive("lambda2", self.lambda2, allow_zero=True)
        check_positive("max_iter", self.max_iter, integer=True)
        check_positive("tol", self.tol, allow_zero=True)
        check_positive("ridge", self.ridge)
        if self.n_basis is not None:
            check_positive("n_basis", self.n_basis, integer=True)

    def fit(self, Ks, observed=None):
        """Complete the kernels ``Ks``.

        Parameters
        ----------
        Ks : list of array-like of shape (n_samples, n_samples)
            One kernel matrix per view (at least two views), or an array of shape
            ``(n_views, n_samples, n_samples)``. A sample missing from a view is a NaN row and
            column of that view's kernel, unless ``observed`` says which samples are missing.
        observed : array-like of shape (n_views, n_samples), dtype=bool, default=None
            True where a sample is seen in a view; the other rows and columns of ``Ks`` are
            ignored. None: a sample is missing where its diagonal entry is NaN.

        Returns
        -------
        self : object
            The fitted estimator; the kernels are in ``completed_kernels_``.
        """
        self._check_params()
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        mats, obs = _check_inputs(Ks, observed)
        problem = completion_problem(self.method, mats, obs, self.random_seed_, self.n_basis, self.ridge)
        solution = solve_completion(
            self.method, problem, float(self.lambda1), float(self.lambda2), self.tol, self.max_iter
        )
        vars(self).update(fitted_attributes(self.method, problem, *solution))
        return self

    def fit_transform(self, Ks, observed=None):
        """Complete the kernels ``Ks`` and return them.

        Parameters
        ----------
        Ks : list of array-like of shape (n_samples, n_samples)
            One kernel matrix per view, missing samples as NaN rows and columns (see
            :meth:`fit`).
        observed : array-like of shape (n_views, n_samples), dtype=bool, default=None
            True where a sample is seen in a view; None: read from the NaN diagonal entries.

        Returns
        -------
        completed_kernels : list of ndarray of shape (n_samples, n_samples)
            The completed kernel of each view (``completed_kernels_``).
        """
        return self.fit(Ks, observed=observed).completed_kernels_


def mkc_lambda_grid(
    Ks,
    lambdas,
    method="embd_ht",
    observed=None,
    max_iter=500,
    tol=1e-7,
    random_state=0,
    n_basis=None,
    ridge=1e-9,
    seed=SEED_DEPRECATED,
):
    """Completed kernels for many ``(λ1, λ2)`` pairs in one vmapped solve (for tuning).

    Every pair starts from the same point as ``MKC(...).fit`` and gives the same result.

    Parameters
    ----------
    Ks : list of array-like of shape (n, n)
        One kernel matrix per view, missing samples as NaN rows and columns (see
        :meth:`MKC.fit`).
    lambdas : array-like of shape (L, 2)
        The non-negative ``(lambda1, lambda2)`` pairs.
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}, default="embd_ht"
        The completion variant, as in :class:`MKC`.
    observed : array-like of shape (n_views, n), dtype=bool, default=None
        True where a sample is seen in a view; None: read from the NaN diagonal entries.
    max_iter : int, default=500
        Maximum number of outer block-coordinate descent iterations.
    tol : float, default=1e-7
        Stop when the relative change of the objective between iterations is at most ``tol``.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seeds the draw of the random basis of ``"rnd"``.
    n_basis : int or None, default=None
        Size of the random basis of ``"rnd"``; None: half the samples.
    ridge : float, default=1e-9
        Relative ridge of the joint self-representation that gives the starting point.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    kernels : ndarray of shape (L, n_views, n, n)
        The completed kernels of each pair.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``lambdas`` is not an ``(L, 2)`` array of non-negative
        pairs, or the kernels or the mask are invalid.
    TypeError
        If a kernel is not real numeric or ``observed`` is not boolean.
    """
    seed = check_random_seed(random_state, seed, "mkc_lambda_grid")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    lambdas = np.asarray(lambdas, dtype=np.float64)
    if lambdas.ndim != 2 or lambdas.shape[1] != 2 or not np.all(lambdas >= 0):
        raise ValueError("lambdas must be an (L, 2) array of non-negative (lambda1, lambda2) pairs")
    mats, obs = _check_inputs(Ks, observed)
    problem = completion_problem(method, mats, obs, seed, n_basis, ridge)
    solve = jax.vmap(lambda l1, l2: solve_completion(method, problem, l1, l2, tol, max_iter)[0])
    thetas = np.asarray(solve(jnp.asarray(lambdas[:, 0]), jnp.asarray(lambdas[:, 1])))
    return np.stack([completed_kernels(method, th, problem) for th in thetas])


def complete_views(
    Xs, kernel="rbf", kernel_params=None, method="embd_ht", return_estimator=False, **mkc_params
):
    """Kernels of raw views with missing samples (all-NaN rows), completed by MKC.

    Kernels are evaluated on each view's observed rows only; the result (a list of complete
    ``(n, n)`` PSD kernels) can be fed to any kernel method (e.g. MVML).

    Parameters
    ----------
    Xs : list of array-like of shape (n, n_features)
        The views (at least two); a sample missing from a view is an all-NaN row.
    kernel : str, callable or list, default="rbf"
        One kernel name or callable for every view, or one per view.
    kernel_params : dict, list of dict or None, default=None
        The kernel parameters: one dict for every view, or one per view.
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}, default="embd_ht"
        The completion variant, as in :class:`MKC`.
    return_estimator : bool, default=False
        Also return the fitted :class:`MKC`.
    **mkc_params
        Further parameters of :class:`MKC` (``lambda1``, ``lambda2``, ``max_iter``, ...).

    Returns
    -------
    kernels : list of ndarray of shape (n, n)
        The completed kernel of each view.
    estimator : MKC
        The fitted estimator; only when ``return_estimator`` is True.

    Raises
    ------
    ValueError
        If the views are invalid, or ``kernel`` or ``kernel_params`` lists do not have one
        entry per view.

    See Also
    --------
    MKC : The estimator, on kernel matrices.
    kernel_features : Features whose linear kernel is a completed kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import complete_views
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(20, 3)), rng.normal(size=(20, 4))
    >>> X1[:3] = np.nan  # the first 3 samples are missing from view 0
    >>> kernels = complete_views([X1, X2], max_iter=20)
    >>> len(kernels), kernels[0].shape, bool(np.isfinite(kernels[0]).all())
    (2, (20, 20), True)
    """
    Xs = check_views(Xs, allow_missing=True, min_views=2)
    M = len(Xs)
    kernels = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel] * M
    if len(kernels) != M:
        raise ValueError(f"kernel lists {len(kernels)} kernels for {M} views")
    if kernel_params is None:
        params = [{}] * M
    elif isinstance(kernel_params, dict):
        params = [kernel_params] * M
    else:
        params = list(kernel_params)
        if len(params) != M:
            raise ValueError(f"kernel_params lists {len(params)} dicts for {M} views")
    n = Xs[0].shape[0]
    Ks = []
    for X, kern, par in zip(Xs, kernels, params):
        o = ~np.isnan(X).all(axis=1)
        K = np.full((n, n), np.nan)
        K[np.ix_(o, o)] = np.asarray(get_kernel(kern, **par)(X[o]))
        Ks.append(K)
    est = MKC(method=method, **mkc_params).fit(Ks)
    return (est.completed_kernels_, est) if return_estimator else est.completed_kernels_


def kernel_features(Ks):
    """Features ``Φ_m`` with ``Φ_m Φ_mᵀ = K_m`` for PSD kernels.

    The Nyström factors with every sample a landmark, ``Φ = K (K^+)^{1/2}``
    (:func:`~bayesmv.kernels.nystrom_from_columns`).

    MKC is transductive: it completes the kernels of one fixed set of samples, without labels.
    To cross-validate what comes after it, complete over all samples once, then split these
    features as scikit-learn splits any ``X`` and use ``kernel="linear"`` downstream: the linear
    kernel of ``Φ`` is the completed kernel, on every fold's train x train and test x train blocks.

    Parameters
    ----------
    Ks : list of array-like of shape (n, n)
        The (completed) PSD kernel of each view.

    Returns
    -------
    features : MultiViewArray
        The features ``Φ_m`` of each view, each of shape ``(n, n)``.

    Raises
    ------
    ValueError
        If a kernel is not a finite square matrix.
    """
    feats = []
    for m, K in enumerate(Ks):
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or not np.isfinite(K).all():
            raise ValueError(f"Ks[{m}] must be a finite square kernel matrix, got shape {K.shape}")
        feats.append(np.asarray(nystrom_from_columns(K, np.arange(K.shape[0])).U))
    return MultiViewArray(feats)
