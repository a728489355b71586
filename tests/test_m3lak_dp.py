"""The DP spectrum's collapsed assignment update (Neal 2000, Algorithm 3, on the labelled
stick-breaking table) against brute-force computations on tiny problems: the NIW predictive
against SciPy's multivariate t, the single-site conditional against the normalised joint
``p(z, Ω)`` (sticks and components integrated out in closed form, written here from the
textbook NIW evidence), the rank-one bookkeeping against statistics from scratch, and the
update's behaviour (it opens a component for a far frequency and closes a spurious one), and the
spectral-scale move of (Ω, ψ) (its density against the textbook evidence, exact draws kept exact). The
whole sweep with this update is covered by the Geweke tests in ``test_m3lak_sampler.py``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st
from scipy.special import betaln, multigammaln

import bayesmv  # noqa: F401  (x64)
from bayesmv.inference.dp import (
    DPState,
    _rank_one,
    assignment_logits,
    collapsed_assignments,
    component_counts,
    dp_collapsed_update,
    log_assignment_joint,
    niw_predictive_log_density,
    niw_scale_log_density,
    niw_statistics,
    sample_niw_scale,
    sample_spectral_scale,
    signed_assignments,
    spectral_scale_log_density,
    split_merge_step,
)

M_DIM = 2
MU0 = np.array([0.3, -0.2])
KAPPA0, NU0 = 0.7, 3.5
PSI0 = np.array([[1.0, 0.3], [0.3, 0.8]])
ALPHA = 0.8
PRIOR = (jnp.asarray(MU0), KAPPA0, NU0, jnp.asarray(PSI0))
OMEGA = np.array([[0.1, 0.4], [0.2, 0.1], [2.5, -1.0], [2.2, -1.4], [-0.3, 0.9]])


def _niw_posterior(X, psi0=PSI0):
    """κ_n, ν_n, μ_n, Ψ_n of the frequencies X (rows), by the textbook formulas."""
    n = len(X)
    kn, vn = KAPPA0 + n, NU0 + n
    if n == 0:
        return kn, vn, MU0, psi0
    xbar = X.mean(0)
    S = (X - xbar).T @ (X - xbar)
    mun = (KAPPA0 * MU0 + n * xbar) / kn
    psin = psi0 + S + KAPPA0 * n / kn * np.outer(xbar - MU0, xbar - MU0)
    return kn, vn, mun, psin


def _log_evidence(X, psi0=PSI0):
    """log p(X) with (μ, Σ) ~ NIW integrated out (Murphy 2007, eq. 266)."""
    n = len(X)
    kn, vn, _, psin = _niw_posterior(X, psi0)
    d = M_DIM
    return (
        -n * d / 2 * np.log(np.pi)
        + multigammaln(vn / 2, d)
        - multigammaln(NU0 / 2, d)
        + NU0 / 2 * np.linalg.slogdet(psi0)[1]
        - vn / 2 * np.linalg.slogdet(psin)[1]
        + d / 2 * np.log(KAPPA0 / kn)
    )


def _log_joint(z, n_slots, omega=OMEGA):
    """log p(z, Ω) on a table of n_slots slots: E over the sticks of Π ϖ_{z_j} (independent Beta
    posteriors) times each slot's evidence."""
    counts = np.bincount(z, minlength=n_slots)
    after = np.cumsum(counts[::-1])[::-1] - counts
    log_prior = np.sum(betaln(1 + counts, ALPHA + after) - betaln(1, ALPHA))
    return log_prior + sum(_log_evidence(omega[z == k]) for k in range(n_slots))


def test_predictive_is_the_multivariate_t():
    z = np.array([0, 0, 1, 1, 0])
    stats = niw_statistics(jnp.asarray(z), jnp.asarray(OMEGA), 3, *PRIOR)
    x = np.array([0.5, -0.7])
    got = np.asarray(niw_predictive_log_density(jnp.asarray(x), stats, KAPPA0, NU0))
    for k in range(3):  # slot 2 is empty: the prior predictive
        kn, vn, mun, psin = _niw_posterior(OMEGA[z == k])
        dof = vn - M_DIM + 1
        want = st.multivariate_t(loc=mun, shape=psin * (kn + 1) / (kn * dof), df=dof).logpdf(x)
        np.testing.assert_allclose(got[k], want, rtol=1e-12)


