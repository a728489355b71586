"""Tests of MVML (paper 000_…, Algorithm 1): steps against dense references, the full path
against an independent implementation of eqs. (7)–(9), monotone objective, block sparsity,
the Nyström test extension, precomputed kernels, several views, errors."""

import logging

import matplotlib

matplotlib.use("Agg")

import jax
import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel

import bayesmv  # noqa: F401  (enables float64)
from bayesmv.diagnostics import FitTrace, check_convergence
from bayesmv.kernels import block_nystrom
from bayesmv.mvml import (
    MVMLClassifier,
    MVMLRegressor,
    a_step,
    g_step,
    group_norms,
    initial_metric,
    mvml_objective,
    prox_group_lasso,
    w_step,
)
from bayesmv.mvml.solver import MVMLSolver

N_SAMPLES = 24


def _data(n=N_SAMPLES, n_views=2, seed=0):
    """Views sharing a latent signal; binary labels from it."""
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, 2))
    Xs = [h @ rng.normal(size=(2, 3 + v)) + 0.3 * rng.normal(size=(n, 3 + v)) for v in range(n_views)]
    y = np.where(h[:, 0] + 0.2 * rng.normal(size=n) > 0, 1, 0)
    return Xs, y


def _dense_reference(Ks, y, lmbda, eta, mu0, max_iter, tol):
    """Algorithm 1a written out with dense matrices: eq. (8) with A⁺ (pinv), eq. (9), the
    objective (7), and the same step rule (halve μ until (7) does not increase)."""
    V, n = len(Ks), Ks[0].shape[0]
    H = sla.block_diag(*Ks)
    Wop = np.kron(np.full((1, V), 1.0 / V), np.eye(n))  # w' ⊗ I_n

    def gstep(A):
        Ap = np.linalg.pinv(A, hermitian=True)
        lhs = H @ Wop.T @ Wop @ H + lmbda * Ap
        g = np.linalg.solve(lhs, H @ Wop.T @ y)
        r = y - Wop @ H @ g
        return g, r @ r + lmbda * g @ Ap @ g + eta * np.sum(A * A), Ap

    A = np.eye(V * n)
    g, J, Ap = gstep(A)
    for _ in range(max_iter):
        z = Ap @ g
        mu = mu0
        for _ in range(30):
            A_t = (1 - 2 * mu * eta) * A + mu * lmbda * np.outer(z, z)
            g_t, J_t, Ap_t = gstep(A_t)
            if J_t <= J:
                break
            mu /= 2
        dec = J - J_t
        A, g, J, Ap = A_t, g_t, J_t, Ap_t
        if dec <= tol * abs(J):
            break
    return A, g


# ------------------------------------------------------------------------------ pure steps


