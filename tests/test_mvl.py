"""Tests for bayesmv.mvl (MVL, Minh, Bazzani & Murino 2016): closed-form / brute-force references."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge

import bayesmv  # noqa: F401  (float64)
from bayesmv.diagnostics import FitTrace
from bayesmv.kernels import get_kernel, rbf_kernel
from bayesmv.mvl import (
    MVLClassifier,
    MVLClassifierCV,
    MVLRegressor,
    between_view_matrix,
    box_qp,
    choose_by_loo,
    graph_laplacian,
    knn_graph,
    mvl_ls_cg,
    mvl_ls_loo,
    mvl_ls_objective,
    mvl_ls_path,
    mvl_ls_solve,
    mvl_svm_solve,
    normalized_cut,
    psd_sqrt,
    simplex_coding,
    sphere_lstsq,
)
from bayesmv.mvl.graphs import _manifold_matrix


def _toy(n=9, m=3, p=3, seed=0, gamma=0.3):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(n, p)) for _ in range(m)]
    Ks = [np.asarray(rbf_kernel(X, gamma=gamma)) for X in Xs]
    return rng, Xs, Ks


def _dense_eq13(Ks, Ls, Y, c, gA, gB, gW, R):
    """Literal eq. (13): (C*C J K[x] + l M K[x] + l gamma_A I) a = C* y, sample-major, K = G ⊗ R."""
    m, N = len(Ks), Ks[0].shape[0]
    ell, d = Y.shape
    G = sum(np.kron(K, np.diag(np.eye(m)[v])) for v, K in enumerate(Ks))  # eq. (94)
    Lx = sum(np.kron(L, np.diag(np.eye(m)[v])) for v, L in enumerate(Ls))  # eq. (60)
    K = np.kron(G, R)  # eq. (66)
    C = np.kron(c[None, :], np.eye(d))  # eq. (52)
    J = np.diag((np.arange(N) < ell).astype(float))
    M = gB * np.kron(np.eye(N), np.kron(between_view_matrix(m), np.eye(d))) + gW * np.kron(Lx, np.eye(d))
    Il = np.zeros((N, ell))
    Il[:ell, :ell] = np.eye(ell)
    lhs = np.kron(J, C.T @ C) @ K + ell * M @ K + ell * gA * np.eye(N * m * d)
    a = np.linalg.solve(lhs, np.kron(Il, C.T) @ Y.ravel())
    return a.reshape(N, m, d).transpose(1, 0, 2)  # -> (m, N, d)


@pytest.mark.parametrize("with_R", [False, True])
def test_sylvester_equals_dense_eq13(with_R):
    rng, Xs, Ks = _toy()
    Ls = [graph_laplacian(K) for K in Ks]
    Y = rng.normal(size=(5, 2))
    c = rng.normal(size=3)
    R = None
    if with_R:
        B = rng.normal(size=(2, 2))
        R = B @ B.T + 0.1 * np.eye(2)
    A = mvl_ls_solve(Ks, Y, c, 0.1, 0.05, 0.02, Ls, R=R)
    ref = _dense_eq13(Ks, Ls, Y, c, 0.1, 0.05, 0.02, np.eye(2) if R is None else R)
    np.testing.assert_allclose(A, ref, atol=1e-10, rtol=1e-8)


def test_ls_solution_minimises_objective_and_cg_matches():
    rng, Xs, Ks = _toy(seed=1)
    Ls = [graph_laplacian(K) for K in Ks]
    Y = rng.normal(size=(5, 2))
    c = np.array([0.5, 0.3, 0.2])
    A = mvl_ls_solve(Ks, Y, c, 0.1, 0.05, 0.02, Ls)
    f0 = mvl_ls_objective(Ks, Y, c, A, 0.1, 0.05, 0.02, Ls)
    # objective is a convex quadratic in A: random perturbations never decrease it
    for _ in range(50):
        dA = 1e-3 * rng.normal(size=A.shape)
        assert mvl_ls_objective(Ks, Y, c, A + dA, 0.1, 0.05, 0.02, Ls) >= f0 - 1e-13
    Acg, k, res = mvl_ls_cg([get_kernel("rbf", gamma=0.3)] * 3, Xs, Y, c, 0.1, 0.05, 0.02, tol=1e-12)
    assert res <= 1e-10
    np.testing.assert_allclose(Acg, A, atol=1e-8)


def test_one_view_no_manifold_equals_kernel_ridge():
    rng, Xs, Ks = _toy(n=20, m=1, seed=2)
    y = rng.normal(size=20)
    gA = 0.03
    reg = MVLRegressor(kernel="rbf", kernel_params={"gamma": 0.3}, gamma_A=gA, gamma_B=0.0, gamma_W=0.0)
    reg.fit(Xs, y)
    Xt = [rng.normal(size=(7, 3))]
    kr = KernelRidge(alpha=20 * gA, kernel="rbf", gamma=0.3).fit(
        Xs[0], y
    )  # (1/l)||.||^2 + gA -> alpha = l gA
    np.testing.assert_allclose(reg.predict(Xt), kr.predict(Xt[0]), atol=1e-9)
    pred, views = reg.predict(Xt, return_views=True)
    assert views.shape == (7, 1)
    assert isinstance(reg.fit_trace_, FitTrace)


def test_uniform_c_no_manifold_equals_average_kernel_ridge():
    """c = 1/m, gamma_B = gamma_W = 0: C f ranges over the RKHS of sum_v c_v^2 k^v = K_avg / m with
    the min-norm split, so MVL-LS is kernel ridge on the average kernel with lam = m gamma_A."""
    rng, Xs, Ks = _toy(n=15, m=4, seed=8)
    Y = rng.normal(size=(15, 2))
    gA = 2e-3
    reg = MVLRegressor(kernel="precomputed", gamma_A=gA, gamma_B=0.0, gamma_W=0.0).fit(Ks, Y)
    K_avg = sum(Ks) / 4
    ref = K_avg @ np.linalg.solve(K_avg + 15 * 4 * gA * np.eye(15), Y)
    np.testing.assert_allclose(reg.predict(Ks), ref, atol=1e-10)
    # the between-view and within-view terms move the fit away from it
    Ls = [graph_laplacian(knn_graph(K, 3)) for K in Ks]
    A = mvl_ls_solve(Ks, Y, np.full(4, 0.25), gA, 1e-3, 1e-2, Ls)
    assert np.abs(0.25 * sum(K @ A[v] for v, K in enumerate(Ks)) - ref).max() > 1e-3


def _bias_free_svm_primal(K, y, C):
    """Reference: hinge-loss SVM without bias, 1/2 a'Ka + C sum xi, solved by SLSQP (generic)."""
    n = len(y)

    def obj(z):
        a, xi = z[:n], z[n:]
        return 0.5 * a @ K @ a + C * xi.sum()

    cons = [
        {"type": "ineq", "fun": lambda z: y * (K @ z[:n]) - 1 + z[n:]},
        {"type": "ineq", "fun": lambda z: z[n:]},
    ]
    r = minimize(
        obj, np.zeros(2 * n), constraints=cons, method="SLSQP", options={"ftol": 1e-13, "maxiter": 1000}
    )
    assert r.success
    return r.x[:n]