@pytest.mark.parametrize("j", [0, 2, 4])
def test_single_site_conditional_matches_the_normalised_joint(j):
    """p(z_j = k | z_{-j}, Ω) for the slots of a 4-slot table, and the mass of every slot
    beyond it (a brute-force table of 40 slots), against the collapsed update's logits."""
    z = np.array([0, 0, 1, 3, 0])  # slot 2 empty between occupied slots
    K, K_big = 4, 40
    rest = np.delete(np.arange(len(z)), j)
    stats = niw_statistics(jnp.asarray(z[rest]), jnp.asarray(OMEGA[rest]), K, *PRIOR)
    prior = niw_statistics(jnp.zeros(0, jnp.int32), jnp.zeros((0, M_DIM)), 1, *PRIOR)
    x = jnp.asarray(OMEGA[j])
    log_prior_pred = niw_predictive_log_density(x, prior, KAPPA0, NU0)[0]
    logits = np.asarray(assignment_logits(x, stats, log_prior_pred, ALPHA, KAPPA0, NU0))
    got = np.exp(logits - np.logaddexp.reduce(logits))

    def joint(k):
        zk = z.copy()
        zk[j] = k
        return _log_joint(zk, K_big)

    lj = np.array([joint(k) for k in range(K_big)])
    want = np.exp(lj - np.logaddexp.reduce(lj))
    np.testing.assert_allclose(got[:K], want[:K], rtol=1e-10)
    np.testing.assert_allclose(got[K], want[K:].sum(), rtol=1e-6)  # slots ≥ 40 carry < 1e-12


def _all_assignments(n_slots):
    return np.stack(np.meshgrid(*[np.arange(n_slots)] * len(OMEGA), indexing="ij"), -1).reshape(
        -1, len(OMEGA)
    )


def test_log_joint_matches_the_textbook_evidence():
    zs = _all_assignments(4)[::37]
    got = [float(log_assignment_joint(jnp.asarray(z), jnp.asarray(OMEGA), 4, ALPHA, *PRIOR)) for z in zs]
    np.testing.assert_allclose(got, [_log_joint(z, 4) for z in zs], rtol=1e-12)


def _n_active(zs):
    return np.array([len(np.unique(z)) for z in zs])


@pytest.mark.slow
def test_split_merge_step_leaves_the_table_posterior_invariant():
    """All 4⁵ assignments of 5 frequencies to a 4-slot table (split–merge never leaves it):
    200,000 exact draws of p(z | Ω), one step each; the histogram of the results against p by a
    chi-square test (cells with expected count ≥ 5) at the 0.1% level. The step must move: at
    least 10% of the proposals are accepted, splits and merges both."""
    K, n = 4, 200_000
    zs = _all_assignments(K)
    lj = np.array([_log_joint(z, K) for z in zs])
    p = np.exp(lj - np.logaddexp.reduce(lj))
    rng = np.random.default_rng(0)
    start = rng.choice(len(zs), size=n, p=p)
    step = jax.jit(jax.vmap(lambda k, z: split_merge_step(k, z, jnp.asarray(OMEGA), K, ALPHA, *PRIOR)))
    new, accepted = step(jax.random.split(jax.random.PRNGKey(0), n), jnp.asarray(zs[start], jnp.int32))
    new, accepted = np.asarray(new), np.asarray(accepted)
    code = new @ (K ** np.arange(len(OMEGA))[::-1])  # the row index in _all_assignments
    observed = np.bincount(code, minlength=len(zs))
    expected = n * p
    big = expected >= 5
    chi2 = np.sum((observed[big] - expected[big]) ** 2 / expected[big]) + (
        (observed[~big].sum() - expected[~big].sum()) ** 2 / expected[~big].sum()
    )
    assert st.chi2(big.sum()).sf(chi2) > 1e-3
    before, after = _n_active(zs[start]), _n_active(new)
    grew, shrank = after > before, after < before
    assert accepted.mean() > 0.1 and grew.mean() > 0.02 and shrank.mean() > 0.02


