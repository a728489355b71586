"""Shared kernel utilities against scikit-learn / scipy / closed-form references."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist
from sklearn.metrics import pairwise as skp

import bayesmv  # noqa: F401  (enables float64)
from bayesmv import kernels as K

RNG = np.random.default_rng(0)
X = RNG.random((17, 6))
Y = RNG.random((9, 6))

SKLEARN_PAIRS = [
    (K.linear_kernel, skp.linear_kernel, {}),
    (K.polynomial_kernel, skp.polynomial_kernel, {}),
    (K.polynomial_kernel, skp.polynomial_kernel, {"degree": 2, "gamma": 0.7, "coef0": 0.3}),
    (K.rbf_kernel, skp.rbf_kernel, {}),
    (K.rbf_kernel, skp.rbf_kernel, {"gamma": 2.5}),
    (K.laplacian_kernel, skp.laplacian_kernel, {}),
    (K.laplacian_kernel, skp.laplacian_kernel, {"gamma": 0.4}),
    (K.additive_chi2_kernel, skp.additive_chi2_kernel, {}),
    (K.chi2_kernel, skp.chi2_kernel, {}),
    (K.chi2_kernel, skp.chi2_kernel, {"gamma": 0.3}),
    (K.cosine_kernel, skp.cosine_similarity, {}),
]


@pytest.mark.parametrize("ours, ref, params", SKLEARN_PAIRS)
def test_kernels_equal_sklearn_float64(ours, ref, params):
    np.testing.assert_allclose(np.asarray(ours(X, Y, **params)), ref(X, Y, **params), rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ours(X, **params)), ref(X, **params), rtol=0, atol=1e-10)


@pytest.mark.parametrize("ours, ref, params", SKLEARN_PAIRS)
def test_kernels_keep_float32_and_jit(ours, ref, params):
    out = jax.jit(lambda a, b: ours(a, b, **params))(X.astype(np.float32), Y.astype(np.float32))
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(out), ref(X, Y, **params), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ours, ref, params", SKLEARN_PAIRS + [(K.jaccard_kernel, None, {})])
def test_numpy_inputs_stay_on_numpy_and_agree_with_jax_inputs(ours, ref, params):
    """The namespace follows the inputs: NumPy in gives a NumPy array (eager, nothing compiled),
    JAX in gives a JAX array; both give the same values and keep float32."""
    host = ours(X, Y, **params)
    device = ours(jnp.asarray(X), jnp.asarray(Y), **params)
    assert type(host) is np.ndarray and isinstance(device, jax.Array)
    np.testing.assert_allclose(host, np.asarray(device), rtol=0, atol=1e-12)
    assert ours(X.astype(np.float32), **params).dtype == np.float32
    assert type(ours(X.tolist(), **params)) is np.ndarray  # nested lists count as host data


def test_nystrom_factors_follow_the_input_namespace():
    Xs = [X, RNG.random((17, 3))]
    host = K.block_nystrom(Xs, "rbf", 5, random_state=2)
    device = K.block_nystrom([jnp.asarray(Z) for Z in Xs], "rbf", 5, random_state=2)
    for h, d in zip(host.factors, device.factors):
        assert type(h.U) is np.ndarray and isinstance(d.U, jax.Array)
        np.testing.assert_allclose(h.U, np.asarray(d.U), atol=1e-10)
        np.testing.assert_allclose(h.W_pinv_sqrt, np.asarray(d.W_pinv_sqrt), atol=1e-8)
    assert type(host.transform(Xs)[0]) is np.ndarray


def test_cosine_zero_vector_like_sklearn():
    Z = np.vstack([np.zeros(6), X[:3]])
    np.testing.assert_allclose(np.asarray(K.cosine_kernel(Z)), skp.cosine_similarity(Z), atol=1e-12)


def test_jaccard_equals_one_minus_scipy_distance():
    B = (RNG.random((12, 8)) > 0.6).astype(float)
    B[0] = 0.0  # an all-zero row: scipy's distance is 0 there
    B2 = (RNG.random((5, 8)) > 0.5).astype(float)
    ref = 1.0 - cdist(B.astype(bool), B2.astype(bool), "jaccard")
    np.testing.assert_allclose(np.asarray(K.jaccard_kernel(B, B2)), ref, atol=1e-12)
    ref_self = 1.0 - cdist(B.astype(bool), B.astype(bool), "jaccard")
    np.testing.assert_allclose(np.asarray(K.jaccard_kernel(B)), ref_self, atol=1e-12)
    assert np.linalg.eigvalsh(np.asarray(K.jaccard_kernel(B))).min() > -1e-10


def test_get_kernel_by_name_and_errors():
    k = K.get_kernel("rbf", gamma=0.5)
    np.testing.assert_allclose(np.asarray(k(X, Y)), skp.rbf_kernel(X, Y, gamma=0.5), atol=1e-12)
    assert k == K.get_kernel("rbf", gamma=0.5) and hash(k) == hash(K.get_kernel("rbf", gamma=0.5))
    assert k.name == "rbf"
    np.testing.assert_allclose(
        np.asarray(K.pairwise_kernel(X, Y, "laplacian")), skp.laplacian_kernel(X, Y), atol=1e-12
    )
    with pytest.raises(ValueError, match="not a known kernel"):
        K.get_kernel("nope")


def test_kernel_matvec_matches_dense_for_odd_block_sizes():
    V = RNG.standard_normal((9, 3))
    for block in (1, 4, 17, 100):
        out = K.kernel_matvec(X, V, Y, "rbf", block_size=block, gamma=0.8)
        np.testing.assert_allclose(np.asarray(out), skp.rbf_kernel(X, Y, gamma=0.8) @ V, atol=1e-12)
    v = RNG.standard_normal(17)
    np.testing.assert_allclose(
        np.asarray(K.kernel_matvec(X, v, block_size=5)), skp.rbf_kernel(X) @ v, atol=1e-12
    )


def test_kernel_matvec_memory_is_bounded_at_n_50000():
    """Compile the n = 50,000 product and read XLA's memory plan: no n x n buffer exists."""
    n, d, block = 50_000, 8, 1024
    Xs = jax.ShapeDtypeStruct((n, d), jnp.float64)
    v = jax.ShapeDtypeStruct((n,), jnp.float64)
    from bayesmv.kernels.pairwise import _blocked_matvec

    compiled = _blocked_matvec.lower(Xs, Xs, v, K.get_kernel("rbf"), block).compile()
    mem = compiled.memory_analysis()
    dense_bytes = n * n * 8
    assert mem.temp_size_in_bytes < dense_bytes / 20, mem.temp_size_in_bytes


