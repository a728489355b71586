"""ONORMA / MONORMA / OVKRidge against literal step-by-step references and closed forms."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import bayesmv
from bayesmv import MONORMA, ONORMA, OVKRidge
from bayesmv.kernels import (
    DiagonalMultiViewKernel,
    SeparableKernel,
    SumOfSeparableKernels,
    get_kernel,
    nonseparable_kernel,
)

D = 3
K_NS = nonseparable_kernel(0.3, D)
K_ONES = SeparableKernel("linear", np.ones((D, D)))
K_QUAD = SeparableKernel("polynomial", np.eye(D), (("degree", 2), ("gamma", 1.0), ("coef0", 0.0)))
T_RBF = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.0]])
K_RBF = SeparableKernel("rbf", T_RBF, (("gamma", 0.7),))


def _data(n=30, p=4, d=D, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p)) / np.sqrt(p / 3)
    W = rng.normal(size=(p, d))
    return X, X @ W + 0.1 * rng.normal(size=(n, d))


def _blocks(kernel, X, Z=None):
    """``B[i, k] = K(x_i, z_k)`` (d x d) from the shared sample-major block Gram."""
    Z = X if Z is None else Z
    G = np.asarray(kernel.gram(X, Z))
    d = G.shape[0] // len(X)
    return G.reshape(len(X), d, len(Z), d).transpose(0, 2, 1, 3)


def _grad(loss, f, y):
    if loss == "squared":
        return f - y
    if loss == "hinge":
        other = np.where(y > 0, -np.inf, f)
        r = int(np.argmax(other))
        return (np.eye(len(f))[r] - y) if f @ y - other[r] < 1 else np.zeros_like(f)
    return np.where(y * f < 1, -y, 0.0)


def naive_monorma(blocks, Y, lam, etas, r=1.0, s=None, adapt=True, loss="squared"):
    """Algorithms 1 (one kernel, adapt=False) and 2 written literally, one sample at a time;
    ``blocks[j][i, k] = K^j(x_i, x_k)``; ``||g^j||²`` recomputed from scratch from the coefficients
    (the O(t² d²) way) instead of eq. (6)."""
    m = len(blocks)
    delta = np.full(m, 1.0 / m) if adapt else np.ones(1)
    alphas, idx, preds, deltas, norms = [], [], [], [], []
    for t in range(len(Y)):
        g = np.array([sum((B[t, i] @ a for i, a in zip(idx, alphas)), np.zeros(Y.shape[1])) for B in blocks])
        f = delta @ g
        preds.append(f)
        new = -etas[t] * _grad(loss, f, Y[t])
        alphas = [(1 - etas[t] * lam) * a for a in alphas] + [new]
        idx = idx + [t]
        if s is not None:
            keep = [j for j, i in enumerate(idx) if i + 1 > t + 1 - s]
            alphas, idx = [alphas[j] for j in keep], [idx[j] for j in keep]
        A = np.array(alphas)
        gam = np.array([np.einsum("id,ikde,ke->", A, B[np.ix_(idx, idx)], A) for B in blocks])
        norms.append(gam)
        if adapt:
            z = delta**2 * gam
            den = np.sum(z ** (r / (r + 1))) ** (1 / r)
            if den > 0:
                delta = z ** (1 / (r + 1)) / den
        deltas.append(delta.copy())
    return np.array(preds), np.array(alphas), idx, np.array(deltas), np.array(norms)


def _predict_naive(kernels, delta, X, idx, alphas, Xq):
    return sum(dj * np.einsum("qide,ie->qd", _blocks(K, Xq, X[idx]), alphas) for dj, K in zip(delta, kernels))


def test_one_sample_lambda_zero_closed_form():
    X, Y = _data(n=2)
    m = ONORMA(K_NS, lam=0.0, eta0=0.7).fit(X[:1], Y[:1])
    np.testing.assert_allclose(m.online_predictions_[0], 0.0)  # f_0 = 0
    Xq = np.random.default_rng(1).uniform(size=(5, 4))
    # α_{1,1} = -η_1 (f_0(x_1) - y_1) = η_1 y_1 and f_1 = K(x_1, ·) α_{1,1}
    want = _blocks(K_NS, Xq, X[:1])[:, 0] @ (0.7 * Y[0])
    np.testing.assert_allclose(m.predict(Xq), want, rtol=1e-12)
    np.testing.assert_allclose(m.coef_[m.support_times_ > 0], 0.7 * Y[:1], rtol=1e-12)
    # ||f_1||² = η² yᵀ K(x_1, x_1) y  (eq. 6 with γ_0 = 0)
    np.testing.assert_allclose(
        m.rkhs_norms_sq_[0, 0], 0.49 * Y[0] @ _blocks(K_NS, X[:1])[0, 0] @ Y[0], rtol=1e-12
    )


@pytest.mark.parametrize("truncation", [None, 8])
def test_onorma_matches_algorithm_1(truncation):
    X, Y = _data()
    lam, eta0 = 0.1, 0.5
    m = ONORMA(K_NS, lam=lam, eta0=eta0, truncation=truncation, block_size=8).fit(X, Y)
    etas = eta0 / np.sqrt(np.arange(1, len(X) + 1))
    P, alphas, idx, _, norms = naive_monorma([_blocks(K_NS, X)], Y, lam, etas, s=truncation, adapt=False)
    np.testing.assert_allclose(m.online_predictions_, P, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.errors_, np.sum((P - Y) ** 2, axis=1), rtol=1e-10)
    np.testing.assert_allclose(m.cumulative_error_, np.cumsum(m.errors_) / np.arange(1, len(X) + 1))
    np.testing.assert_allclose(
        m.predict(X[:7]), _predict_naive([K_NS], [1.0], X, idx, alphas, X[:7]), rtol=1e-10, atol=1e-12
    )
    assert np.count_nonzero(m.support_times_) == (len(X) if truncation is None else truncation)
    if truncation is None:  # eq. (6) is the exact norm of the untruncated expansion
        np.testing.assert_allclose(m.rkhs_norms_sq_[:, 0], norms[:, 0], rtol=1e-9)


def test_truncation_at_least_stream_length_equals_none():
    # 600 steps: the untruncated buffer (capacity 1024) is read in two 512-slot pages, the
    # truncated one (s = 1024 >= t) as one masked ring buffer — two code paths, same Algorithm 1
    X, Y = _data(n=600)
    a = ONORMA(K_NS, lam=0.1, eta0=0.5, truncation=None).fit(X, Y)
    b = ONORMA(K_NS, lam=0.1, eta0=0.5, truncation=1024).fit(X, Y)
    assert a.coef_.shape[0] == 1024
    np.testing.assert_allclose(b.online_predictions_, a.online_predictions_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.predict(X[:50]), a.predict(X[:50]), rtol=1e-10, atol=1e-12)
    c = ONORMA(K_NS, lam=0.1, eta0=0.5, truncation=100).fit(X, Y)
    assert np.abs(c.online_predictions_[:101] - a.online_predictions_[:101]).max() < 1e-12
    assert np.abs(c.online_predictions_[101:] - a.online_predictions_[101:]).max() > 1e-8  # truncation acts


@pytest.mark.parametrize("truncation", [None, 8])
def test_partial_fit_chunks_equal_one_fit(truncation):
    X, Y = _data()
    full = ONORMA(K_NS, lam=0.1, eta0=0.5, truncation=truncation, block_size=8).fit(X, Y)
    part = ONORMA(K_NS, lam=0.1, eta0=0.5, truncation=truncation, block_size=8)
    for chunk in np.split(np.arange(30), [8, 11, 24]):
        part.partial_fit(X[chunk], Y[chunk])
    assert part.n_steps_ == 30
    np.testing.assert_allclose(part.online_predictions_, full.online_predictions_, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(part.cumulative_error_, full.cumulative_error_, rtol=1e-11)
    np.testing.assert_allclose(part.predict(X), full.predict(X), rtol=1e-11, atol=1e-13)


def test_monorma_matches_algorithm_2_and_norm_recursion():
    X, Y = _data()
    lam, r = 0.1, 1.5
    m = MONORMA([K_ONES, K_QUAD, K_RBF], r=r, lam=lam, eta0=0.3, block_size=8).fit(X, Y)
    etas = 0.3 / np.sqrt(np.arange(1, 31))
    P, alphas, idx, deltas, norms = naive_monorma(
        [_blocks(K, X) for K in (K_ONES, K_QUAD, K_RBF)], Y, lam, etas, r=r
    )
    # recursive γ (eq. 6) = the direct RKHS norm αᵀ G^j α from the coefficients, every step
    np.testing.assert_allclose(m.rkhs_norms_sq_, norms, rtol=1e-9)
    np.testing.assert_allclose(m.kernel_weights_, deltas, rtol=1e-9)
    np.testing.assert_allclose(np.sum(m.kernel_weights_**r, axis=1), 1.0, rtol=1e-12)  # δ on the ℓ_r sphere
    np.testing.assert_allclose(m.online_predictions_, P, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        m.predict(X[:5]),
        _predict_naive([K_ONES, K_QUAD, K_RBF], m.delta_, X, idx, alphas, X[:5]),
        rtol=1e-9,
        atol=1e-12,
    )
    # direct norm from the fitted buffer: vec(A)ᵀ (block Gram) vec(A)
    alive = m.support_times_ > 0
    A, Xb = m.coef_[alive], m.X_buffer_[alive]
    for j, K in enumerate([K_ONES, K_QUAD, K_RBF]):
        G = np.asarray(K.gram(Xb))
        np.testing.assert_allclose(m.gamma_[j], A.ravel() @ G @ A.ravel(), rtol=1e-9)


def test_monorma_default_kernels_learn_a_nonlinear_stream():
    """``MONORMA()``: the docstring's default (RBF kernels times the identity at γ = 0.1/p, 1/p and
    10/p), weights on the ℓ_r sphere (eq. 5) and a held-out error far below the mean's."""

    def f(X):
        return np.column_stack([np.sin(3 * X[:, 0]), X[:, 0] * X[:, 1]])

    rng = np.random.default_rng(0)
    n, p = 200, 2
    X = rng.uniform(-1, 1, size=(n, p))
    Y = f(X) + 0.05 * rng.normal(size=(n, 2))
    Xt = rng.uniform(-1, 1, size=(100, p))
    m = MONORMA(block_size=32).fit(X, Y)
    assert m.n_kernels_ == 3 and m.delta_.shape == (3,) and m.kernel_weights_.shape == (n, 3)
    np.testing.assert_allclose(m.kernel_weights_.sum(axis=1), 1.0, rtol=1e-12)  # r = 1: Σ_j δ_t^j = 1
    explicit = [SeparableKernel("rbf", np.eye(2), (("gamma", g / p),)) for g in (0.1, 1.0, 10.0)]
    want = MONORMA(explicit, block_size=32).fit(X, Y)
    np.testing.assert_allclose(m.kernel_weights_, want.kernel_weights_, rtol=1e-12)
    np.testing.assert_allclose(m.predict(Xt), want.predict(Xt), rtol=1e-12, atol=1e-14)
    # held-out MSE of the mean predictor: 0.29; MONORMA()'s measured 0.057 of it (ONORMA()'s 0.20)
    mse = np.mean((m.predict(Xt) - f(Xt)) ** 2)
    assert mse < 0.15 * np.mean((f(Xt) - Y.mean(axis=0)) ** 2)
    m2 = MONORMA(r=2.0, block_size=32).fit(X, Y)
    np.testing.assert_allclose(np.sum(m2.kernel_weights_**2, axis=1), 1.0, rtol=1e-12)  # Σ_j (δ_t^j)² = 1