def test_one_view_binsvm_equals_bias_free_svm():
    rng, Xs, Ks = _toy(n=14, m=1, seed=3, gamma=0.5)
    y = np.where(Xs[0][:, 0] + 0.3 * rng.normal(size=14) > 0, 1, -1)
    gA = 0.05
    clf = MVLClassifier(
        kernel="precomputed", loss="hinge", gamma_A=gA, gamma_B=0.0, gamma_W=0.0, qp_tol=1e-10
    )
    clf.fit(Ks, y)
    # (1/l) sum hinge + gA ||f||^2  <=>  1/2||f||^2 + C sum hinge, C = 1/(2 l gA)
    a = _bias_free_svm_primal(Ks[0], y.astype(float), 1.0 / (2 * 14 * gA))
    np.testing.assert_allclose(clf.decision_function(Ks), Ks[0] @ a, atol=1e-5)
    assert clf.fit_trace_.converged


@pytest.mark.parametrize("loss", ["hinge", "simplex_hinge"])
def test_svm_strong_duality_with_manifold(loss):
    """Primal objective (14) at the returned f equals the dual optimum: certifies eq. (22)/(25)."""
    rng, Xs, Ks = _toy(n=10, m=2, p=2, seed=4, gamma=0.5)
    Ls = [graph_laplacian(K) for K in Ks]
    codes = np.array([0, 1, 2, 0, 1, 2, 1])
    ell, m, N, P = 7, 2, 10, 3
    c = np.array([0.6, 0.4])
    M = _manifold_matrix(Ls, 0.03, 0.02)
    A, _, infos = mvl_svm_solve([psd_sqrt(K) for K in Ks], codes, P, c, 0.05, M, loss=loss, tol=1e-11)
    F = np.stack([K @ A[v] for v, K in enumerate(Ks)])
    g = np.einsum("v,vid->id", c, F[:, :ell])
    Ff = F.reshape(m * N, -1)
    reg = 0.05 * np.einsum("vid,vid->d", A, F) + np.einsum("id,ij,jd->d", Ff, M, Ff)  # per output
    if loss == "simplex_hinge":
        sc = g @ simplex_coding(P)
        hinge = (
            sum(max(0.0, 1 / (P - 1) + sc[i, k]) for i in range(ell) for k in range(P) if k != codes[i]) / ell
        )
        primals = [hinge + reg.sum()]
    else:
        Yt = np.where(codes[:, None] == np.arange(P), 1.0, -1.0)
        primals = [np.maximum(0, 1 - Yt[:, j] * g[:, j]).sum() / ell + reg[j] for j in range(P)]
    duals = [-info["objective"][-1] for info in infos]
    np.testing.assert_allclose(primals, duals, rtol=1e-7, atol=1e-9)