@pytest.mark.parametrize("learn_weights", [False, True])
@pytest.mark.parametrize("n, full", [(7, True), (6, False), (15, False)])
def test_lockstep_batch_matches_dense_algorithm_1_per_problem(n, full, learn_weights):
    """Four problems (different y, λ, η) in one lockstep batch in the eigenbasis (eigh when
    n <= Vq, thin SVD of the kernel's factor when n > Vq; one at a time with w-steps): each gives
    the metric, g, weights, objective trace and step sizes of Algorithm 1 written with dense
    w-steps (10), A-steps (9) and g-steps (8), including fits that stop when no halving helps."""
    rng = np.random.default_rng(n)
    V, q = 2, (n if full else 4)
    U = rng.normal(size=(V, n, q))
    if full:
        U = U @ np.swapaxes(U, 1, 2)  # U_v = K_v
    Y = rng.normal(size=(n, 2))
    penalties = [(0.3, 0.8, 0.5), (0.05, 2.0, 0.2)]
    solver = MVMLSolver(U, "learn", full, learn_weights, 5, 1e-6, max_backtrack=2)
    assert solver.aux0.Q.shape == (n, min(n, V * q))
    results = solver.fit(Y, penalties)
    for i, (res, (lmbda, eta, mu0)) in enumerate(zip(results, np.repeat(penalties, 2, axis=0))):
        y = Y[:, i % 2]

        def g_step(A, w):
            M = np.hstack([wv * Uv for wv, Uv in zip(w, U)])
            c = np.linalg.solve(M @ A @ M.T + lmbda * np.eye(n), y)
            g = A @ M.T @ c
            return g, mvml_objective(U, A, g, w, y, lmbda, eta)

        A, w = initial_metric(U, "learn", full), np.full(V, 0.5)
        g, J = g_step(A, w)
        objective, steps = [J], []
        for _ in range(5):
            z = np.linalg.pinv(A, hermitian=True) @ g
            if learn_weights:
                w = w_step(U, g, y)
            for mu in mu0 * 0.5 ** np.arange(2):
                g_t, J_t = g_step(A_t := a_step(A, z, mu, lmbda, eta), w)
                if J_t <= J:
                    break
            if J_t > J:
                break
            A, g, steps = A_t, g_t, steps + [mu]
            objective.append(J_t)
            J, decrease = J_t, J - J_t
            if decrease <= 1e-6 * abs(J_t):
                break
        np.testing.assert_allclose(res["objective"], objective, rtol=1e-8)
        np.testing.assert_array_equal(res["step_size"], steps)
        np.testing.assert_allclose(solver.metric_matrix(res), A, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(res["g"], g, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(res["w"], w, rtol=1e-10)


@pytest.mark.parametrize("form", ["dual", "primal"])
def test_g_step_matches_dense_solve_of_eq8(form):
    rng = np.random.default_rng(1)
    V, n, q = 2, 7, 5
    U = rng.normal(size=(V, n, q))
    B = rng.normal(size=(V * q, V * q))
    A = B @ B.T + 0.5 * np.eye(V * q)
    w = np.array([0.7, 0.4])
    y = rng.normal(size=n)
    lmbda = 0.3
    Wu = np.hstack([w[v] * U[v] for v in range(V)])  # (w' ⊗ I) U
    g_ref = np.linalg.solve(Wu.T @ Wu + lmbda * np.linalg.inv(A), Wu.T @ y)  # eq. (8)/(15)
    g, z, fit = g_step(U, A, w, y, lmbda, form=form)
    np.testing.assert_allclose(np.asarray(g), g_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(A) @ np.asarray(z), g_ref, rtol=1e-7, atol=1e-9)  # z = A⁻¹ g
    r = y - Wu @ g_ref
    np.testing.assert_allclose(float(fit), r @ r + lmbda * g_ref @ np.linalg.solve(A, g_ref), rtol=1e-9)


def test_a_step_w_step_and_prox_against_formulas():
    rng = np.random.default_rng(2)
    B = rng.normal(size=(6, 6))
    A = B @ B.T + np.eye(6)
    g = rng.normal(size=6)
    z = np.linalg.solve(A, g)
    mu, lmbda, eta = 0.3, 0.2, 1.2  # mu * eta < 1/2
    A1 = np.asarray(a_step(A, z, mu, lmbda, eta))
    np.testing.assert_allclose(A1, (1 - 2 * mu * eta) * A + mu * lmbda * np.outer(z, z))  # eq. (9)
    assert np.allclose(A1, A1.T) and np.linalg.eigvalsh(A1).min() > 0
    # w-step (10): least squares on Z = [U_v g_v]
    U = rng.normal(size=(3, 9, 2))
    gg = rng.normal(size=6)
    y = rng.normal(size=9)
    Z = np.stack([U[v] @ gg[2 * v : 2 * v + 2] for v in range(3)], axis=1)
    np.testing.assert_allclose(np.asarray(w_step(U, gg, y)), np.linalg.lstsq(Z, y, rcond=None)[0], rtol=1e-8)
    # proximal group lasso (12): pair groups {(s,t),(t,s)} scaled by (1 - τ/||T_γ||)_+
    T = rng.normal(size=(6, 6))
    T = T + T.T
    tau = 2.0
    out = np.asarray(prox_group_lasso(T, 3, tau))
    for s in range(3):
        for t in range(3):
            blk = T[2 * s : 2 * s + 2, 2 * t : 2 * t + 2]
            nrm = np.linalg.norm(blk) if s == t else np.sqrt(2) * np.linalg.norm(blk)
            np.testing.assert_allclose(out[2 * s : 2 * s + 2, 2 * t : 2 * t + 2], max(0, 1 - tau / nrm) * blk)
    np.testing.assert_allclose(np.asarray(group_norms(out, 3)), np.asarray(group_norms(out, 3)).T)


# ------------------------------------------------------------------------------ full path / Nyström


def test_full_path_equals_dense_algorithm_1a():
    Xs, y = _data()
    ypm = np.where(y == 1, 1.0, -1.0)
    lmbda, eta, max_iter, tol = 0.1, 1.0, 4, 1e-4
    m = MVMLClassifier(lmbda=lmbda, eta=eta, nystrom=1.0, max_iter=max_iter, tol=tol).fit(Xs, y)
    Ks = [rbf_kernel(X) for X in Xs]
    A_ref, g_ref = _dense_reference(Ks, ypm, lmbda, eta, 0.45, max_iter, tol)
    np.testing.assert_allclose(m.A_, A_ref, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(m.g_, g_ref, rtol=1e-6, atol=1e-7)
    X_new, _ = _data(n=9, seed=5)
    f_ref = sum(
        0.5 * rbf_kernel(Xn, X) @ g_ref[v * N_SAMPLES : (v + 1) * N_SAMPLES]
        for v, (Xn, X) in enumerate(zip(X_new, Xs))
    )
    np.testing.assert_allclose(m.decision_function(X_new), f_ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("metric", ["cov", "identity"])
def test_nystrom_at_p_equal_n_reproduces_the_full_path(metric):
    """Block-Nyström engine (U_v = K_v^{1/2}, Ã = U'AU) with p = n gives the full path's fit."""
    Xs, y = _data()
    ypm = np.where(y == 1, 1.0, -1.0)
    Ks = np.stack([rbf_kernel(X) for X in Xs])
    bn = block_nystrom(Xs, "rbf", n_components=1.0, random_state=3)
    Un = np.stack([np.asarray(u) for u in bn.U])
    out = {}
    for name, U, full in [("full", Ks, True), ("nys", Un, False)]:
        res = MVMLSolver(U, metric, full, False, 3, 1e-4).fit(ypm[:, None], [(0.1, 1.0, 0.45)])[0]
        out[name] = np.einsum("vnq,vq->n", U, np.asarray(res["g"]).reshape(2, -1) * 0.5)
        # the multi-view kernel U Ã U' equals H A H at the start for both parametrisations
        A0 = np.asarray(initial_metric(U, metric, full))
        Ub = sla.block_diag(*U)
        out[name + "_K"] = Ub @ A0 @ Ub.T
    np.testing.assert_allclose(out["nys"], out["full"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out["nys_K"], out["full_K"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("nystrom, learn_weights", [(1.0, False), (0.25, True)])
def test_objective_never_increases_and_metric_stays_spd(nystrom, learn_weights):
    Xs, y = _data(seed=3)
    m = MVMLRegressor(
        lmbda=0.05,
        eta=0.5,
        nystrom=nystrom,
        metric="learn",
        max_iter=12,
        tol=0.0,
        learn_weights=learn_weights,
    ).fit(Xs, y.astype(float) + 0.1)
    obj = m.fit_trace_.objective
    assert len(obj) >= 4
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1])), obj
    assert obj[-1] < 0.9 * obj[0]
    A = m.A_
    np.testing.assert_array_equal(A, A.T)
    assert np.linalg.eigvalsh(A).min() > 0
    # the recorded objective is (7)/(13) at the final iterate, computed directly with A⁺
    V = 2
    if nystrom == 1.0:
        U = np.stack([rbf_kernel(X) for X in Xs])
    else:
        U = np.stack([np.asarray(u) for u in block_nystrom(Xs, "rbf", n_components=0.25, random_state=0).U])
    direct = mvml_objective(U, A, m.g_, m.weights_, y + 0.1, 0.05, 0.5, "learn")
    np.testing.assert_allclose(obj[-1], direct, rtol=1e-7)
    assert m.weights_.shape == (V,)
    if not learn_weights:
        np.testing.assert_allclose(m.weights_, [0.5, 0.5])
    assert isinstance(m.fit_trace_, FitTrace)
    report = check_convergence(m.fit_trace_)
    assert report.n_draws == len(obj) and report.variables[0].passed  # finite objective trace


def test_sparse_zeroes_whole_view_pair_blocks_as_eta_grows():
    Xs, y = _data(n_views=3, seed=4)
    zero_counts = []
    for eta in [1e-3, 0.2, 5.0, 50.0]:
        m = MVMLClassifier(lmbda=0.5, eta=eta, metric="sparse", nystrom=0.25, max_iter=5, step_size=0.5).fit(
            Xs, y
        )
        norms = m.block_norms_
        off = norms[np.triu_indices(3, 1)]
        zero_counts.append(int(np.sum(off == 0)))
        q = m.A_.shape[0] // 3
        for s in range(3):
            for t in range(3):
                blk = m.A_[s * q : (s + 1) * q, t * q : (t + 1) * q]
                assert (norms[s, t] == 0) == bool(np.all(blk == 0))  # whole blocks, nothing partial
        assert np.all(np.diff(m.fit_trace_.objective) <= 1e-10 * np.abs(m.fit_trace_.objective[:-1]))
    assert zero_counts == sorted(zero_counts), zero_counts
    assert zero_counts[0] == 0 and zero_counts[-1] == 3, zero_counts


@pytest.mark.parametrize("metric", ["learn", "cov"])
def test_nystrom_extension_on_training_points_matches_in_sample_fit(metric):
    Xs, y = _data()
    m = MVMLClassifier(nystrom=0.25, metric=metric, random_state=7, max_iter=3).fit(Xs, y)
    U = np.stack(
        [np.asarray(u) for u in block_nystrom(Xs, "rbf", n_components=m.n_landmarks_, random_state=7).U]
    )
    q = U.shape[2]
    in_sample = np.einsum("vnq,vq,v->n", U, m.g_.reshape(2, q), m.weights_)
    np.testing.assert_allclose(m.decision_function(Xs), in_sample, rtol=1e-9, atol=1e-10)
    assert m.A_.shape == (2 * q, 2 * q)


@pytest.mark.parametrize("nystrom", [1.0, 0.25])
def test_precomputed_kernels_match_named_kernel(nystrom):
    Xs, y = _data()
    X_new, _ = _data(n=7, seed=9)
    gammas = [0.3, 0.2]
    kp = [{"gamma": g} for g in gammas]
    a = MVMLClassifier(kernel="rbf", kernel_params=kp, nystrom=nystrom, max_iter=3).fit(Xs, y)
    Ks = [rbf_kernel(X, gamma=g) for X, g in zip(Xs, gammas)]
    Kt = [rbf_kernel(Xn, X, gamma=g) for Xn, X, g in zip(X_new, Xs, gammas)]
    b = MVMLClassifier(kernel="precomputed", nystrom=nystrom, max_iter=3).fit(Ks, y)
    np.testing.assert_allclose(b.decision_function(Kt), a.decision_function(X_new), rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match="features"):
        b.decision_function([K[:, :-1] for K in Kt])


def test_three_views_multiclass_and_regression():
    Xs, _ = _data(n_views=3, seed=6)
    rng = np.random.default_rng(0)
    labels = np.array(["a", "b", "c"])[rng.integers(0, 3, N_SAMPLES)]
    m = MVMLClassifier(nystrom=0.25, max_iter=2, learn_weights=True).fit(Xs, labels)
    assert list(m.classes_) == ["a", "b", "c"]
    assert m.decision_function(Xs).shape == (N_SAMPLES, 3)
    assert set(m.predict(Xs)) <= set(labels)
    assert m.A_.shape[0] == 3 and m.weights_.shape == (3, 3) and m.block_norms_.shape == (3, 3, 3)
    assert m.score(Xs, labels) > 0.5  # training accuracy beats chance
    obj = m.fit_trace_.objective
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]))
    target = Xs[0][:, 0] - Xs[1][:, 1]
    r = MVMLRegressor(nystrom=0.25, max_iter=3, kernel=["rbf", "linear", "rbf"]).fit(Xs, target)
    assert r.predict(Xs).shape == (N_SAMPLES,)
    assert r.score(Xs, target) > 0.5


def test_plot_metric_clone_and_params():
    Xs, y = _data()
    m = MVMLClassifier(nystrom=0.25, max_iter=2)
    c = clone(m).set_params(eta=2.0)
    assert c.get_params()["eta"] == 2.0 and m.get_params()["eta"] == 1.0
    with pytest.raises(NotFittedError):
        m.predict(Xs)
    m.fit(Xs, y)
    ax = m.plot_metric()
    assert len(ax.images) == 1 and ax.images[0].get_array().shape == m.A_.shape


@pytest.mark.parametrize(
    "kwargs, Xs_fn, match",
    [
        ({}, lambda Xs: [], "at least 1"),
        ({}, lambda Xs: [Xs[0], Xs[1][:-1]], "same number of samples"),
        (
            {},
            lambda Xs: [Xs[0], np.where(np.arange(Xs[1].size).reshape(Xs[1].shape) == 3, np.nan, Xs[1])],
            "NaN",
        ),
        ({"metric": "banana"}, None, "metric"),
        ({"lmbda": -1.0}, None, "lmbda"),
        ({"eta": 0.0}, None, "eta"),
        ({"step_size": 0.6, "eta": 1.0}, None, "step_size"),
        ({"nystrom": 0.0}, None, "nystrom"),
        ({"kernel": ["rbf"]}, None, "one kernel per view"),
        ({"kernel": "nope"}, None, "not a known kernel"),
        ({"kernel": "precomputed"}, None, "square"),
        ({"max_iter": -1}, None, "max_iter"),
    ],
)
def test_bad_input_raises_clear_errors(kwargs, Xs_fn, match):
    Xs, y = _data()
    if Xs_fn is not None:
        Xs = Xs_fn(Xs)
    with pytest.raises(ValueError, match=match):
        MVMLClassifier(**kwargs).fit(Xs, y)


def test_bad_labels_and_predict_shapes():
    Xs, y = _data()
    with pytest.raises(ValueError, match="single class"):
        MVMLClassifier().fit(Xs, np.zeros(N_SAMPLES))
    m = MVMLClassifier(nystrom=0.25, max_iter=1).fit(Xs, y)
    with pytest.raises(ValueError, match="features"):
        m.predict([Xs[0][:, :-1], Xs[1]])
    with pytest.raises(ValueError, match="views"):
        m.predict(Xs + [Xs[0]])


class _CompileLog(logging.Handler):
    def __init__(self):
        super().__init__()
        self.compiles = []

    def emit(self, record):
        if record.getMessage().startswith("Compiling"):
            self.compiles.append(record.getMessage())


def test_fit_and_predict_compile_no_xla_program():
    """Issue #4 times the first fit in a fresh process, so MVML runs on NumPy/SciPy: a fit and a
    prediction on shapes never seen before compile nothing (JAX's compile log stays silent)."""
    log = _CompileLog()
    logger = logging.getLogger("jax")
    logger.addHandler(log)
    try:
        with jax.log_compiles(True):
            jax.jit(lambda a: a * 2.0)(np.ones(13))  # the log does see a compile
            assert len(log.compiles) == 1
            Xs, y = _data(n=37, n_views=3, seed=5)
            for nystrom in (1.0, 0.5):
                for metric in ("learn", "sparse", "cov"):
                    model = MVMLClassifier(nystrom=nystrom, metric=metric, learn_weights=True).fit(Xs, y)
                    model.predict(Xs)
    finally:
        logger.removeHandler(log)
    assert log.compiles[1:] == []