@pytest.mark.parametrize("loss", ["hinge", "ovr_hinge"])
def test_classification_losses_match_reference_and_learn(loss):
    rng = np.random.default_rng(3)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    codes = rng.integers(0, 3, 90)
    X = centers[codes] + 0.6 * rng.normal(size=(90, 2))
    labels = np.array(["a", "b", "c"])[codes]
    K = SeparableKernel("rbf", np.eye(3), (("gamma", 0.5),))
    m = ONORMA(K, lam=0.01, eta0=1.0, loss=loss).fit(X, labels)
    Yt = np.eye(3)[codes] if loss == "hinge" else np.where(np.eye(3)[codes] > 0, 1.0, -1.0)
    P, *_ = naive_monorma(
        [_blocks(K, X[:30])], Yt[:30], 0.01, 1 / np.sqrt(np.arange(1, 31)), adapt=False, loss=loss
    )
    np.testing.assert_allclose(m.online_predictions_[:30], P, rtol=1e-10, atol=1e-12)
    assert list(m.classes_) == ["a", "b", "c"]
    assert m.score(X, labels) > 0.9  # well separated blobs (fixed seed)
    assert m.cumulative_error_[-1] < 0.3  # online mistake rate


def test_multiview_diagonal_kernel_matches_reference():
    rng = np.random.default_rng(5)
    Xs = [rng.normal(size=(17, 2)), rng.normal(size=(17, 3))]
    Y = rng.normal(size=(17, 2))
    K = DiagonalMultiViewKernel((get_kernel("rbf", gamma=0.5), get_kernel("linear")))
    m = ONORMA(K, lam=0.1, eta0=0.2).fit(Xs, Y)
    B = np.zeros((17, 17, 2, 2))  # G(x, t) = diag(k^1(x^1, t^1), k^2(x^2, t^2)), written out
    B[:, :, 0, 0] = np.exp(-0.5 * ((Xs[0][:, None, :] - Xs[0][None, :, :]) ** 2).sum(-1))
    B[:, :, 1, 1] = Xs[1] @ Xs[1].T
    P, *_ = naive_monorma([B], Y, 0.1, 0.2 / np.sqrt(np.arange(1, 18)), adapt=False)
    np.testing.assert_allclose(m.online_predictions_, P, rtol=1e-10, atol=1e-12)
    assert m.predict(Xs).shape == (17, 2)
    with pytest.raises(ValueError):
        m.predict(np.hstack(Xs))