def test_rank_one_updates_match_statistics_from_scratch():
    z = jnp.asarray([0, 0, 1, 1, 0])
    om = jnp.asarray(OMEGA)
    stats = niw_statistics(z, om, 3, *PRIOR)
    moved = _rank_one(_rank_one(stats, 0, om[4], -1.0, KAPPA0), 2, om[4], 1.0, KAPPA0)
    want = niw_statistics(z.at[4].set(2), om, 3, *PRIOR)
    for a, b in zip(moved, want):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


M_BIG, N_FREQ = 20, 60
PRIOR_BIG = (jnp.full(M_BIG, 0.01), 1.0, float(M_BIG), jnp.eye(M_BIG))


def _cluster(seed, n, centre):
    return centre + 0.2 * np.random.default_rng(seed).normal(size=(n, M_BIG))


def _run(z, omega, sweeps=20):
    update = jax.jit(lambda k, z: collapsed_assignments(k, z, omega, 50, 1.0, *PRIOR_BIG))
    for i in range(sweeps):
        z, overflow = update(jax.random.PRNGKey(i), z)
        assert not bool(overflow)
    return np.asarray(z)


def test_a_far_frequency_opens_a_component_at_m20():
    """m = 20: 59 frequencies near 0 and one at 3·1, all in one component to start with; the
    outlier gets its own component (the slice sampler leaves it in the occupied one)."""
    omega = jnp.asarray(np.vstack([_cluster(0, N_FREQ - 1, 0.0), np.full((1, M_BIG), 3.0)]))
    z = _run(jnp.zeros(N_FREQ, jnp.int32), omega)
    assert len(np.unique(z[:-1])) == 1 and z[-1] != z[0]


def test_a_spurious_component_closes_at_m20():
    """One tight cluster split over two components to start with: they merge."""
    omega = jnp.asarray(_cluster(1, N_FREQ, 0.0))
    z = _run(jnp.asarray(np.arange(N_FREQ) % 2, jnp.int32), omega)
    assert len(np.unique(z)) == 1


@pytest.mark.slow
def test_signed_scan_draws_the_first_sign_and_slot_from_the_normalised_joint():
    """The scan visits ω_0 first, so its (s_0, z_0) is one draw of p(s_0, z_0 | z_{-0}, Ω_{-0}):
    the joint p(z, Ω) of a 40-slot table (mass beyond it < 1e-12) with ω_0 read as ±ω_0. 20,000
    scans from one state against it by a chi-square test at the 0.1% level (cells with expected
    count < 5 pooled); the mirror image must get at least 5% of the draws."""
    z = np.array([0, 0, 1, 3, 0])
    K, n = 40, 20_000
    log_p = np.empty((2, K))
    for i, sign in enumerate((1.0, -1.0)):
        omega = OMEGA.copy()
        omega[0] *= sign
        for k in range(K):
            log_p[i, k] = _log_joint(np.r_[k, z[1:]], K, omega)
    expected = n * np.exp(log_p - np.logaddexp.reduce(log_p.ravel())).ravel()
    scan = jax.jit(
        jax.vmap(lambda k: signed_assignments(k, jnp.asarray(z), jnp.asarray(OMEGA), K, ALPHA, *PRIOR))
    )
    zs, signs, overflow = (np.asarray(a) for a in scan(jax.random.split(jax.random.PRNGKey(1), n)))
    assert not overflow.any()
    observed = np.bincount((signs[:, 0] < 0) * K + zs[:, 0], minlength=2 * K)
    big = expected >= 5
    chi2 = np.sum((observed[big] - expected[big]) ** 2 / expected[big]) + (
        (observed[~big].sum() - expected[~big].sum()) ** 2 / expected[~big].sum()
    )
    assert st.chi2(big.sum()).sf(chi2) > 1e-3
    assert 0.05 < np.mean(signs[:, 0] < 0) < 0.95


def test_signed_scan_lets_a_mirror_image_join_its_component_at_m20():
    """m = 20: 59 frequencies near 1 (every coordinate) and one near -1, each group in its own
    component to start with: the signed scan flips the lone one into the cluster; the unsigned
    scan keeps it apart."""
    start = jnp.asarray(np.r_[np.zeros(N_FREQ - 1), 1], jnp.int32)
    omega0 = jnp.asarray(np.vstack([_cluster(4, N_FREQ - 1, 1.0), -_cluster(5, 1, 1.0)]))
    scan = jax.jit(lambda k, z, om: signed_assignments(k, z, om, 50, 1.0, *PRIOR_BIG))
    z, omega, signs = start, omega0, np.ones(N_FREQ)
    for i in range(5):
        z, s, overflow = scan(jax.random.PRNGKey(i), z, omega)
        omega, signs = s[:, None] * omega, signs * np.asarray(s)
        assert not bool(overflow)
    assert len(np.unique(np.asarray(z))) == 1 and signs[-1] == -1 and np.all(signs[:-1] == 1)
    unsigned = _run(start, omega0, sweeps=5)
    assert unsigned[-1] != unsigned[0]