def test_box_qp_matches_generic_solver():
    rng = np.random.default_rng(5)
    for n, rank in [(25, 25), (25, 8)]:
        B = rng.normal(size=(n, rank))
        H = B @ B.T / rank + 1e-6 * np.eye(n)
        q = rng.normal(size=n)
        x, info = box_qp(H, q, 0.0, 0.4, tol=1e-10)
        x2, info2 = box_qp(H, q, 0.0, 0.4, tol=1e-10, warm_start=None)  # pure projected Newton
        assert info2["kkt"] <= 1e-9 and info2["n_iter"] >= 1
        np.testing.assert_allclose(x2, x, atol=1e-7)
        ref = minimize(
            lambda z: 0.5 * z @ H @ z - q @ z,
            np.zeros(n),
            jac=lambda z: H @ z - q,
            bounds=[(0, 0.4)] * n,
            method="L-BFGS-B",
            options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000},
        )
        assert info["kkt"] <= 1e-9
        fx = 0.5 * x @ H @ x - q @ x
        assert fx <= ref.fun + 1e-10
        assert abs(fx - ref.fun) <= 1e-7 * max(1.0, abs(ref.fun))
        assert np.all(x >= 0) and np.all(x <= 0.4)


def _circle_min(A, b, radius):
    th = np.linspace(0, 2 * np.pi, 400001)
    pts = radius * np.stack([np.cos(th), np.sin(th)])
    return np.linalg.norm(A @ pts - b[:, None], axis=0).min()


@pytest.mark.parametrize("case", ["I_full_rank", "I_rank_deficient", "II_rank_deficient", "thm15"])
def test_sphere_lstsq_matches_brute_force(case):
    rng = np.random.default_rng(6)
    u = rng.normal(size=(5, 1))
    if case == "I_full_rank":
        A, b, radius = rng.normal(size=(5, 2)), rng.normal(size=5), 1.0
    elif case == "I_rank_deficient":  # rank 1 < m, gamma* > 0
        A, b, radius = u @ np.array([[1.0, 2.0]]), 5 * rng.normal(size=5), 0.1
    elif case == "II_rank_deficient":  # rank 1 < m, sum c_i^2/sigma_i^2 < radius^2: case (II)
        A, b, radius = u @ np.array([[1.0, 2.0]]), 0.01 * rng.normal(size=5), 3.0
    else:  # A^T b = 0: Theorem 15
        A = rng.normal(size=(5, 2))
        b, radius = np.linalg.svd(A)[0][:, 3], 1.5
    x, g = sphere_lstsq(A, b, radius)
    assert np.isclose(np.linalg.norm(x), radius, rtol=1e-10)
    assert np.linalg.norm(A @ x - b) <= _circle_min(A, b, radius) + 1e-9
    assert np.linalg.norm(A @ x - b) >= _circle_min(A, b, radius) - 1e-6
    if case == "II_rank_deficient":
        assert g == pytest.approx(0.0, abs=1e-12)
    if case in ("I_full_rank", "I_rank_deficient"):
        assert g > 0 or case == "I_full_rank"