def _dense_ridge(kernel, X, Y, lam):
    n, d = Y.shape
    G = np.asarray(kernel.gram(X))
    return np.linalg.solve(G + n * lam * np.eye(n * d), Y.ravel()).reshape(n, d)


@pytest.mark.parametrize(
    "kernel,solver,lam,expect",
    [
        (K_RBF, "auto", 0.01, "cholesky-split"),  # one separable term
        (K_RBF, "eigen", [0.01, 0.1], "eigen"),
        (K_NS, "auto", 0.01, "cholesky-split(2)"),  # 1 and I commute: 2 distinct problems
        (K_NS, "eigen", [0.003, 0.01], "eigen-split(2)"),
        (SumOfSeparableKernels((K_RBF, K_ONES)), "auto", 0.01, "dense"),  # T's do not commute
        (SumOfSeparableKernels((K_RBF, K_ONES)), "cg", 0.01, "cg"),
    ],
)
def test_ovkridge_equals_dense_solve(kernel, solver, lam, expect):
    X, Y = _data(n=30)
    m = OVKRidge(kernel, lam=lam, solver=solver, cv=3).fit(X, Y)
    assert m.solver_.startswith(expect)
    C = _dense_ridge(kernel, X, Y, m.lam_)
    np.testing.assert_allclose(m.dual_coef_, C, rtol=1e-7, atol=1e-9)
    Xq = X[:6] + 0.05
    want = (np.asarray(kernel.gram(Xq, X)) @ C.ravel()).reshape(6, D)  # f(x) = Σ_i K(x, x_i) c_i
    np.testing.assert_allclose(m.predict(Xq), want, rtol=1e-7, atol=1e-9)
    if np.ndim(lam):
        assert m.lam_ in lam and m.cv_results_["mean_squared_error"].shape == (2,)