@pytest.mark.slow
def test_update_draws_sticks_and_components_given_the_new_assignments():
    omega = jnp.asarray(np.vstack([_cluster(2, 30, 0.0), _cluster(3, 30, 2.0)]))
    Kc = 50
    state = DPState(
        jnp.full(Kc, 0.5),
        jnp.zeros((Kc, M_BIG)),
        jnp.broadcast_to(jnp.eye(M_BIG), (Kc, M_BIG, M_BIG)),
        jnp.zeros(Kc),
        jnp.asarray(np.repeat([1, 4], 30), jnp.int32),  # the two clusters, in slots 1 and 4
        jnp.zeros((), bool),
    )
    new = jax.jit(lambda k, s: dp_collapsed_update(k, s, omega, 1.0, *PRIOR_BIG))(
        jax.random.PRNGKey(0), state
    )
    counts = np.asarray(component_counts(new))
    assert sorted(counts[counts > 0]) == [30, 30] and not bool(new.overflow)
    for k in np.nonzero(counts)[0]:  # each occupied component's mean sits at its cluster's mean
        members = np.asarray(omega)[np.asarray(new.z) == k]
        assert np.max(np.abs(np.asarray(new.mu[k]) - members.mean(0))) < 0.5


# The NIW scale ψ (Ψ0 = ψ I, ψ ~ Gamma(a, b)) given z and Ω, the components integrated out.
SCALE_PRIOR = (2.0, 1.5)
Z_SCALE = np.array([0, 0, 1, 1, 3])  # three occupied slots of five, one between them empty


def _log_scale_posterior(t, z):
    """log p(t | z, Ω) + const for t = log ψ, from the textbook evidence with Ψ0 = e^t I, the
    Gamma density of ψ and the Jacobian e^t."""
    psi = np.exp(t)
    evidence = sum(_log_evidence(OMEGA[z == k], psi * np.eye(M_DIM)) for k in np.unique(z))
    return st.gamma.logpdf(psi, SCALE_PRIOR[0], scale=1.0 / SCALE_PRIOR[1]) + t + evidence


def _scale_density(prior=SCALE_PRIOR):
    return niw_scale_log_density(
        jnp.asarray(Z_SCALE), jnp.asarray(OMEGA), 5, jnp.asarray(MU0), KAPPA0, NU0, prior
    )


def test_niw_scale_density_matches_the_textbook_evidence():
    ts = np.linspace(-4.0, 3.0, 15)
    got = np.array([float(_scale_density()(t)) for t in ts])
    want = np.array([_log_scale_posterior(t, Z_SCALE) for t in ts])
    np.testing.assert_allclose(got - got[0], want - want[0], rtol=1e-10, atol=1e-9)


def _scale_step_ks(step_prior, n=20_000, steps=3):
    """KS p-value of exact draws of log ψ (inverse CDF on a fine grid of the tested density)
    after ``steps`` slice steps whose target uses ``step_prior``."""
    grid = np.linspace(-10.0, 6.0, 32_001)
    logp = np.asarray(jax.vmap(_scale_density())(jnp.asarray(grid)))
    cdf = np.cumsum(np.exp(logp - logp.max()))
    cdf /= cdf[-1]
    rng = np.random.default_rng(3)
    t = np.interp(rng.uniform(size=n), cdf, grid)

    @jax.jit
    def move(keys, t):
        def one(k, t):
            psi = jnp.exp(t)
            for kk in jax.random.split(k, steps):
                args = (
                    jnp.asarray(Z_SCALE),
                    jnp.asarray(OMEGA),
                    5,
                    jnp.asarray(MU0),
                    KAPPA0,
                    NU0,
                    step_prior,
                )
                psi = sample_niw_scale(kk, psi, *args)
            return jnp.log(psi)

        return jax.vmap(one)(keys, t)

    moved = np.asarray(move(jax.random.split(jax.random.PRNGKey(4), n), jnp.asarray(t)))
    return st.kstest(moved, lambda x: np.interp(x, grid, cdf)).pvalue