def test_bandwidth_heuristics_match_scipy():
    d = pdist(X)
    assert K.median_heuristic(X) == pytest.approx(np.median(d), abs=1e-10)
    assert K.mean_heuristic(X) == pytest.approx(np.mean(d), abs=1e-10)
    assert K.gamma_from_bandwidth(2.0) == pytest.approx(1 / 8)
    with pytest.raises(ValueError, match="sigma"):
        K.gamma_from_bandwidth(0.0)
    with pytest.raises(ValueError, match="at least 2 samples"):
        K.median_heuristic(X[:1])


def test_center_and_normalize():
    G = skp.rbf_kernel(X)
    H = np.eye(17) - 1 / 17
    np.testing.assert_allclose(np.asarray(K.center_kernel(G)), H @ G @ H, atol=1e-12)
    # test-time centring equals centring the joint kernel and reading the test block
    Z = np.vstack([X, Y])
    Gz = skp.rbf_kernel(Z)
    Kt = Gz[17:, :17]
    Phi_mean_train = Gz[:, :17].mean(1)  # <phi(z), mean phi(train)>
    ref = Kt - Phi_mean_train[17:, None] - Gz[:17, :17].mean(0)[None, :] + Gz[:17, :17].mean()
    np.testing.assert_allclose(np.asarray(K.center_kernel(Gz[:17, :17], Kt)), ref, atol=1e-12)
    L = skp.linear_kernel(X) + 1.0
    N = np.asarray(K.normalize_kernel(L))
    np.testing.assert_allclose(np.diag(N), 1.0, atol=1e-12)
    np.testing.assert_allclose(N, L / np.sqrt(np.outer(np.diag(L), np.diag(L))), atol=1e-12)