def test_sklearn_protocol_and_trace():
    X, Y = _data()
    m = ONORMA(K_NS, lam=0.02, block_size=8)
    assert clone(m).get_params()["lam"] == 0.02
    m.fit(X, Y)
    report = bayesmv.check_convergence(m.fit_trace_)
    assert report.passed and m.fit_trace_.objective.shape == (30,)
    mm = clone(MONORMA([K_ONES, K_QUAD], block_size=8)).fit(X, Y)
    assert mm.kernel_weights_.shape == (30, 2)
    assert np.isfinite(mm.fit_trace_.traces["kernel_weight_1"]).all()
    assert OVKRidge(K_NS).fit(X, Y).score(X, Y) > 0.5


def test_bad_input():
    X, Y = _data()
    with pytest.raises(NotFittedError):
        ONORMA(K_NS).predict(X)
    with pytest.raises(TypeError, match="kernel"):
        ONORMA(kernel="rbf").fit(X, Y)
    with pytest.raises(ValueError, match="output dimension"):
        ONORMA(nonseparable_kernel(0.2, 2)).fit(X, Y)
    with pytest.raises(ValueError, match="lam"):
        ONORMA(K_NS, lam=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="eta_t \\* lam"):
        ONORMA(K_NS, lam=2.0, eta0=1.0).fit(X, Y)
    with pytest.raises(ValueError, match="loss"):
        ONORMA(K_NS, loss="absolute").fit(X, Y)
    with pytest.raises(ValueError, match="truncation"):
        ONORMA(K_NS, truncation=0).fit(X, Y)
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ONORMA(K_NS).fit(Xn, Y)
    with pytest.raises(ValueError, match="rows"):
        ONORMA(K_NS).fit(X, Y[:-1])
    m = ONORMA(K_NS, block_size=8).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :2])
    with pytest.raises(ValueError, match="outputs"):
        m.partial_fit(X, Y[:, :2])
    with pytest.raises(ValueError, match="kernels"):
        MONORMA([]).fit(X, Y)
    with pytest.raises(ValueError, match="classes_"):
        c = ONORMA(SeparableKernel("rbf", np.eye(2)), loss="hinge").partial_fit(X, np.arange(30) % 2)
        c.partial_fit(X, np.full(30, 7))
    with pytest.raises(ValueError, match="lam"):
        OVKRidge(K_NS, lam=0.0).fit(X, Y)
    with pytest.raises(NotFittedError):
        OVKRidge(K_NS).predict(X)
    # steps far too large on a repeated point: the error is multiplied by (1 - η) = -9 every step
    # steps far too large on a repeated point: ||K(x, x)|| = 1.6, so the error grows ~160-fold every step
    Xr, Yr = np.full((30, 4), 0.5), np.ones((30, 3))
    bad = ONORMA(K_NS, lam=0.0, eta0=100.0, schedule="constant", block_size=8)
    with pytest.warns(RuntimeWarning, match="too large"):
        bad.fit(Xr, Yr)  # ~1e66: finite but absurd
    with pytest.raises(ValueError, match="diverged"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(10):  # overflows to inf/NaN within a few chunks
            bad.partial_fit(Xr, Yr)