@pytest.mark.slow
def test_niw_scale_step_keeps_exact_draws_exact():
    assert _scale_step_ks(SCALE_PRIOR) > 0.001


def test_niw_scale_check_detects_a_wrong_step():
    assert _scale_step_ks((SCALE_PRIOR[0], 2.0 * SCALE_PRIOR[1])) < 1e-6


SPECTRAL_PSI = 0.7


def _toy_log_likelihood(omega):
    return -0.15 * jnp.sum(omega**2) + jnp.sum(jnp.sin(omega))


def _log_scaled_state(t, prior):
    """log p of the state (e^t Ω, e^{2t} ψ) with the Jacobian, from the textbook evidence: the toy
    label term, each occupied slot's evidence at Ψ0 = ψ_t I, the Gamma density of ψ_t and
    e^{(Mm + 2)t} (ψ_t = ψ and e^{Mm t} with ψ fixed, ``prior=None``)."""
    scale = np.exp(t)
    psi = SPECTRAL_PSI * scale**2 if prior is not None else SPECTRAL_PSI
    omega = scale * OMEGA
    out = float(_toy_log_likelihood(jnp.asarray(omega))) + OMEGA.size * t
    out += sum(_log_evidence(omega[Z_SCALE == k], psi * np.eye(M_DIM)) for k in np.unique(Z_SCALE))
    if prior is not None:
        out += st.gamma.logpdf(psi, prior[0], scale=1.0 / prior[1]) + 2.0 * t
    return out


@pytest.mark.parametrize("prior", [SCALE_PRIOR, None], ids=["psi-latent", "psi-fixed"])
def test_spectral_scale_density_matches_the_textbook_evidence(prior):
    density = spectral_scale_log_density(
        jnp.asarray(Z_SCALE),
        jnp.asarray(OMEGA),
        5,
        jnp.asarray(MU0),
        KAPPA0,
        NU0,
        SPECTRAL_PSI,
        prior,
        _toy_log_likelihood,
    )
    ts = np.linspace(-2.0, 1.5, 15)
    got = np.array([float(density(t)) for t in ts])
    want = np.array([_log_scaled_state(t, prior) for t in ts])
    np.testing.assert_allclose(got - got[0], want - want[0], rtol=1e-10, atol=1e-9)


def _exact_spectra(rng, n, prior):
    """n independent draws of (Ω, ψ) given Z_SCALE: ψ ~ Gamma(prior), per occupied slot
    (μ, Σ) ~ NIW(μ0, κ0, ν0, ψ I), each ω ~ N(μ, Σ) (no label term)."""
    psi = rng.gamma(prior[0], 1.0 / prior[1], n)
    omega = np.empty((n,) + OMEGA.shape)
    for i in range(n):
        for k in np.unique(Z_SCALE):
            sigma = st.invwishart.rvs(df=NU0, scale=psi[i] * np.eye(M_DIM), random_state=rng)
            mu = rng.multivariate_normal(MU0, sigma / KAPPA0)
            members = Z_SCALE == k
            omega[i, members] = rng.multivariate_normal(mu, sigma, members.sum())
    return omega, psi


def _spectral_scale_ks(step_prior, n=4000, steps=2):
    """Two-sample KS p-values (log ψ, log ‖Ω‖²) of exact draws moved by ``steps`` spectral-scale
    steps whose target uses ``step_prior``, against fresh exact draws."""
    rng = np.random.default_rng(5)
    omega, psi = _exact_spectra(rng, n, SCALE_PRIOR)
    fresh_omega, fresh_psi = _exact_spectra(rng, n, SCALE_PRIOR)

    @jax.jit
    def move(keys, omega, psi):
        def one(k, om, ps):
            for kk in jax.random.split(k, steps):
                om, ps = sample_spectral_scale(
                    kk,
                    om,
                    ps,
                    jnp.asarray(Z_SCALE),
                    5,
                    jnp.asarray(MU0),
                    KAPPA0,
                    NU0,
                    step_prior,
                    lambda _: 0.0,
                    width=1.0,
                )
            return om, ps

        return jax.vmap(one)(keys, omega, psi)

    om, ps = move(jax.random.split(jax.random.PRNGKey(6), n), jnp.asarray(omega), jnp.asarray(psi))
    om, ps = np.asarray(om), np.asarray(ps)
    sq = lambda w: np.log(np.sum(w**2, axis=(1, 2)))  # noqa: E731
    return (
        st.ks_2samp(np.log(ps), np.log(fresh_psi)).pvalue,
        st.ks_2samp(sq(om), sq(fresh_omega)).pvalue,
        float(np.mean(np.abs(np.log(ps / psi)))),
    )


