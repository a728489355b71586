"""Tests of multi-view kernel completion (bayesmv.mkc, paper 002) and the ARE metric (eq. 34)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.base import clone

import bayesmv  # noqa: F401
from bayesmv.diagnostics import FitTrace
from bayesmv.metrics import average_relative_error, multiview_are
from bayesmv.mkc import (
    MKC,
    complete_views,
    knn_complete,
    mkc_lambda_grid,
    project_simplex,
    simplex_qp,
)
from bayesmv.mkc.solver import _grad_smooth, _smooth


def shared_span_problem(n=16, r=3, n_views=3, identical=False, seed=0):
    """Rank-r linear kernels; samples 0..r-1 (the basis) are seen in every view and every other
    sample is a combination of them with weights shared by all views (eq. 10)."""
    rng = np.random.default_rng(seed)
    alpha = np.vstack([np.eye(r), rng.uniform(0, 1, (n - r, r))])
    B0 = rng.standard_normal((r, r))
    Bs = [B0 if identical else rng.standard_normal((r, r)) for _ in range(n_views)]
    Xs = [alpha @ B for B in Bs]
    Ks = [X @ X.T for X in Xs]
    obs = np.ones((n_views, n), bool)
    for i in range(r, n):
        if i % 2 == 0:
            obs[i % n_views, i] = False  # every other non-basis sample misses one view
    return Ks, Xs, obs


def with_nans(Ks, obs):
    return [np.where(np.outer(o, o), K, np.nan) for K, o in zip(Ks, obs)]


# ------------------------------------------------------------------ exact completion (item 5)
@pytest.mark.parametrize("method", ["embd_ht", "embd_hm", "rnd"])
def test_exact_completion_in_span_of_complete_basis(method):
    Ks, _, obs = shared_span_problem()
    est = MKC(method=method, lambda1=1.0, lambda2=1e-7, max_iter=200, n_basis=3, random_state=0).fit(
        with_nans(Ks, obs)
    )
    assert multiview_are(Ks, est.completed_kernels_, obs) < 1e-3  # percent
    for K, Kh, o in zip(Ks, est.completed_kernels_, obs):
        np.testing.assert_allclose(Kh[np.ix_(o, o)], K[np.ix_(o, o)], atol=1e-5 * np.abs(K).max())
    if method == "rnd":  # the random basis is drawn among the complete samples
        assert all(len(b) == 3 for b in est.basis_)


@pytest.mark.parametrize("method", ["app", "sdp"])
def test_exact_completion_kernel_value_variants_on_equal_kernels(method):
    # app / sdp transfer kernel values (eq. 7): exact when the views share the kernel (eq. 6)
    Ks, _, obs = shared_span_problem(identical=True)
    est = MKC(method=method, lambda1=10.0, lambda2=1e-7, max_iter=250, tol=1e-12).fit(with_nans(Ks, obs))
    assert multiview_are(Ks, est.completed_kernels_, obs) < 0.5


def test_outputs_psd_and_symmetric_on_generic_data():
    rng = np.random.default_rng(1)
    n = 16
    Xs = [rng.standard_normal((n, 3)) for _ in range(3)]
    Ks = [np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)) for X in Xs]
    obs = np.ones((3, n), bool)
    obs[0, [1, 5]] = obs[1, [2, 7]] = obs[2, [3]] = False
    for method in ["embd_ht", "embd_hm", "app", "sdp", "rnd"]:
        est = MKC(method=method, lambda1=0.5, lambda2=0.01, max_iter=50).fit(Ks, observed=obs)
        for Kh in est.completed_kernels_:
            assert np.all(np.isfinite(Kh))
            np.testing.assert_allclose(Kh, Kh.T, atol=1e-12)
            w = np.linalg.eigvalsh(Kh)
            assert w.min() >= -1e-8 * max(w.max(), 1.0), (method, w.min())
        obj = est.fit_trace_.objective
        assert isinstance(est.fit_trace_, FitTrace) and len(obj) == est.n_iter_
        # block-coordinate descent with an exact S step and a descent A step: objective non-increasing
        assert np.all(np.diff(obj) <= 1e-9 * np.abs(obj[:-1]) + 1e-12), method


# ------------------------------------------------------------------ S rows: simplex QP (28/30/33)
def test_project_simplex_matches_kkt_and_mask():
    rng = np.random.default_rng(2)
    for _ in range(20):
        v = rng.standard_normal(6) * 2
        mask = rng.uniform(size=6) > 0.3
        mask[0] = True
        s = np.asarray(project_simplex(jnp.asarray(v), jnp.asarray(mask)))
        assert np.all(s >= 0) and abs(s.sum() - 1) < 1e-12 and np.all(s[~mask] == 0)
        # KKT: s = max(v - tau, 0) on the mask for one tau
        supp = (s > 0) & mask
        tau = (v[supp] - s[supp]).mean()
        np.testing.assert_allclose(s[mask], np.maximum(v[mask] - tau, 0), atol=1e-12)


def test_simplex_qp_matches_exhaustive_kkt_solution():
    rng = np.random.default_rng(3)
    for _ in range(10):
        X = rng.standard_normal((4, 7))
        G = X @ X.T + 1e-3 * np.eye(4)
        b = X @ rng.standard_normal(7)
        mask = np.array([True, True, False, True])
        s = np.asarray(simplex_qp(jnp.asarray(G), jnp.asarray(b), jnp.asarray(mask), n_iter=3000))
        # brute force: every support, equality-constrained KKT system
        best, idx = np.inf, np.flatnonzero(mask)
        for k in range(1, len(idx) + 1):
            for sup in itertools.combinations(idx, k):
                sup = list(sup)
                Gs = G[np.ix_(sup, sup)]
                kkt = np.block([[2 * Gs, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
                sol = np.linalg.solve(kkt, np.r_[2 * b[sup], 1.0])[:k]
                if np.all(sol >= -1e-12):
                    z = np.zeros(4)
                    z[sup] = sol
                    best = min(best, z @ G @ z - 2 * b @ z)
        assert s[2] == 0 and abs(s.sum() - 1) < 1e-12 and np.all(s >= 0)
        assert s @ G @ s - 2 * b @ s <= best + 1e-8 * max(1, abs(best))


def test_between_view_weights_rows_on_simplex():
    Ks, _, obs = shared_span_problem(seed=4)
    for method in ["embd_ht", "app", "sdp", "rnd"]:
        S = (
            MKC(method=method, lambda1=1.0, lambda2=1e-3, max_iter=30)
            .fit(with_nans(Ks, obs))
            .between_view_weights_
        )
        assert S.shape == (3, 3)
        np.testing.assert_allclose(np.diag(S), 0.0, atol=0)
        assert np.all(S >= 0)
        np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-10)


# ------------------------------------------------------------------ gradients of the objectives
@pytest.mark.parametrize("method", ["embd_ht", "app", "sdp", "embd_hm"])
def test_closed_form_gradient_matches_autodiff(method):
    rng = np.random.default_rng(5)
    M, n = 3, 6
    K = rng.standard_normal((M, n, n))
    Kz = jnp.asarray(K + K.transpose(0, 2, 1))
    o = rng.uniform(size=(M, n)) > 0.3
    W = jnp.asarray((o[:, :, None] & o[:, None, :]).astype(float))
    P = jnp.asarray(o.astype(float))
    S = jnp.asarray(rng.dirichlet(np.ones(M), size=M) * (1 - np.eye(M)))
    th = rng.standard_normal((n, n) if method == "embd_hm" else (M, n, n))
    if method == "sdp":
        th = th + th.transpose(0, 2, 1)
    th = jnp.asarray(th)
    g_ad = jax.grad(lambda t: _smooth(method, t, S, Kz, W, P, 0.7))(th)
    g_cf = _grad_smooth(method, th, S, Kz, W, P, 0.7)
    np.testing.assert_allclose(g_cf, g_ad, rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------ baselines and metric
def test_knn_and_wknn_against_hand_computation():
    # two views, 4 samples; sample 3 misses view 0. View 1 linear kernel on 1-D points.
    x0 = np.array([[0.0], [1.0], [3.0], [0.0]])
    x1 = np.array([[0.0], [1.0], [3.0], [0.5]])
    K0, K1 = x0 @ x0.T + 1.0, x1 @ x1.T + 1.0  # kernels (with a constant feature)
    obs = np.array([[True, True, True, False], [True, True, True, True]])
    # distances from sample 3 use view 1 only: d^2 = K_tt + K_jj - 2K_tj = (x_t - x_j)^2, normalised
    # by view 1's mean off-diagonal squared distance; the ordering (j=0 at 0.5, j=1 at 0.5, j=2 at 2.5)
    d2 = np.array([0.25, 0.25, 6.25])
    offs = [(a - b) ** 2 for a in x1[:, 0] for b in x1[:, 0]]
    mean = np.sum(offs) / 12
    d = np.sqrt(d2 / mean)
    for k, weighted in [(1, False), (2, False), (2, True), (3, True)]:
        out = knn_complete([K0, K1], observed=obs, k=k, weighted=weighted)
        nb = [0, 1, 2][:k]
        w = (1 / d[nb]) / np.sum(1 / d[nb]) if weighted else np.full(k, 1 / k)
        phi_hat = np.c_[w @ x0[nb], [1.0]]  # imputed feature map: average of the neighbours' maps
        feats = np.c_[x0, np.ones(4)]
        feats[3] = phi_hat
        np.testing.assert_allclose(out[0], feats @ feats.T, atol=1e-12)
        np.testing.assert_allclose(out[1], K1, atol=0)  # complete view untouched


def test_are_against_hand_computation():
    K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    Kp = K.copy()
    Kp[1] = [1.0, 2.0, 3.0]  # row error (0, 0, 2), |k_1| = sqrt(6)
    Kp[2] = [0.0, 1.0, 1.0]  # row error (0, 0, -1), |k_2| = sqrt(5)
    expected = 100 * (2 / np.sqrt(6) + 1 / np.sqrt(5)) / 2
    assert average_relative_error(K, Kp, [1, 2]) == pytest.approx(expected, rel=1e-14)
    assert average_relative_error(K, Kp, np.array([False, True, False])) == pytest.approx(
        100 * 2 / np.sqrt(6)
    )
    obs = np.array([[True, False, False], [True, True, True]])
    assert multiview_are([K, K], [Kp, Kp], obs) == pytest.approx(expected)  # complete view skipped
    assert np.isnan(average_relative_error(K, Kp, []))


# ------------------------------------------------------------------ API
def test_complete_views_bridge_and_lambda_grid_agree_with_fit():
    Ks, Xs, obs = shared_span_problem(seed=6)
    Xn = [np.where(o[:, None], X, np.nan) for X, o in zip(Xs, obs)]
    out, est = complete_views(
        Xn, kernel="linear", method="embd_hm", lambda2=1e-7, max_iter=100, return_estimator=True
    )
    assert multiview_are(Ks, out, obs) < 1e-3
    np.testing.assert_array_equal(est.observed_, obs)
    lams = np.array([[1.0, 1e-3], [0.1, 1e-2]])
    grid = mkc_lambda_grid(with_nans(Ks, obs), lams, method="embd_ht", max_iter=40)
    for (l1, l2), G in zip(lams, grid):
        ref = MKC(method="embd_ht", lambda1=l1, lambda2=l2, max_iter=40).fit(with_nans(Ks, obs))
        np.testing.assert_allclose(G, np.stack(ref.completed_kernels_), rtol=1e-8, atol=1e-10)


def test_estimator_protocol_and_validation():
    Ks, _, obs = shared_span_problem()
    est = MKC(method="app", lambda1=2.0)
    assert clone(est).get_params()["lambda1"] == 2.0
    Kn = with_nans(Ks, obs)
    assert len(est.fit_transform(Kn)) == 3
    with pytest.raises(ValueError, match="method"):
        MKC(method="nope").fit(Kn)
    with pytest.raises(ValueError, match="lambda1"):
        MKC(lambda1=-1).fit(Kn)
    with pytest.raises(ValueError, match="at least 2 views"):
        MKC().fit(Kn[:1])
    with pytest.raises(ValueError, match="same size"):
        MKC().fit([Kn[0], Kn[1][:5, :5]])
    with pytest.raises(ValueError, match="observed"):
        MKC().fit(Ks, observed=obs[:2])
    with pytest.raises(TypeError, match="observed"):
        MKC().fit(Ks, observed=obs.astype(int))
    bad = [K.copy() for K in Kn]
    bad[0][4, 5] = np.nan  # a NaN inside the observed block
    with pytest.raises(ValueError, match="observed block"):
        MKC().fit(bad)
    allmiss = np.ones_like(obs)
    allmiss[:, 5] = False
    with pytest.raises(ValueError, match="every view"):
        MKC().fit(Ks, observed=allmiss)