def _mv_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n // 3)
    centers = rng.normal(size=(3, 4)) * 2.0
    Xs = [centers[y] @ rng.normal(size=(4, 5)) + rng.normal(size=(n, 5)) * s for s in (0.5, 1.0, 2.0)]
    return Xs, y


@pytest.mark.parametrize("loss", ["squared", "hinge", "simplex_hinge"])
def test_classifier_end_to_end_and_semisupervised(loss):
    Xs, y = _mv_data()
    tr = np.arange(0, 60, 4)
    un = np.arange(1, 60, 4)
    te = np.setdiff1d(np.arange(60), np.concatenate([tr, un]))
    clf = MVLClassifier(loss=loss, gamma_A=1e-3, gamma_B=1e-4, gamma_W=1e-4, graph="knn", n_neighbors=4)
    clf.fit([X[tr] for X in Xs], y[tr], Xs_unlabeled=[X[un] for X in Xs])
    assert clf.n_unlabeled_ == len(un)
    assert clf.score([X[te] for X in Xs], y[te]) > 0.8
    s, views = clf.decision_function([X[te] for X in Xs], return_views=True)
    assert s.shape == (len(te), 3) and views.shape == (len(te), 3, 3)
    np.testing.assert_allclose(s, np.einsum("v,nvk->nk", clf.c_, views), atol=1e-10)
    np.testing.assert_allclose(clf.per_view_decision_function([X[te] for X in Xs]), views)
    obj = clf.fit_trace_.objective
    assert obj.size >= 1 and np.all(np.isfinite(obj))
    c2 = clone(clf)
    assert c2.get_params() == clf.get_params()


def test_optimize_c_monotone_and_binary_labels():
    Xs, y = _mv_data(seed=1)
    yb = np.where(y == 0, "a", "b")
    clf = MVLClassifier(optimize_c=True, gamma_A=1e-3, gamma_B=1e-5, gamma_W=0.0, max_iter=10)
    clf.fit(Xs, yb)
    obj = clf.fit_trace_.objective
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]) + 1e-14)  # alternating minimisation
    assert np.isclose(np.linalg.norm(clf.c_), np.linalg.norm(np.full(3, 1 / 3)))
    assert clf.decision_function(Xs).shape == (60,)
    assert set(clf.predict(Xs)) <= {"a", "b"}


def test_knn_graph_symmetric():
    _, _, Ks = _toy(n=12, m=1)
    W = knn_graph(Ks[0], 3)
    np.testing.assert_allclose(W, W.T)
    assert np.all((W > 0).sum(axis=1) >= 3) and np.all(np.diag(W) == 0)