def test_nystrom_exact_at_full_rank_and_low_rank_formula():
    G = skp.rbf_kernel(X, gamma=0.5)
    full = K.nystrom(X, "rbf", 1.0, random_state=3, gamma=0.5)
    np.testing.assert_allclose(np.asarray(full.U @ full.U.T), G, atol=1e-8)
    assert sorted(full.landmarks) == list(range(17))
    part = K.nystrom(X, "rbf", 6, random_state=3, gamma=0.5)
    S = part.landmarks
    assert len(S) == 6 and np.array_equal(S, K.nystrom_ordering(17, 3)[:6])
    Q = G[:, S]
    ref = Q @ np.linalg.pinv(G[np.ix_(S, S)]) @ Q.T
    np.testing.assert_allclose(np.asarray(part.U @ part.U.T), ref, atol=1e-8)
    # the landmark block is reproduced exactly
    np.testing.assert_allclose(np.asarray(part.U @ part.U.T)[np.ix_(S, S)], G[np.ix_(S, S)], atol=1e-8)
    # test-time extension on training rows gives back U; on new rows Q_test W^+ Q'
    Ut = K.nystrom_transform(G[:, S], part)
    np.testing.assert_allclose(np.asarray(Ut), np.asarray(part.U), atol=1e-12)
    Gt = skp.rbf_kernel(Y, X, gamma=0.5)
    ext = K.nystrom_transform(Gt[:, S], part) @ part.U.T
    np.testing.assert_allclose(np.asarray(ext), Gt[:, S] @ np.linalg.pinv(G[np.ix_(S, S)]) @ Q.T, atol=1e-8)


def test_n_landmarks_validation():
    assert K.n_landmarks(0.2, 100) == 20 and K.n_landmarks(7, 100) == 7 and K.n_landmarks(1.0, 9) == 9
    for bad in (0.0, 1.5, -3, 0, 200, True, "half"):
        with pytest.raises(ValueError, match="nystrom"):
            K.n_landmarks(bad, 100)


def test_block_nystrom_shares_one_ordering_and_extends():
    Xs = [X, RNG.random((17, 3))]
    bn = K.block_nystrom(Xs, ["rbf", "linear"], 5, random_state=1, kernel_params=[{"gamma": 0.3}, {}])
    assert len(bn.U) == 2 and all(u.shape == (17, 5) for u in bn.U)
    assert all(np.array_equal(f.landmarks, bn.landmarks) for f in bn.factors)
    assert np.array_equal(bn.landmarks, K.nystrom_ordering(17, 1)[:5])
    train_ext = bn.transform(Xs)
    for a, b in zip(train_ext, bn.U):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-10)
    Gs = [skp.rbf_kernel(Xs[0], gamma=0.3), skp.linear_kernel(Xs[1])]
    pre = K.block_nystrom(Gs, n_components=1.0, random_state=1, precomputed=True)
    for U, G in zip(pre.U, Gs):
        np.testing.assert_allclose(np.asarray(U @ U.T), G, atol=1e-8)
    with pytest.raises(ValueError, match="precomputed"):
        pre.transform(Xs)


@pytest.mark.slow
def test_random_fourier_features_converge_like_inverse_sqrt_m():
    d, gamma = 6, 0.7
    G = skp.rbf_kernel(X, gamma=gamma)
    errors = {}
    for M in (50, 3200):
        errs = []
        for s in range(20):
            om = K.sample_gaussian_frequencies(jax.random.PRNGKey(s), M, d, gamma)
            phi = K.random_fourier_features(X, om)
            assert phi.shape == (17, 2 * M)
            errs.append(np.sqrt(np.mean((np.asarray(phi @ phi.T) - G) ** 2)))
        errors[M] = np.mean(errs)
    ratio = errors[50] / errors[3200]  # M grows 64x -> error shrinks ~8x
    assert 5.0 < ratio < 12.0, (errors, ratio)
    # phi(x).phi(x) = 1 exactly and the implied kernel matches phi's inner products
    om = K.sample_gaussian_frequencies(jax.random.PRNGKey(0), 40, d, gamma)
    phi = np.asarray(K.random_fourier_features(X, om))
    np.testing.assert_allclose((phi**2).sum(1), 1.0, atol=1e-12)
    lag = X[:1] - X[1:2]
    assert float(K.implied_kernel(lag, om)[0]) == pytest.approx(phi[0] @ phi[1], abs=1e-12)


