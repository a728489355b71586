"""The batch counterpart: regularised least squares with an operator-valued kernel (the paper's
batch baseline, ``R_reg`` of §3), solved with the kernel's structure."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.exceptions import NotFittedError

from ..base import PersistenceMixin, require_targets
from ..datasets import SEED_DEPRECATED, check_positive, check_random_seed
from ..kernels import SeparableKernel
from .online import _check_targets, _predict_rows
from .terms import _kern, _prepare_inputs, _static_terms, kernel_terms

__all__ = ["OVKRidge", "cross_validated_mse", "gram_terms", "ovk_ridge_solve"]


def _joint_eigvecs(Ts, tol=1e-8):
    """An orthogonal ``V`` diagonalising every symmetric ``T`` in ``Ts`` (None if they do not commute)."""
    rng = np.random.default_rng(0)
    combo = sum(c * T for c, T in zip(rng.uniform(0.5, 1.5, len(Ts)), Ts))
    _, V = np.linalg.eigh(combo)
    for T in Ts:
        D = V.T @ T @ V
        off = D - np.diag(np.diag(D))
        if np.abs(off).max() > tol * max(1.0, np.abs(T).max()):
            return None
    return V


def ovk_ridge_solve(Ks, TW, Y, lams, solver="auto", dense_max=4000):
    """Dual coefficients of operator-valued kernel ridge regression for every ``λ`` in ``lams``.

    Solves ``(G + n λ I) vec(C) = vec(Y)``, ``G = Σ_l K_l ⊗ TW_l`` (sample-major), with the
    kernel's structure: one term → eigendecompositions of ``K`` and ``T``
    (``C = U[(UᵀYV)/(s dᵀ + nλ)]Vᵀ``); several terms with commuting ``T_l`` → joint eigenbasis
    ``V``: output direction ``j`` is the ``n x n`` problem
    ``(Σ_l D_l[j] K_l + nλ I) z_j = (Y V)_j`` (directions with equal eigenvalues share one
    factorisation); otherwise dense Cholesky (``n d <= dense_max``) or CG.

    Parameters
    ----------
    Ks : sequence of array-like of shape (n, n)
        The scalar Gram matrix ``K_l`` of each separable term.
    TW : array-like of shape (L, d, d)
        The weighted output matrices ``w_l T_l``.
    Y : ndarray of shape (n, d)
        The targets.
    lams : float or array-like of shape (n_lams,)
        The regularisation weights ``λ``.
    solver : {"auto", "eigen", "cholesky", "dense", "cg"}, default="auto"
        ``"eigen"`` / ``"cholesky"``: the joint eigenbasis with eigendecompositions or
        Cholesky factorisations (both need commuting ``T_l``); ``"dense"``: a Cholesky of
        ``G``; ``"cg"``: conjugate gradients; ``"auto"``: the structure if any, else dense or CG.
    dense_max : int, default=4000
        The largest ``n d`` that ``"auto"`` solves densely.

    Returns
    -------
    C : ndarray of shape (n_lams, n, d)
        The dual coefficients for each ``λ``.
    solver_used : str
        ``"eigen-split(k)"`` or ``"cholesky-split(k)"`` (``k`` output groups), ``"dense"`` or
        ``"cg"``.

    Raises
    ------
    ValueError
        If ``"eigen"`` or ``"cholesky"`` is asked for with non-commuting ``T_l``, or a solve
        fails (matrix not positive definite, non-finite coefficients, CG not converged).
    """
    n, d = Y.shape
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    Ks = [np.asarray(K) for K in Ks]
    TW = np.asarray(TW)
    V = _joint_eigvecs(list(TW)) if solver in ("auto", "eigen", "cholesky") else None
    if solver in ("eigen", "cholesky") and V is None:
        raise ValueError(f"solver={solver!r} needs commuting output matrices T; use 'dense' or 'cg'")
    if V is not None:
        Dm = np.stack([np.diag(V.T @ T @ V) for T in TW], axis=1)  # (d, L): eigenvalues of w_l T_l
        scale = max(1e-300, np.abs(Dm).max())
        _, grp = np.unique(np.round(Dm / scale, 10), axis=0, return_inverse=True)
        grp = np.asarray(grp).ravel()
        groups = [np.flatnonzero(grp == g) for g in np.unique(grp)]
        YV = Y @ V
        Z = np.zeros((len(lams), n, d))
        # an eigendecomposition costs ~30 Choleskys on this class of CPU: pick the cheaper route
        single = len(Ks) == 1
        n_eigh = 1 if single else len(groups)
        use_eig = solver == "eigen" or (solver == "auto" and 30 * n_eigh < len(groups) * len(lams))
        if use_eig and single:  # K = U diag(s) Uᵀ: every (group, λ) is a diagonal solve
            s, U = np.linalg.eigh(Ks[0])
            Yt = U.T @ YV
            for i, lam in enumerate(lams):
                Z[i] = U @ (Yt / (np.outer(s, Dm[:, 0]) + n * lam))
        else:
            for cols in groups:
                M = sum(Dm[cols[0], term] * Ks[term] for term in range(len(Ks)))
                if use_eig:
                    s, U = np.linalg.eigh(M)
                    Yt = U.T @ YV[:, cols]
                    for i, lam in enumerate(lams):
                        Z[i][:, cols] = U @ (Yt / (s + n * lam)[:, None])
                else:
                    for i, lam in enumerate(lams):
                        try:
                            cf = sla.cho_factor(M + n * lam * np.eye(n), lower=True, check_finite=False)
                        except np.linalg.LinAlgError as exc:
                            raise ValueError(
                                "OVKRidge: kernel matrix not positive definite; increase lam"
                            ) from exc
                        Z[i][:, cols] = sla.cho_solve(cf, YV[:, cols], check_finite=False)
        if not np.isfinite(Z).all():
            raise ValueError("OVKRidge solve failed (non-finite coefficients); increase lam")
        return np.einsum("knd,ed->kne", Z, V), ("eigen" if use_eig else "cholesky") + f"-split({len(groups)})"
    G = (
        sum(np.kron(K, T) for K, T in zip(Ks, TW))
        if solver == "dense" or (solver == "auto" and n * d <= dense_max)
        else None
    )
    out = []
    if G is not None:
        for lam in lams:
            try:
                cf = sla.cho_factor(G + n * lam * np.eye(n * d), lower=True)
            except np.linalg.LinAlgError as exc:
                raise ValueError(
                    "OVKRidge dense solve failed (matrix not positive definite); increase lam"
                ) from exc
            out.append(sla.cho_solve(cf, Y.reshape(-1)).reshape(n, d))
        C = np.stack(out)
        if not np.isfinite(C).all():
            raise ValueError("OVKRidge dense solve failed (matrix not positive definite?); increase lam")
        return C, "dense"
    Kj, Tj = jnp.asarray(np.stack(Ks)), jnp.asarray(TW)
    for lam in lams:
        mv = lambda c, lam=lam: jnp.einsum("lij,jd,lde->ie", Kj, c, Tj) + n * lam * c  # noqa: E731
        c, _ = jax.scipy.sparse.linalg.cg(mv, jnp.asarray(Y), tol=1e-10, maxiter=10 * n)
        res = np.linalg.norm(np.asarray(mv(c)) - Y) / max(np.linalg.norm(Y), 1e-300)
        if not np.isfinite(res) or res > 1e-6:
            raise ValueError(f"OVKRidge CG did not converge (relative residual {res:.2g}); increase lam")
        out.append(np.asarray(c))
    return np.stack(out), "cg"


def gram_terms(X1, X2, static):
    """The scalar kernel of every separable term between the rows of ``X1`` and ``X2``.

    Parameters
    ----------
    X1 : array-like of shape (n1, n_features)
        The first inputs.
    X2 : array-like of shape (n2, n_features)
        The second inputs.
    static : dict
        The terms' scalar kernels (``"kfns"``) and column ranges (``"cols"``).

    Returns
    -------
    grams : list of ndarray of shape (n1, n2)
        One Gram matrix per separable term.
    """
    return [
        np.asarray(_kern(k, c, jnp.asarray(X1), jnp.asarray(X2)))
        for k, c in zip(static["kfns"], static["cols"])
    ]


def cross_validated_mse(X, Y, TW, static, lams, cv, solver, random_state):
    """Mean squared error over ``cv`` folds of the ridge fit at each of ``lams``.

    The folds are a permutation drawn with ``random_state``, split in equal parts (§5's choice
    of λ in Audiffren & Kadri 2013).

    Parameters
    ----------
    X : ndarray of shape (n, n_features)
        The inputs.
    Y : ndarray of shape (n, d)
        The targets.
    TW : array-like of shape (L, d, d)
        The weighted output matrices ``w_l T_l``.
    static : dict
        The terms' scalar kernels (``"kfns"``) and column ranges (``"cols"``).
    lams : array-like of shape (n_lams,)
        The regularisation weights ``λ``.
    cv : int
        The number of folds.
    solver : str
        The solver of :func:`ovk_ridge_solve`.
    random_state : int, Generator or None
        Seeds the permutation.

    Returns
    -------
    mse : ndarray of shape (n_lams,)
        The squared error summed over the folds and outputs, divided by ``n``.
    """
    n = X.shape[0]
    folds = np.array_split(np.random.default_rng(random_state).permutation(n), cv)
    mse = np.zeros(len(lams))
    for te in folds:
        tr = np.setdiff1d(np.arange(n), te)
        C, _ = ovk_ridge_solve(gram_terms(X[tr], X[tr], static), TW, Y[tr], lams, solver)
        Kte = gram_terms(X[te], X[tr], static)
        for i in range(len(lams)):
            P = sum(K @ C[i] @ T for K, T in zip(Kte, TW))
            mse[i] += np.sum((P - Y[te]) ** 2) / n
    return mse


class OVKRidge(RegressorMixin, MultiOutputMixin, PersistenceMixin, BaseEstimator):
    """Batch regularised least squares with an operator-valued kernel (OVK ridge regression).

    The batch counterpart of :class:`ONORMA`, the baseline of Audiffren and Kadri [1]_: it
    minimises ``(1/n) Σ_i ½||f(x_i) - y_i||² + (λ/2)||f||²_H`` (``R_reg`` of §3) over all the
    data at once. The solution is ``f = Σ_i K(x_i, ·) c_i`` with ``(G + nλ I) vec(C) = vec(Y)``,
    solved with the kernel's structure (:func:`ovk_ridge_solve`). Given several values of
    ``lam``, ``cv``-fold cross-validation picks one first, as in the paper's §5.

    Parameters
    ----------
    kernel : operator-valued kernel or None, default=None
        A kernel of :mod:`bayesmv.kernels`, as ``ONORMA`` takes, with as many outputs as ``Y``
        has columns; None: a Gaussian kernel times the identity (independent outputs).
    lam : float or sequence of float, default=0.01
        The regularisation λ > 0; with several values, the one of least cross-validated mean
        squared error is used (stored as ``lam_``).
    cv : int, default=5
        The number of cross-validation folds when ``lam`` holds several values.
    solver : {"auto", "eigen", "cholesky", "dense", "cg"}, default="auto"
        ``"eigen"``/``"cholesky"``: one problem per output direction in the joint eigenbasis of
        the output matrices (they must commute); ``"dense"``/``"cg"``: the whole system by Cholesky
        or conjugate gradients; ``"auto"``: the eigenbasis, else dense up to n·d = 4000, else CG.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seeds the split into cross-validation folds (the integer used is ``random_seed_``).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples, n_outputs)
        The coefficients ``c_i`` of the training inputs.
    X_fit_ : ndarray of shape (n_samples, n_features_in)
        The training inputs (views concatenated).
    lam_ : float
        The regularisation used.
    solver_ : str
        The solver used, with the number of separate output groups for the eigenbasis solvers.
    cv_results_ : dict
        ``"lam"`` and ``"mean_squared_error"`` (summed over outputs) of each candidate; set only
        when ``lam`` holds several values.
    n_outputs_ : int
        The number of outputs (columns of ``Y``).
    n_features_in_ : int
        Number of input features (summed over the views).
    n_features_per_view_ : tuple of int
        The features of each view (one entry for single-view inputs).
    random_seed_ : int
        The integer seed used (from ``random_state``).

    See Also
    --------
    ONORMA : Online learning with an operator-valued kernel.
    MONORMA : Online learning with several operator-valued kernels.

    References
    ----------
    .. [1] J. Audiffren and H. Kadri, "Online Learning with Multiple Operator-valued Kernels",
       arXiv:1311.0222, 2013.

    Examples
    --------
    >>> from bayesmv import OVKRidge
    >>> from bayesmv.datasets import make_multitask
    >>> X, Y = make_multitask(n_samples=100, n_tasks=3, n_features=5)
    >>> ridge = OVKRidge(lam=[1e-3, 1e-2, 1e-1], cv=3).fit(X, Y)
    >>> ridge.predict(X[:2]).shape
    (2, 3)
    >>> ridge.cv_results_["mean_squared_error"].shape
    (3,)
    """

    def __init__(self, kernel=None, lam=0.01, cv=5, solver="auto", random_state=0, seed=SEED_DEPRECATED):
        self.kernel = kernel
        self.lam = lam
        self.cv = cv
        self.solver = solver
        self.random_state = random_state
        self.seed = seed

    def _terms(self, d):
        K = self.kernel if self.kernel is not None else SeparableKernel("rbf", np.eye(d))
        terms, dk, mv = kernel_terms(K)
        if dk != d:
            raise ValueError(f"kernel has output dimension {dk} but Y has {d} columns")
        return terms, mv

    def fit(self, X, Y):
        """Fit the regression on ``X`` and ``Y``, choosing ``lam`` by cross-validation if needed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The training inputs: one 2-D array, or a list of views (one 2-D array per view, or a
            :class:`~bayesmv.MultiViewArray`) for a multi-view kernel.
        Y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The real targets.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        lams = np.atleast_1d(np.asarray(self.lam, dtype=float))
        if lams.ndim != 1 or lams.size == 0:
            raise ValueError(f"lam must be a number or a 1-D sequence of numbers, got {self.lam!r}")
        for lam in lams:
            check_positive("lam", float(lam))
        if self.solver not in ("auto", "eigen", "cholesky", "dense", "cg"):
            raise ValueError(
                f"solver must be 'auto', 'eigen', 'cholesky', 'dense' or 'cg', got {self.solver!r}"
            )
        require_targets(self, Y)
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        Y = np.asarray(Y)
        d_guess = Y.shape[1] if Y.ndim == 2 else 1
        terms, mv = self._terms(d_guess)
        Xa, sizes, ranges = _prepare_inputs(X, mv)
        Yc = _check_targets(Y, Xa.shape[0])
        self._y_1d = np.ndim(Y) == 1
        self.n_features_per_view_ = sizes
        self.n_features_in_ = sum(sizes)
        self._multiview = mv
        self._terms_ = terms
        self._ranges = ranges
        TW = np.stack([T for _, T, _ in terms])
        self._TW = TW
        kfns, cols = _static_terms(terms, ranges, len(sizes))
        static = dict(kfns=kfns, cols=cols, groups=(0,) * len(terms), n_groups=1)
        self._static_ = static
        n = Xa.shape[0]
        if lams.size > 1:
            check_positive("cv", self.cv, integer=True)
            if not 2 <= self.cv <= n:
                raise ValueError(f"cv must be between 2 and n_samples={n}, got {self.cv}")
            mse = cross_validated_mse(Xa, Yc, TW, static, lams, self.cv, self.solver, self.random_seed_)
            self.cv_results_ = {"lam": lams, "mean_squared_error": mse}
            self.lam_ = float(lams[int(np.argmin(mse))])
        else:
            self.lam_ = float(lams[0])
        C, used = ovk_ridge_solve(gram_terms(Xa, Xa, static), TW, Yc, [self.lam_], self.solver)
        self.dual_coef_ = C[0]
        self.solver_ = used
        self.X_fit_ = Xa
        self.n_outputs_ = Yc.shape[1]
        return self

    def predict(self, X):
        """Predict the targets of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, laid out as in :meth:`fit` (one 2-D array, or a list of views).

        Returns
        -------
        Y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            ``f(x)`` for each row; 1-D when ``Y`` was 1-D.
        """
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError("This OVKRidge instance is not fitted yet; call 'fit' first.")
        Xa, _, _ = _prepare_inputs(X, self._multiview, self.n_features_per_view_, owner=type(self).__name__)
        F = _predict_rows(
            jnp.asarray(self.X_fit_),
            jnp.asarray(self.dual_coef_),
            jnp.asarray(self._TW),
            jnp.ones(1),
            Xa,
            self._static_,
        )
        return F[:, 0] if self._y_1d else F
