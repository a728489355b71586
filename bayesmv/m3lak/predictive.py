"""M3LAK's posterior predictive (``docs/m3lak_sampler.md``): ``h* | x*`` is Gaussian once the per-view
latents ``u*`` are integrated out (Woodbury, only ``K x K`` and ``m x m`` Cholesky factors), one
``h*`` per posterior draw and test point, and ``f = βᵀφ̃(h*)``; the log-odds and probabilities
under each likelihood, and the learned kernel's credible band."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve, solve_triangular
from scipy.special import expit, logsumexp

from ..datasets import observed_mask
from ..inference._threads import single_threaded_blas
from ..inference.conditionals import latent_moments_given_views, view_precision_terms
from ..kernels import implied_kernel
from ..models.m3lak import decision_values, noise_by_view

__all__ = [
    "KernelBand",
    "class_probabilities",
    "kernel_band",
    "predictive_latent_moments",
    "predictive_log_odds",
    "predictive_probabilities",
    "problem_decisions",
    "sample_predictive_decisions",
]

# Bytes of working memory allowed per prediction chunk (draws x test points x features).
_PREDICT_MEMORY = 256 * 2**20
# At most this many posterior draws per compiled predictive chunk (bounds compile size/memory).
_MAX_CHUNK_DRAWS = 1024


class KernelBand(NamedTuple):
    """Posterior mean and equal-tailed credible band of the learned kernel ``k(t)``
    (:func:`kernel_band`), at ``k`` lags.

    Parameters
    ----------
    t : ndarray of shape (k,) or (k, m)
        The lags as given: distances along a direction ``(k,)``, or lags in the latent space
        ``(k, m)``.
    mean : ndarray of shape (k,)
        The posterior mean of ``k(t)`` at each lag.
    lower : ndarray of shape (k,)
        The lower end of the credible band at each lag.
    upper : ndarray of shape (k,)
        The upper end of the credible band at each lag.
    """

    t: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def predictive_latent_moments(Ws, Vs, tau, Xs, observed):
    """Mean and lower Cholesky factor of the precision of ``h* | x*``, for one posterior draw.

    u* is integrated out (``docs/m3lak_sampler.md``): the precision is
    ``P = I + Σ_{observed i} W_iᵀΣ_i⁻¹W_i`` and the mean ``P⁻¹ Σ_{observed i} W_iᵀΣ_i⁻¹x_i*``,
    ``Σ_i = V_iV_iᵀ + τ_i⁻¹I`` inverted by Woodbury. This is the dense reference-friendly form
    (one m x m Cholesky per test point); the estimator uses the per-missingness-pattern form of
    :func:`sample_predictive_decisions`.

    Parameters
    ----------
    Ws : list of array-like of shape (D_i, m)
        Per view, the loadings ``W_i``.
    Vs : list of array-like of shape (D_i, K)
        Per view, the loadings ``V_i`` of its own latents.
    tau : array-like of shape (n_views,) or (Σ_i D_i,)
        The noise precisions, per view or per feature
        (:func:`~bayesmv.models.m3lak.noise_by_view`).
    Xs : list of array-like of shape (n, D_i)
        The test views (values of unobserved rows are ignored).
    observed : array-like of bool of shape (n_views, n)
        Which test points each view observes.

    Returns
    -------
    mean : array of shape (n, m)
        The mean of ``h* | x*`` per test point.
    L : array of shape (n, m, m)
        The lower Cholesky factor of its precision ``P``, per test point.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak import predictive_latent_moments
    >>> Xs = [np.array([[1.0, 1.0], [np.nan, np.nan]])]
    >>> mean, L = predictive_latent_moments(
    ...     [np.ones((2, 1))], [np.zeros((2, 1))], np.array([1.0]), Xs, [[True, False]]
    ... )
    >>> np.asarray(mean).round(4).ravel(), np.asarray(L).round(4).ravel()
    (array([0.6667, 0.    ]), array([1.7321, 1.    ]))
    """
    taus = noise_by_view(jnp.asarray(tau), [W.shape[0] for W in Ws])
    obs = jnp.asarray(observed).T
    Xs = [jnp.where(obs[:, i : i + 1], jnp.asarray(X), 0.0) for i, X in enumerate(Xs)]
    return latent_moments_given_views(Ws, Vs, taus, Xs, obs)


def _draw_decisions(key, Ws, Vs, tau, beta, omega, gamma, X, inputs, patterns, pattern_index, latent_noise):
    """One posterior draw: sample ``h*`` for every test point and return ``f = βᵀφ̃(h*)`` (n,),
    plus ``γᵀz*`` with ``view_features`` (``gamma`` and the test inputs ``z*`` not None).
    ``X``: the views side by side ``(n, Σ_i D_i)``, zero on unobserved rows.

    Test points sharing a missingness pattern share the precision ``P``; one Cholesky per
    pattern. The mean ``P⁻¹ Σ_i Wᵢᵀ Σᵢ⁻¹ xᵢ`` is ``X`` times ``P⁻¹`` applied to the stacked
    ``Σᵢ⁻¹Wᵢ``: a solve with ``Σ_i D_i`` right-hand sides per pattern instead of ``n``.
    """
    m = Ws[0].shape[1]
    n = X.shape[0]
    n_pat = patterns.shape[0]
    P = jnp.broadcast_to(jnp.eye(m, dtype=beta.dtype), (n_pat, m, m))
    taus = noise_by_view(tau, [W.shape[0] for W in Ws])
    SWs = []
    for i, (W, V) in enumerate(zip(Ws, Vs)):
        A, SW = view_precision_terms(W, V, taus[i])
        P = P + patterns[:, i, None, None] * A
        SWs.append(SW)
    SW = jnp.concatenate(SWs, axis=0)  # (Σ_i D_i, m)
    L = jnp.linalg.cholesky(P)  # (n_pat, m, m)
    # one standard normal per draw, shared by every test point (common random numbers): a point's
    # draws depend on that point alone, not on the other rows or their order
    z = latent_noise * jax.random.normal(key, (m,), dtype=beta.dtype)  # latent_noise 0: h* = E[h* | x*]

    def draw_under(Lp):  # h* for every test point under one pattern's precision Lp Lpᵀ
        gain = cho_solve((Lp, True), SW.T)  # P⁻¹ (Σ⁻¹W)ᵀ, (m, Σ_i D_i)
        return X @ gain.T + solve_triangular(Lp.T, z, lower=False)  # cov = P⁻¹ = L⁻ᵀL⁻¹

    # every point is computed under every pattern (n_pat × the work of one), cheap while
    # patterns are few; a view a point lacks adds nothing (its rows of X are zero)
    H = jax.lax.map(draw_under, L)[pattern_index, jnp.arange(n)]
    f = decision_values(H, omega, beta)
    return f if gamma is None else f + inputs @ gamma


@jax.jit
def _decisions_chunk(keys, Ws, Vs, tau, beta, omega, gamma, X, inputs, patterns, pattern_index, latent_noise):
    """:func:`_draw_decisions` over a chunk of posterior draws, one after another: ``(chunk, n)``."""
    return jax.lax.map(
        lambda a: _draw_decisions(*a, X, inputs, patterns, pattern_index, latent_noise),
        (keys, Ws, Vs, tau, beta, omega, gamma),
    )


def sample_predictive_decisions(draws, Xs, key, chunk_size=None, inputs=None, latent="draw"):
    """Posterior predictive discriminant draws ``f_s(x*) = β_sᵀφ̃(h*_s)`` (``+ γ_sᵀz*`` with ``view_features``).

    One ``h*`` is drawn per posterior draw and test point. Draw s uses the key
    ``fold_in(key, s)`` and one standard normal for every test point, so a point's draws depend
    neither on the chunking nor on the other points or their order. Test points sharing a
    missingness pattern share the precision of ``h* | x*`` (one Cholesky per pattern). Memory
    is bounded by processing the draws in chunks (padded to one compiled shape).

    Parameters
    ----------
    draws : dict of str to array-like
        Flattened posterior draws (``"W_0"``…, ``"V_0"``…, ``"tau"``, ``"beta"``, ``"omega"``,
        and ``"gamma"`` with ``view_features``), each with leading axis S.
    Xs : list of array-like of shape (n, D_i)
        Standardised views with NaN rows for missing views.
    key : jax.random.PRNGKey
        The random key.
    chunk_size : int, default=None
        Posterior draws per compiled chunk; None sizes the chunks to a fixed memory budget
        (at most 1024 draws).
    inputs : array-like of shape (n, P) or None, default=None
        The classifier's inputs ``z*`` from the test views
        (:func:`~bayesmv.models.m3lak.view_inputs`), needed when ``draws`` has ``"gamma"``.
    latent : {"draw", "mean"}, default="draw"
        ``h*`` drawn from ``h* | x*`` (the joint model), or its mean ``E[h* | x*]``, as a
        model with ``label_feedback=False`` gives its classifier a training point's latent.

    Returns
    -------
    f : ndarray of shape (S, n)
        The decision values of every draw at every test point.

    Raises
    ------
    ValueError
        If ``draws`` has ``"gamma"`` and ``inputs`` is None.
    FloatingPointError
        If a decision value is not finite.
    """
    n_views = len(Xs)
    observed = observed_mask(Xs)  # (V, n)
    X0 = np.concatenate([np.where(observed[i][:, None], X, 0.0) for i, X in enumerate(Xs)], axis=1)
    patterns, pattern_index = np.unique(observed.T, axis=0, return_inverse=True)
    pattern_index = np.asarray(pattern_index).reshape(-1)
    Ws = [np.asarray(draws[f"W_{i}"]) for i in range(n_views)]
    Vs = [np.asarray(draws[f"V_{i}"]) for i in range(n_views)]
    tau, beta, omega = (np.asarray(draws[k]) for k in ("tau", "beta", "omega"))
    gamma = np.asarray(draws["gamma"]) if "gamma" in draws else None
    if gamma is not None and inputs is None:
        raise ValueError("the draws weigh the views' own inputs (gamma): give their test inputs")
    if latent not in ("draw", "mean"):
        raise ValueError(f"latent must be 'draw' or 'mean'; got {latent!r}")
    S, n = beta.shape[0], Xs[0].shape[0]
    if chunk_size is None:
        M2, m = beta.shape[1], Ws[0].shape[2]
        per_draw = 8 * n * (M2 + 4 * m + m * m) + 8 * sum(W.shape[1] * W.shape[2] for W in Ws)
        chunk_size = int(max(1, min(S, _PREDICT_MEMORY // max(per_draw, 1), _MAX_CHUNK_DRAWS)))
    keys = jax.vmap(lambda s: jax.random.fold_in(key, s))(jnp.arange(S))
    out = []
    pat_j = jnp.asarray(patterns, dtype=beta.dtype)
    idx_j = jnp.asarray(pattern_index)
    for start in range(0, S, chunk_size):
        sl = slice(start, start + chunk_size)
        pad = chunk_size - len(range(*sl.indices(S)))
        take = lambda a: np.concatenate([a[sl], np.repeat(a[sl][-1:], pad, axis=0)]) if pad else a[sl]  # noqa: E731
        f = _decisions_chunk(
            take(np.asarray(keys)),
            [take(W) for W in Ws],
            [take(V) for V in Vs],
            take(tau),
            take(beta),
            take(omega),
            None if gamma is None else take(gamma),
            X0,
            None if gamma is None else jnp.asarray(inputs),
            pat_j,
            idx_j,
            jnp.asarray(1.0 if latent == "draw" else 0.0, beta.dtype),
        )
        out.append(np.asarray(f)[: chunk_size - pad])
    f = np.concatenate(out, axis=0)
    if not np.isfinite(f).all():
        raise FloatingPointError("the posterior predictive produced non-finite decision values")
    return f


def predictive_log_odds(f, likelihood):
    """Posterior predictive log-odds ``log P(y* = 1 | x*) / P(y* = -1 | x*)`` from decision draws.

    ``"logistic"``: from the mean of ``σ(f)`` computed in log space (finite for any ``f``);
    ``"hinge"``: from the share of draws with ``f > 0`` counting half a draw on each side
    (finite when every draw agrees).

    Parameters
    ----------
    f : array-like of shape (..., S, n)
        Decision draws, the draws on axis -2.
    likelihood : {"hinge", "logistic"}
        The model's likelihood.

    Returns
    -------
    log_odds : ndarray of shape (..., n)
        The log-odds of each test point.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.predictive import predictive_log_odds
    >>> f = np.array([[1.0, -1.0], [2.0, -0.5], [-1.0, -3.0]])
    >>> predictive_log_odds(f, "hinge").round(4)
    array([ 0.5108, -1.9459])
    """
    f = np.asarray(f)
    if likelihood == "logistic":
        return logsumexp(-np.logaddexp(0.0, -f), axis=-2) - logsumexp(-np.logaddexp(0.0, f), axis=-2)
    votes = (f > 0).sum(axis=-2)
    return np.log(votes + 0.5) - np.log(f.shape[-2] - votes + 0.5)


def predictive_probabilities(f, likelihood):
    """Posterior predictive probability ``P(y* = 1 | x*)`` from decision draws.

    The mean of ``σ(f)`` (``"logistic"``) or the share of draws with ``f > 0`` (``"hinge"``, a
    vote: the hinge is a pseudo-likelihood with no ``P(y | f)``).

    Parameters
    ----------
    f : array-like of shape (..., S, n)
        Decision draws, the draws on axis -2.
    likelihood : {"hinge", "logistic"}
        The model's likelihood.

    Returns
    -------
    p : ndarray of shape (..., n)
        ``P(y* = 1 | x*)`` of each test point.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.predictive import predictive_probabilities
    >>> f = np.array([[1.0, -1.0], [2.0, -0.5], [-1.0, -3.0]])
    >>> predictive_probabilities(f, "hinge").round(4)
    array([0.6667, 0.    ])
    >>> predictive_probabilities(f, "logistic").round(4)
    array([0.6269, 0.2313])
    """
    f = np.asarray(f)
    return (expit(f) if likelihood == "logistic" else f > 0).mean(axis=-2)


def class_probabilities(p):
    """Class probabilities ``P(y* = c | x*)`` from the one-vs-rest probabilities.

    For one (binary) problem, ``1 - p`` and ``p``; otherwise the problems' probabilities
    normalised to sum to one (uniform where every problem gives probability 0).

    Parameters
    ----------
    p : array-like of shape (n_problems, n)
        ``P(y* = 1 | x*)`` of each one-vs-rest problem.

    Returns
    -------
    proba : ndarray of shape (n, n_classes)
        The class probabilities of each test point.

    Examples
    --------
    >>> from bayesmv.m3lak.predictive import class_probabilities
    >>> class_probabilities([[0.25, 1.0]])
    array([[0.75, 0.25],
           [0.  , 1.  ]])
    >>> class_probabilities([[0.2, 0.0], [0.6, 0.0]])
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    """
    p = np.asarray(p)
    if len(p) == 1:
        return np.stack([1.0 - p[0], p[0]], axis=1)
    p = p.T
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])


#: ``implied_kernel`` at lags ``T`` for each of a stack of frequency draws, compiled once per shape
_implied_kernels = jax.jit(jax.vmap(implied_kernel, in_axes=(None, 0)))


def kernel_band(omega, t, direction=None, interval=0.9):
    """Posterior of the learned shift-invariant kernel ``k(t) = mean_j cos(ω_jᵀt)``.

    The kernel that the frequencies ``Ω`` define (Du et al. 2018, §2.2), from their draws.

    Parameters
    ----------
    omega : array-like of shape (S, M, m)
        Frequency draws.
    t : array-like of shape (k, m) or (k,)
        Lags ``(k, m)``, or distances ``(k,)`` (a scalar for one) along ``direction``.
    direction : array-like of shape (m,), default=None
        The direction of scalar distances, normalised; default the unit diagonal ``1/√m``.
    interval : float, default=0.9
        Mass of the equal-tailed credible band, in (0, 1).

    Returns
    -------
    band : KernelBand
        The lags ``t`` as given (1-D at least), the posterior mean of ``k(t)`` and the
        equal-tailed ``interval`` credible band over the draws.

    Raises
    ------
    ValueError
        If ``interval`` is outside (0, 1), ``direction`` is not a finite non-zero vector of
        length ``m``, ``t`` has another shape or is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.predictive import kernel_band
    >>> band = kernel_band(np.ones((4, 2, 1)), [0.0, np.pi])
    >>> band.mean.round(3), band.lower.round(3)
    (array([ 1., -1.]), array([ 1., -1.]))
    """
    if not 0.0 < interval < 1.0:
        raise ValueError(f"interval must lie in (0, 1), got {interval!r}")
    omega = np.asarray(omega)
    m = omega.shape[-1]
    t = np.asarray(t, dtype=np.float64)
    if t.ndim == 0:
        t = t[None]
    if t.ndim == 1:
        d = np.ones(m) if direction is None else np.asarray(direction, dtype=np.float64).reshape(-1)
        if d.shape != (m,) or not np.isfinite(d).all() or np.linalg.norm(d) == 0:
            raise ValueError(f"direction must be a non-zero vector of length n_latent={m}")
        T = t[:, None] * (d / np.linalg.norm(d))[None, :]
    elif t.ndim == 2 and t.shape[1] == m:
        T = t
    else:
        raise ValueError(f"t must have shape (k,) or (k, n_latent={m}), got {t.shape}")
    if not np.isfinite(T).all():
        raise ValueError("t contains NaN or inf")
    k = np.asarray(_implied_kernels(T, omega))  # (S, k)
    a = (1.0 - interval) / 2.0
    lo, hi = np.quantile(k, [a, 1.0 - a], axis=0)
    return KernelBand(t, k.mean(axis=0), lo, hi)


def problem_decisions(posterior_draws, Zs, random_seed, inputs=None, latent="draw"):
    """Posterior predictive decision draws of every one-vs-rest problem.

    Problem ``k`` is drawn with the key ``fold_in(fold_in(PRNGKey(random_seed), 7919), k)``
    (:func:`sample_predictive_decisions`), BLAS single-threaded.

    Parameters
    ----------
    posterior_draws : list of dict of str to array-like
        Per problem, the flattened posterior draws (:func:`sample_predictive_decisions`).
    Zs : list of array-like of shape (n, D_i)
        The standardised views, NaN rows for missing views.
    random_seed : int
        Seed of the draws.
    inputs : array-like of shape (n, P) or None, default=None
        The classifier's inputs from the views with ``view_features``
        (:func:`~bayesmv.models.m3lak.view_inputs`).
    latent : {"draw", "mean"}, default="draw"
        Whether each draw samples ``h*`` or takes its mean (:func:`sample_predictive_decisions`).

    Returns
    -------
    f : ndarray of shape (n_problems, S, n)
        The decision draws of every problem.

    Raises
    ------
    FloatingPointError
        If a decision value is not finite.
    """
    base = jax.random.fold_in(jax.random.PRNGKey(random_seed), 7919)
    with single_threaded_blas():
        return np.stack(
            [
                sample_predictive_decisions(d, Zs, jax.random.fold_in(base, k), inputs=inputs, latent=latent)
                for k, d in enumerate(posterior_draws)
            ]
        )