def test_bad_input():
    Xs, y = _mv_data()
    with pytest.raises(NotFittedError):
        MVLClassifier().predict(Xs)
    with pytest.raises(ValueError, match="gamma_A"):
        MVLClassifier(gamma_A=-1.0).fit(Xs, y)
    with pytest.raises(ValueError, match="loss"):
        MVLClassifier(loss="logistic").fit(Xs, y)
    with pytest.raises(ValueError, match="optimize_c"):
        MVLClassifier(loss="hinge", optimize_c=True).fit(Xs, y)
    with pytest.raises(ValueError, match="single class"):
        MVLClassifier().fit(Xs, np.zeros(60))
    with pytest.raises(ValueError, match="c must"):
        MVLClassifier(c=[1.0, 2.0]).fit(Xs, y)
    with pytest.raises(ValueError, match="same number of samples"):
        MVLClassifier().fit([Xs[0], Xs[1][:10], Xs[2]], y)
    bad = [X.copy() for X in Xs]
    bad[1][3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MVLRegressor().fit(bad, y.astype(float))
    clf = MVLClassifier(gamma_W=0.0).fit(Xs, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict([Xs[0], Xs[1][:, :2], Xs[2]])
    with pytest.raises(ValueError, match="Xs_unlabeled"):
        MVLClassifier().fit(Xs, y, Xs_unlabeled=[X[:, :3] for X in Xs])
    with pytest.raises(ValueError, match="square"):
        MVLClassifier(kernel="precomputed").fit([np.ones((60, 5))], y)


def test_precomputed_semisupervised_and_cg_match_dense():
    Xs, y = _mv_data(n=30, seed=2)
    lab, unl = np.arange(0, 30, 2), np.arange(1, 30, 2)
    kw = dict(gamma_A=1e-2, gamma_B=1e-3, gamma_W=1e-3, graph="kernel")
    gam = 0.05
    reg = MVLRegressor(kernel="rbf", kernel_params={"gamma": gam}, solver="dense", **kw)
    reg.fit([X[lab] for X in Xs], y[lab].astype(float), Xs_unlabeled=[X[unl] for X in Xs])
    tr = np.concatenate([lab, unl])
    Ks = [np.asarray(rbf_kernel(X[tr], gamma=gam)) for X in Xs]
    pre = MVLRegressor(kernel="precomputed", **kw).fit(Ks, y[lab].astype(float))
    Kt = [np.asarray(rbf_kernel(X, X[tr], gamma=gam)) for X in Xs]
    np.testing.assert_allclose(pre.predict(Kt), reg.predict(Xs), atol=1e-10)
    cg = MVLRegressor(kernel="rbf", kernel_params={"gamma": gam}, solver="cg", cg_tol=1e-12, **kw)
    cg.fit([X[lab] for X in Xs], y[lab].astype(float), Xs_unlabeled=[X[unl] for X in Xs])
    np.testing.assert_allclose(cg.predict(Xs), reg.predict(Xs), atol=1e-6)


@pytest.mark.parametrize("gB, gW", [(0.0, 0.0), (0.05, 0.02)])
def test_ls_loo_equals_refits_without_each_label(gB, gW):
    """Leave-one-out outputs from the hat matrix = ``l`` refits in which point ``i`` keeps its
    place in the graph but loses its label (objective (10) with the loss weight ``1/l`` kept, i.e.
    the ``l - 1``-label solve with every ``gamma`` scaled by ``l / (l - 1)``)."""
    rng, _, Ks = _toy(n=11, seed=3)
    Ls = [graph_laplacian(K) for K in Ks]
    ell, c, gA = 7, rng.normal(size=3), 0.03
    Y = rng.normal(size=(ell, 2))
    loo, coef = mvl_ls_loo(Ks, Y, c, gA, gB, gW, Ls, return_coef=True)
    np.testing.assert_allclose(coef, mvl_ls_solve(Ks, Y, c, gA, gB, gW, Ls), atol=1e-10)
    s = ell / (ell - 1)
    for i in range(ell):
        order = np.r_[np.delete(np.arange(ell), i), np.arange(ell, 11), i]
        Ko = [K[np.ix_(order, order)] for K in Ks]
        A = mvl_ls_solve(
            Ko, np.delete(Y, i, 0), c, s * gA, s * gB, s * gW, [L[np.ix_(order, order)] for L in Ls]
        )
        np.testing.assert_allclose(loo[i], sum(c[v] * Ko[v][-1] @ A[v] for v in range(3)), atol=1e-10)


def _moons_views(seed, n_per_class):
    """Two views of noisy two moons (the second rotated, with its own noise), ``n_per_class``
    labelled points per class, 200 unlabelled and 192 test points."""
    from sklearn.datasets import make_moons

    rng = np.random.default_rng(seed)
    X, y = make_moons(400, noise=0.08, random_state=seed)
    Xs = [X, X @ np.array([[0.6, -0.8], [0.8, 0.6]]) + rng.normal(scale=0.08, size=X.shape)]
    lab = np.concatenate([rng.choice(np.flatnonzero(y == k), n_per_class, replace=False) for k in (0, 1)])
    rest = np.setdiff1d(np.arange(400), lab)
    return [[X[i] for X in Xs] for i in (lab, rest[:200], rest[200:])], y[lab], y[rest[200:]], rng


@pytest.mark.slow
def test_auto_manifold_keeps_unlabelled_points_only_where_leave_one_out_gains():
    """``gamma_B = gamma_W = "auto"``: the supervised fit at ``SUPERVISED_MANIFOLD`` unless a fit
    with the unlabelled points gains more than one standard error in leave-one-out accuracy (the
    largest gain wins), and then the fit at the chosen numbers. On moons (the graph agrees with
    the labels) the unlabelled points never lower test accuracy and raise it on average; with
    shuffled labels or one label per class the supervised fit is kept."""
    kw = dict(kernel_params={"gamma": 2.0}, gamma_A=1e-3)
    gains = []
    for seed in range(5):
        (L, U, T), yl, yt, rng = _moons_views(seed, 4)
        sup = MVLClassifier(**kw).fit(L, yl)
        assert (sup.gamma_B_, sup.gamma_W_, sup.graph_) == (1e-6, 1e-6, "kernel")
        assert sup.manifold_selection_ is None
        semi = MVLClassifier(**kw).fit(L, yl, Xs_unlabeled=U)
        tab = semi.manifold_selection_
        ok = tab["gain"] > tab["gain_se"]
        assert not ok[0] and tab["gain"][0] == 0.0 and not tab["uses_unlabeled"][0]
        if ok.any():
            best = np.flatnonzero(ok)[np.argmax(tab["gain"][ok])]
            assert (semi.gamma_B_, semi.gamma_W_, semi.graph_) == (
                tab["gamma_B"][best],
                tab["gamma_W"][best],
                "knn",
            )
            fixed = MVLClassifier(gamma_B=semi.gamma_B_, gamma_W=semi.gamma_W_, **kw).fit(
                L, yl, Xs_unlabeled=U
            )
            np.testing.assert_allclose(semi.dual_coef_, fixed.dual_coef_, atol=1e-12)
        else:
            assert (semi.gamma_B_, semi.gamma_W_, semi.graph_) == (1e-6, 1e-6, "kernel")
            np.testing.assert_allclose(semi.decision_function(T), sup.decision_function(T), atol=1e-12)
        gains.append(semi.score(T, yt) - sup.score(T, yt))
        shuffled = MVLClassifier(**kw).fit(L, rng.permutation(yl), Xs_unlabeled=U)
        assert not np.any(shuffled.manifold_selection_["gain"] > shuffled.manifold_selection_["gain_se"])
    assert min(gains) >= 0.0 and np.mean(gains) > 0.02, gains


@pytest.mark.slow
def test_auto_manifold_with_one_label_per_class_follows_the_normalized_cut():
    """One label per class: no leave-one-out can judge (every left-out point loses its class), so
    the fit whose labelling of the training points has the smallest normalised cut on the k-NN
    graph is kept (the supervised fit among equals). On moons: never worse, better on average
    (measured +0.076 and +0.071 on seeds 1 and 3, level elsewhere)."""
    kw = dict(kernel_params={"gamma": 2.0}, gamma_A=1e-3)
    gains = []
    for seed in range(5):
        (L, U, T), yl, yt, _ = _moons_views(seed, 1)
        sup = MVLClassifier(**kw).fit(L, yl)
        semi = MVLClassifier(**kw).fit(L, yl, Xs_unlabeled=U)
        tab = semi.manifold_selection_
        assert np.all(tab["loo_score"] == 0.0)
        best = int(np.argmin(tab["normalized_cut"]))
        assert (semi.gamma_B_, semi.gamma_W_) == (tab["gamma_B"][best], tab["gamma_W"][best])
        assert semi.graph_ == ("knn" if best else "kernel")
        gains.append(semi.score(T, yt) - sup.score(T, yt))
    assert min(gains) >= 0.0 and np.mean(gains) > 0.02, gains


def test_normalized_cut_closed_form():
    """Two 4-cliques joined by one edge: split along the cliques, cut 1 and volumes 13 each."""
    W = np.zeros((8, 8))
    W[:4, :4] = W[4:, 4:] = 1.0
    np.fill_diagonal(W, 0.0)
    W[3, 4] = W[4, 3] = 1.0
    assert np.isclose(normalized_cut(W, np.repeat([0, 1], 4)), 2 / 13)
    # one point alone in its class: its cut is its degree (3) = its volume; the rest has volume 23
    assert np.isclose(normalized_cut(W, np.r_[0, np.ones(7)]), 1 + 3 / 23)
    assert normalized_cut(W, np.arange(8) % 2) > normalized_cut(W, np.repeat([0, 1], 4))


def test_choose_by_loo_rule_and_bad_input():
    Y = np.where(np.arange(6)[:, None] % 2 == np.arange(2)[None], 1.0, -1.0)
    wrong = -Y  # every point misclassified
    # one point right: gain 1/6, se 1/6 -> not taken; all right: taken; regression: smaller error wins
    one_right = np.vstack([Y[:1], wrong[1:]])
    assert choose_by_loo(Y, [wrong, one_right])[0] == 0
    idx, tab = choose_by_loo(Y, [wrong, one_right, 0.5 * Y, Y])
    assert idx == 3 and np.allclose(tab["gain"], [0, 1 / 6, 1, 1]) and tab["loo_mse"][3] == 0.0
    assert choose_by_loo(Y, [wrong, 0.9 * wrong, 0.5 * wrong], score="squared")[0] == 2
    with pytest.raises(ValueError, match="score"):
        choose_by_loo(Y, [Y], score="r2")
    Xs, y = _mv_data()
    with pytest.raises(ValueError, match="auto"):
        MVLClassifier(solver="cg").fit(Xs, y, Xs_unlabeled=[X[:5] for X in Xs])
    # without unlabelled points "auto" is the supervised value (kernel graph): CG applies
    cg = MVLRegressor(solver="cg", cg_tol=1e-12).fit(Xs, y.astype(float))
    dense = MVLRegressor(solver="dense").fit(Xs, y.astype(float))
    assert (cg.gamma_B_, cg.gamma_W_, cg.graph_) == (1e-6, 1e-6, "kernel")
    np.testing.assert_allclose(cg.predict(Xs), dense.predict(Xs), atol=1e-6)
    reg = MVLRegressor().fit(Xs, y.astype(float), Xs_unlabeled=[X[:5] for X in Xs])
    assert np.all(np.isnan(reg.manifold_selection_["normalized_cut"]))  # classes only
    assert reg.manifold_selection_["gain"][0] == 0.0 and reg.manifold_selection_["loo_score"].shape == (9,)
    half = MVLClassifier(gamma_W=0.0).fit(Xs[:2], y, Xs_unlabeled=[X[:5] for X in Xs[:2]])
    assert np.all(half.manifold_selection_["gamma_W"] == 0.0) and half.graph_ in ("kernel", "knn")
    np.testing.assert_array_equal(half.manifold_selection_["gamma_B"], [1e-6, 0.0, 1e-6])
    with pytest.raises(ValueError, match="a number >= 0 or 'auto'"):
        MVLClassifier(gamma_B="autos").fit(Xs, y)
    with pytest.raises(ValueError, match="numeric gamma_B"):
        MVLClassifierCV(gamma_Bs=("auto",), cv=2).fit(Xs, y)


def test_optc_woodbury_solver_matches_direct():
    from bayesmv.mvl.least_squares import _FixedManifoldLS

    rng, Xs, Ks = _toy(n=11, seed=7)
    Ls = [graph_laplacian(K) for K in Ks]
    Y = rng.normal(size=(6, 2))
    fixed = _FixedManifoldLS([psd_sqrt(K) for K in Ks], Ls, 6, 0.1, 0.05, 0.02)
    for _ in range(3):
        c = rng.normal(size=3)
        np.testing.assert_allclose(fixed.solve(c, Y), mvl_ls_solve(Ks, Y, c, 0.1, 0.05, 0.02, Ls), atol=1e-10)


def test_manifold_terms_match_pairwise_definitions():
    """gamma_B / gamma_W terms of the objective equal the sums (58) and (64) written out pairwise,
    with no hidden 1/(u+l)^2 factors, for the unnormalised, normalised and squared Laplacians."""
    rng, _, Ks = _toy(n=8, m=3, seed=11)
    m, N, d, ell = 3, 8, 2, 5
    A = rng.normal(size=(m, N, d))
    Y = rng.normal(size=(ell, d))
    c = np.array([0.2, 0.5, 0.3])
    F = np.stack([K @ A[v] for v, K in enumerate(Ks)])
    base = mvl_ls_objective(Ks, Y, c, A, 0.1)
    between = sum(
        np.sum((F[j, i] - F[k, i]) ** 2) for i in range(N) for j in range(m) for k in range(j + 1, m)
    )
    np.testing.assert_allclose(
        mvl_ls_objective(Ks, Y, c, A, 0.1, gamma_B=0.3) - base, 0.3 * between, rtol=1e-10
    )
    Ws = [knn_graph(K, 3) for K in Ks]
    within = sum(
        Ws[v][j, k] * np.sum((F[v, j] - F[v, k]) ** 2)
        for v in range(m)
        for j in range(N)
        for k in range(j + 1, N)
    )
    Ls = [graph_laplacian(W) for W in Ws]
    np.testing.assert_allclose(
        mvl_ls_objective(Ks, Y, c, A, 0.1, gamma_W=0.7, Ls=Ls) - base, 0.7 * within, rtol=1e-10
    )
    # normalised: sum_{j<k} W_jk (f_j / sqrt(d_j) - f_k / sqrt(d_k))^2, spectrum in [0, 2]
    deg = [W.sum(1) for W in Ws]
    within_n = sum(
        Ws[v][j, k] * np.sum((F[v, j] / np.sqrt(deg[v][j]) - F[v, k] / np.sqrt(deg[v][k])) ** 2)
        for v in range(m)
        for j in range(N)
        for k in range(j + 1, N)
    )
    Ln = [graph_laplacian(W, normalized=True) for W in Ws]
    np.testing.assert_allclose(
        mvl_ls_objective(Ks, Y, c, A, 0.1, gamma_W=0.7, Ls=Ln) - base, 0.7 * within_n, rtol=1e-10
    )
    for L, D in zip(Ln, deg):
        w = np.linalg.eigvalsh(L)
        assert w.min() > -1e-12 and w.max() < 2 + 1e-12
        np.testing.assert_allclose(L @ np.sqrt(D), 0.0, atol=1e-12)  # null vector D^{1/2} 1
    # self-loops do not enter the normalised Laplacian; power p is the matrix power
    np.testing.assert_allclose(
        graph_laplacian(Ks[0], normalized=True),
        graph_laplacian(Ks[0] - np.diag(np.diag(Ks[0])), normalized=True),
        atol=1e-14,
    )
    np.testing.assert_allclose(graph_laplacian(Ws[0], normalized=True, power=2), Ln[0] @ Ln[0], atol=1e-12)


@pytest.mark.parametrize("laplacian,power", [("unnormalized", 1), ("normalized", 1), ("normalized", 2)])
def test_estimator_laplacian_options_match_solver(laplacian, power):
    """graph/laplacian/laplacian_power of the estimator build M_W = blockdiag(L^v) exactly as
    graph_laplacian(knn_graph(K^v)) and the fit is the Theorem 10 solution with those L^v."""
    rng, _, Ks = _toy(n=14, m=3, seed=12)
    y = np.array(list("abc") * 3 + ["a"])
    Ls = [graph_laplacian(knn_graph(K, 4), normalized=laplacian == "normalized", power=power) for K in Ks]
    clf = MVLClassifier(
        kernel="precomputed",
        gamma_A=1e-2,
        gamma_B=1e-3,
        gamma_W=3e-2,
        graph="knn",
        n_neighbors=4,
        laplacian=laplacian,
        laplacian_power=power,
    ).fit(Ks, y)
    Y = np.where(y[:, None] == np.array(["a", "b", "c"])[None], 1.0, -1.0)
    A = mvl_ls_solve(Ks, Y, np.full(3, 1 / 3), 1e-2, 1e-3, 3e-2, Ls)
    np.testing.assert_allclose(clf.dual_coef_, A, atol=1e-10)
    ref = _dense_eq13(Ks, Ls, Y, np.full(3, 1 / 3), 1e-2, 1e-3, 3e-2, np.eye(3))
    np.testing.assert_allclose(A, ref, atol=1e-9)
    with pytest.raises(ValueError, match="laplacian"):
        MVLClassifier(kernel="precomputed", laplacian="sym").fit(Ks, y)
    with pytest.raises(ValueError, match="laplacian_power"):
        MVLClassifier(kernel="precomputed", laplacian_power=0).fit(Ks, y)


def test_ls_path_equals_solve_at_each_gamma_A():
    """One eigh of P H P gives the Theorem 10 solution for every gamma_A (regularisation path)."""
    rng, _, Ks = _toy(n=12, m=3, seed=13)
    Ls = [graph_laplacian(knn_graph(K, 3), normalized=True) for K in Ks]
    Y = rng.normal(size=(7, 2))
    c = np.array([0.5, 0.2, 0.3])
    gAs = [1e-4, 3e-3, 0.2]
    path = mvl_ls_path(Ks, Y, c, gAs, 1e-3, 5e-2, Ls)
    for gA, A in zip(gAs, path):
        np.testing.assert_allclose(A, mvl_ls_solve(Ks, Y, c, gA, 1e-3, 5e-2, Ls), rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(
            A, _dense_eq13(Ks, Ls, Y, c, gA, 1e-3, 5e-2, np.eye(2)), rtol=1e-6, atol=1e-6
        )