@pytest.mark.slow
def test_spectral_scale_step_keeps_exact_draws_exact():
    """Exact draws of (Ω, ψ) | z stay exact: the scale of both agrees with fresh draws (KS, each
    p > 0.001), and the step moves the scale (mean |Δ log ψ| > 0.3)."""
    p_psi, p_omega, moved = _spectral_scale_ks(SCALE_PRIOR)
    assert p_psi > 1e-3 and p_omega > 1e-3
    assert moved > 0.3


@pytest.mark.slow
def test_spectral_scale_check_detects_a_wrong_step():
    p_psi, p_omega, _ = _spectral_scale_ks((SCALE_PRIOR[0], 3.0 * SCALE_PRIOR[1]))
    assert min(p_psi, p_omega) < 1e-6


def test_spectral_scale_moves_are_on_by_default_and_valid_with_either_spectrum():
    """A move of the DP spectrum, on by default; the Gaussian spectrum (the default) has no scale
    to move and ignores it (``test_m3lak_sampler``: the same sweep's draws with and without it)."""
    from bayesmv import M3LAKClassifier
    from bayesmv.m3lak.settings import model_config
    from bayesmv.models import M3LAKConfig, M3LAKSampler

    for spectral_prior in ("dp", "gaussian"):
        M3LAKConfig.paper(spectral_prior=spectral_prior, spectral_scale_moves=True).validate()
        assert model_config(M3LAKClassifier(spectral_prior=spectral_prior).get_params()).spectral_scale_moves
    no_move = M3LAKSampler(spectral_scale_moves=False)
    params = M3LAKClassifier(spectral_prior="dp", sampler=no_move).get_params()
    assert not model_config(params).spectral_scale_moves


def test_sign_moves_need_the_collapsed_dp_update():
    from bayesmv import M3LAKClassifier
    from bayesmv.m3lak.settings import model_config
    from bayesmv.models import M3LAKConfig, M3LAKSampler

    for bad in ({"spectral_prior": "gaussian"}, {"dp_update": "slice"}):
        with pytest.raises(ValueError, match="dp_sign_moves"):
            M3LAKConfig.paper(**bad, dp_sign_moves=True).validate()
    assert not model_config(M3LAKClassifier().get_params()).dp_sign_moves  # the default
    sign_moves = M3LAKSampler(dp_sign_moves=True)
    with pytest.raises(ValueError, match="dp_sign_moves needs spectral_prior='dp'"):  # the default spectrum
        model_config(M3LAKClassifier(sampler=sign_moves).get_params())
    assert model_config(M3LAKClassifier(spectral_prior="dp", sampler=sign_moves).get_params()).dp_sign_moves


def test_mirrored_frequencies_keep_every_decision_value():
    """The sign move's map: ``(s_j ω_j, β_{sin,j} s_j)`` changes no decision value (a wrong map
    that flips ``ω_j`` alone does), so the move's acceptance is the DP's density alone."""
    from bayesmv.models import decision_values, mirror_frequencies

    rng = np.random.default_rng(3)
    H, omega, beta = (jnp.asarray(rng.normal(size=s)) for s in ((7, 3), (5, 3), (11,)))
    signs = jnp.asarray([1.0, -1.0, -1.0, 1.0, -1.0])
    mirrored = mirror_frequencies(omega, beta, signs)
    np.testing.assert_allclose(decision_values(H, *mirrored), decision_values(H, omega, beta), rtol=1e-12)
    np.testing.assert_array_equal(mirrored[0], signs[:, None] * omega)
    assert np.max(np.abs(decision_values(H, mirrored[0], beta) - decision_values(H, omega, beta))) > 0.1