def test_cos_sin_matches_libm_and_keeps_float32():
    x = np.concatenate(
        [
            np.linspace(-1e5, 1e5, 400_001),
            np.linspace(-7, 7, 10_001),
            [0.0, -0.0, np.pi / 4, np.pi / 2, -np.pi, 3 * np.pi / 2],
        ]
    )
    c, s = K.cos_sin(jnp.asarray(x))
    assert np.max(np.abs(np.asarray(c) - np.cos(x))) <= 3e-16  # 2 ulp of 1 (measured: 2.2e-16)
    assert np.max(np.abs(np.asarray(s) - np.sin(x))) <= 3e-16
    c32, s32 = K.cos_sin(jnp.asarray(x[-10_007:], jnp.float32))
    assert c32.dtype == jnp.float32 and s32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(c32), np.cos(x[-10_007:].astype(np.float32)), atol=2e-6)


def _min_eig(G):
    G = np.asarray(G)
    return np.linalg.eigvalsh(0.5 * (G + G.T)).min()


def test_separable_and_nonseparable_operator_kernels():
    T = np.array([[2.0, 0.5], [0.5, 1.0]])
    sep = K.SeparableKernel("rbf", T, {"gamma": 0.3})
    G = np.asarray(sep.gram(X, Y))
    assert G.shape == (17 * 2, 9 * 2)
    np.testing.assert_allclose(G[2:4, 6:8], skp.rbf_kernel(X, Y, gamma=0.3)[1, 3] * T, atol=1e-12)
    np.testing.assert_allclose(np.asarray(sep(X[1], Y[3])), G[2:4, 6:8], atol=1e-12)
    ns = K.nonseparable_kernel(0.2, 3)
    x, z = X[0], X[5]
    ref = 0.2 * (x @ z) * np.ones((3, 3)) + 0.8 * (x @ z) ** 2 * np.eye(3)
    np.testing.assert_allclose(np.asarray(ns(x, z)), ref, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ns.gram(X))[0:3, 15:18], ref, atol=1e-12)
    assert ns.output_dim == 3
    with pytest.raises(ValueError, match="mu"):
        K.nonseparable_kernel(1.5, 3)
    with pytest.raises(ValueError, match="square"):
        K.SeparableKernel("rbf", np.ones((2, 3)))


@pytest.mark.parametrize("seed", range(3))
def test_operator_kernels_are_psd_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((12, 4))
    A = rng.standard_normal((3, 3))
    T = A @ A.T
    assert _min_eig(K.SeparableKernel("rbf", T).gram(Z)) > -1e-9
    assert _min_eig(K.nonseparable_kernel(rng.random(), 3).gram(Z)) > -1e-9
    views = [Z, rng.standard_normal((12, 2))]
    diag = K.DiagonalMultiViewKernel((K.get_kernel("rbf"), K.get_kernel("laplacian")))
    Gd = np.asarray(diag.gram(views))
    assert Gd.shape == (24, 24) and _min_eig(Gd) > -1e-9
    np.testing.assert_allclose(
        Gd[0:2, 2:4], np.diag([skp.rbf_kernel(Z)[0, 1], skp.laplacian_kernel(views[1])[0, 1]]), atol=1e-12
    )
    Ks = [skp.rbf_kernel(Z), skp.linear_kernel(views[1])]
    B = rng.standard_normal((24, 24))
    Gm = np.asarray(K.mvml_kernel(Ks, B @ B.T))
    assert _min_eig(Gm) > -1e-8 * np.abs(Gm).max()
    blocks = np.asarray(K.block_gram_to_tensor(K.SeparableKernel("rbf", T).gram(Z), 3))
    np.testing.assert_allclose(blocks[2, 5], skp.rbf_kernel(Z)[2, 5] * T, atol=1e-12)


def test_mvml_kernel_blocks_are_K_l_A_lm_K_m():
    Ks = [skp.rbf_kernel(X), skp.linear_kernel(X)]
    A = RNG.standard_normal((34, 34))
    G = np.asarray(K.mvml_kernel(Ks, A))
    np.testing.assert_allclose(G[:17, 17:], Ks[0] @ A[:17, 17:] @ Ks[1], atol=1e-9)
