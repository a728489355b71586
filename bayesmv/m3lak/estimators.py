"""``M3LAKClassifier``: input validation, one ``run_m3lak`` per one-vs-rest problem, and the
calls into :mod:`bayesmv.m3lak.posterior` and :mod:`bayesmv.m3lak.predictive` (paper ``003_…``)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from ..base import (
    MultiViewMixin,
    encode_labels,
    labels_from_scores,
    one_vs_rest_targets,
    warn_sampler_trouble,
)
from ..datasets import SEED_DEPRECATED, check_positive, check_random_seed
from ..diagnostics import check_convergence
from .posterior import Continuation, appended_draws, continued_problems, posterior_outputs, sample_problems
from .predictive import (
    class_probabilities,
    kernel_band,
    predictive_log_odds,
    predictive_probabilities,
    problem_decisions,
)
from .settings import check_settings, model_config, run_options, standardized, view_standardization

__all__ = ["M3LAKClassifier"]


class M3LAKClassifier(ClassifierMixin, MultiViewMixin, BaseEstimator):
    """Bayesian multi-view max-margin classifier with an adaptive (DP mixture) random-feature kernel.

    Du et al., "Efficient and adaptive kernelization for nonlinear max-margin multi-view
    learning" (M3LAK; paper ``003_…``). Shared latent ``h`` (dimension ``n_latent``), per-view
    latents ``u`` (``n_view_latent``), a likelihood on ``βᵀφ̃(h)`` (the paper's hinge
    pseudo-likelihood, or the logistic likelihood) with ``2M+1`` random Fourier features whose
    frequencies have a DP Gaussian-mixture prior (``spectral_prior="dp"``) or a fixed Gaussian
    (RBF) spectrum (``"gaussian"``). Posterior by the hybrid Gibbs/HMC sampler of Algorithm 1
    (``bayesmv.inference.run_m3lak``).

    The defaults are not the paper's: ``likelihood="logistic"``, ``n_latent=14``,
    ``n_frequencies=25`` (with β's prior precision ``v = 0.01``) were chosen by held-out Brier
    score on mfeat tasks that the accuracy benchmark does not test on
    (``benchmarks/m3lak_defaults.py``). ``precision_update="collapsed"``, ``target_accept=0.9``,
    ``hmc_steps_joint=30``, two passes of ``H`` (5 leapfrog steps) and the latent variable model
    per sweep (``h_lvm_passes=2``), two passes of the joint (β, Ω) move and the DP spectrum per
    sweep (``kernel_passes=2``), a tempered first half of the warm-up
    (``warmup_tempering=0.02``), a slice step in the DP spectrum's overall scale
    (``spectral_scale_moves=True``) and 4 chains of 1000 + 2000 sweeps, spread over worker
    processes, are the sampler settings (``kernel_passes`` below for what they were chosen on).
    Before 2026-11-29 (one kernel pass, 2000 + 2000 sweeps), on a 2-core test machine, the
    demo's task (400 training points) with ``random_state`` 0-3 (each its own split) and the
    mixing benchmark's two fou+kar tasks (300 training points, splits 0-4), 14 fits of
    102-182 s: 10 met r̂ ≤ 1.01 and ESS ≥ 400 for the training decision values and τ. In the
    other 4, τ's r̂ was 1.011, 1.012, 1.08 (slow drift of a latent column between views) and
    1.51 (chains in two modes of the latent columns' allocation to the views, which no move of
    the sampler joins); in the last two the decision values' too (1.021, 1.015).
    Whether a fit near the threshold passes depends on the machine's rounding: the same code
    and seeds passed the demo's 4 tasks on another machine without the scale move, and 1 of
    the 4 here. On that machine, with one pass of 10 steps, 60 joint steps and 1000 + 2000
    sweeps (the settings until 2026-11-27) the demo's 4 fits took 84-86 s and τ failed in 2 of
    the 4 (r̂ 1.066 / ESS 38 and 1.026 / 126): chains that left warm-up in a state with lower
    τ, or visited one, for hundreds of draws.
    With ``n_latent=10`` (the default until 2026-11-26) every latent column was active in some
    view, the views competed for columns, and in 5 of 22 fits a chain served one column to view
    kar instead of fou and stayed there (r̂ of the decision values 1.09, of τ 1.49).
    At ``target_accept=0.8`` the joint (β, Ω) move diverged 1-4 times in 5 of 8 fits at
    ``n_latent=10``; at 0.9 in none.
    Check ``clf.convergence_report()`` before trusting a fit, and continue with ``sample_more``.
    The paper's setting: ``likelihood="hinge", n_latent=20, n_frequencies=100,
    precision_update="conditional", h_lvm_passes=1, kernel_passes=1, warmup_tempering=None,
    spectral_scale_moves=False, num_warmup=800, num_samples=200``
    (Algorithm 1 updates every block once per sweep).

    Parameters
    ----------
    n_latent, n_frequencies, C, n_view_latent, spectral_prior
        Model size (paper: m = 20, M = 100, K_i = 1; C chosen by CV from 1..10). Keep
        ``n_latent`` well below the number of features of views that carry most of the latent
        signal: the shared columns can otherwise explain a whole view, and its noise precision
        τ is not identified. On ``make_latent_views(rule="cosines")`` (two views of 10
        features, 300 training points, 4 × (2000 + 2000)) τ's r̂ was 1.53–1.61 at
        ``n_latent=14`` and 1.555 at 8, against 1.001–1.002 at 5.
    num_warmup, num_samples, num_chains, chain_method, random_state
        MCMC settings (paper: 1000 iterations, last 200 kept, one chain). ``random_state`` (an
        int, a ``np.random.RandomState`` / ``Generator`` or ``None``; ``seed`` is its deprecated
        old name) fixes the fit and the predictive draws: the same int gives identical
        predictions. The int used is ``random_seed_``. ``chain_method``: ``"processes"`` (the
        default: the chains spread over worker processes, one per CPU up to ``num_chains``, each
        running its chains one after another; the programs are compiled once in this process
        and loaded by the workers, which stay alive for refits; with one CPU or one chain, on
        an accelerator backend or with ``shard_data``/``mesh``, the chains run in this
        process), ``"sequential"`` (one after another in this process: the draws of
        ``"processes"`` where this process has one CPU; with more, XLA rounds some sums
        differently), ``"vectorized"`` (one vmapped program) or ``"parallel"`` (one chain
        per JAX device, see ``docs/scaling.md``).
    standardize : bool
        Standardise each view with the training means/scales of its observed rows.
    eta, alpha, a_r, b_r, a_tau, b_tau, v, v_prior, niw_kappa0, niw_nu0, niw_mu0, niw_psi0,
    dp_capacity, augmented
        Priors and sampler options, passed to ``bayesmv.models.m3lak.M3LAKConfig`` (paper
        defaults: η = 1e3, α = 1, a_r = 0.1, a_τ = v = 0.01, b_τ = b_r = 1e-5; the DP's NIW base
        κ0 = 1, μ0 = 0.01·1, Ψ0 = I, ν0 = m). ``niw_nu0=None`` is ``ν0 = 2m``, not the paper's
        ``m``: under ``Σ_k ~ IW(I, m)`` the mixture components' covariance has no finite mean,
        single chains wandered to high kernel frequencies (‖Ω‖² up to 19,000 against 64 in the
        other chains, with the divergent transitions), and ``benchmarks/m3lak_defaults.py``
        chose 2m on held-out tasks (Brier 0.0338 against 0.0339, decision-value r̂ 1.022 against
        1.027).
        ``augmented=True`` updates H and Ω given λ as the paper does; the default updates them
        under the λ-marginal hinge (same posterior, no stiff rows; see ``M3LAKConfig``).
    niw_psi0_prior : (a, b) or None
        Not in the paper: a Gamma prior (shape, rate) on the NIW scale ``ψ`` (``Ψ0 = ψ I``), so
        that the spectrum's components, and with them the kernel's length-scales, take the
        scale the data need (``niw_psi0`` is then unused; the draws of ``ψ`` are stored as
        ``niw_psi0``). None: ``ψ = niw_psi0``. On ``make_latent_views(rule="cosines")`` with the
        fast wave at 6 (``benchmarks/m3lak_spectrum.py --fast-frequency 6``, ``n_latent=5``, 5
        splits) ``(1, 0.1)`` brought 19 of 20 chains to the wave, the fixed ``ψ = 1`` 7 of 20;
        a chain can still let ``ψ`` sink towards 0 with Ω at the origin and fit nothing, a mode
        that r̂ shows (``niw_psi0_warmup_hold`` keeps chains out of it).
    niw_psi0_warmup_hold : float
        Not in the paper: with ``niw_psi0_prior``, ``ψ`` stays at its initial value (the prior
        mean) over this fraction of the warm-up's sweeps (the spectral-scale move then scales Ω
        alone) and is learned after, so that Ω can find the data's frequencies before ``ψ``
        adapts to Ω. The draws after warm-up target the posterior whatever this is. 0: no hold.
        On the cosines task with the wave at 6 (``benchmarks/m3lak_spectrum.py``, 5 splits,
        4 × (2000 + 4000), ``niw_psi0_prior=(1, 0.1)`` and both DP moves) ``0.5`` brought 20 of
        20 chains to the wave, 18 of 20 without the hold, at the same fit time; on notebook 01's
        task (wave at 4, ``n_latent=14``) 19 of 20, one chain fitting the labels through a latent
        column that no view uses. On the demo's mfeat task (``random_state=1``) with the same
        options: decision values r̂ 1.008, τ 1.010, 1 divergent transition of the Ω block (7
        before Ω's step-size adaptation restarted when the hold ends, as it now does).
    dp_update : {"collapsed", "slice"}, dp_split_merge : int
        How the DP spectrum's assignments of frequencies to components move:
        ``"collapsed"`` (not in the paper), ``dp_split_merge`` split–merge proposals per sweep
        (Dahl 2005), then each assignment given the others, the sticks and components
        integrated out (NIW predictive, Neal 2000), then the sticks and components given them;
        ``"slice"``, the paper's slice sampler (eqs. 5–9), under which a new component is
        offered as one fresh draw from the NIW prior and, at m = 20, hardly ever taken.
    likelihood : {"hinge", "logistic"}
        ``"hinge"``: the paper's pseudo-likelihood ``exp(-2C max(0, 1 - y f))``, ``predict_proba``
        a vote over draws. ``"logistic"`` (not in the paper): ``P(y | f) = σ(y f)``, its log
        weighted by ``C`` in the posterior (``C = 1``: the proper likelihood; ``C > 1`` lets the
        labels weigh more against the views in the shared latents: on four mfeat selection tasks
        at ``n_latent=14``, C = 4 / 16 lowered the held-out Brier score by 6 / 9 % at the same
        accuracy, with chains agreeing less; LOO of fits with different ``C`` is not
        comparable; experimental: the whole-sweep Geweke test at ``C = 0.5`` still flags one
        test function, see the CHANGELOG), ``β`` and ``Ω`` moved jointly by one HMC
        (``hmc_steps_joint`` leapfrog steps), and ``predict_proba`` the posterior predictive mean
        of ``σ(f)``.
    precision_update : {"conditional", "collapsed"}
        ``"conditional"``: each view's ARD precisions r_i and noise precision τ_i from their Gamma
        conditionals given ``W_i, V_i`` (eqs. 13–14). ``"collapsed"`` (not in the paper): U_i
        from its conditional given V_i and then by a slice step with V_i integrated out, r_i and
        τ_i by slice steps with ``[W_i V_i]`` integrated out, then ``[W_i V_i]`` at the new
        values; same posterior, faster mixing of τ.
    noise : {"view", "feature"}
        ``"view"``: one noise precision τ_i per view (the paper). ``"feature"`` (not in the paper):
        one per feature of every view, ``x_n^i ~ N(W_i h + V_i u, diag(τ_i)^{-1})`` as in factor
        analysis, so that features with little shared signal do not set the noise of the whole
        view; ``tau`` then has one entry per feature (dim ``view_feature``). With
        ``precision_update="collapsed"`` each ``τ_id`` moves by a slice step with ``[W_i V_i]``
        integrated out and ``r_i`` is drawn from its conditional given ``W_i``.
    lengthscale, hmc_steps_h, hmc_steps_omega, hmc_steps_joint, target_accept, init_step_size
        Not in the paper: the ``"gaussian"`` spectrum ``ω ~ N(0, I/ℓ²)`` (None: ℓ = √m) and the
        leapfrog steps / dual-averaging target / initial step of the HMC blocks for H, Ω and the
        joint (β, Ω) move. ``target_accept=0.9`` (NumPyro's NUTS: 0.8) keeps the joint move's step
        small enough that it did not diverge in the fits measured above.
    h_lvm_passes : int
        Not in the paper: how many times per sweep ``H`` and then the latent variable model
        (``U``, ``[W V]``, ``r``, ``τ``) are updated (with more than one pass, these passes open
        the sweep). ``H`` and the loadings ``W`` hold each other, and the noise precisions ``τ``
        move only as fast as they do.
    kernel_passes : int
        Not in the paper: how many times per sweep ``Ω`` (with ``β`` under the logistic
        likelihood) and then the DP spectrum (its scale, assignments, sticks and components) are
        updated. The DP components whiten Ω's move, so Ω's length-scales move only as fast as
        the two alternate. The default 2 with 1000 + 2000 sweeps (one pass with 2000 + 2000
        before 2026-11-29): on the demo's task (seed 0, the same 2-core machine) the mean
        margin mean(y·f), the decision values' slowest direction, went from bulk ESS 668 to
        1432 and the decision values from r̂ 1.010 / min ESS 885 (NOT CONVERGED) to 1.004 /
        1358 at the same fit time (296 s against 248-303 s); seeds 1-3: r̂ 1.004-1.006, min ESS
        940-1669, τ r̂ ≤ 1.007 / ESS ≥ 1182, fits 245-287 s. On the mixing benchmark's fou+kar
        tasks (300 training points, splits it does not use): even/odd split 3 and 0-4/5-9
        split 2 pass (τ r̂ 1.012 → 1.009, 1.007 → 1.004); even/odd split 1, τ r̂ 1.509 →
        1.024 (ESS 7 → 131), and 0-4/5-9 split 4, 1.082 → 1.085 (ESS 30; its latent column
        drifts between the views), still fail. Test accuracy and Brier score within 0.003 /
        0.001 of the old default's on the 5 of these fits with an old figure (demo seed 0, the
        four held-out splits).
    latent_axis_moves : bool
        Not in the paper: each sweep ends with moves of the scale and shear of the latent axes,
        jointly in ``(H, W_i, r_i, Ω, DP components)`` so that the likelihood is unchanged
        (``bayesmv.inference.latent_axes``); without them these directions, pinned only by the
        prior, drift slowly and the chains disagree on ``W_i``, ``r`` and ``omega`` by more than
        the rotation that :func:`align_latent_axes` removes. On a synthetic task (N = 200, m = 2,
        4 × (500 + 500)) they take the aligned ``W_0`` r̂ from 1.307 to 1.002. Off by default: in
        ``benchmarks/m3lak_accuracy.py`` the worst r̂ over decision values and τ on the two fou+kar
        tasks rose from 1.017 / 1.054 to 1.254 / 1.596 (on 0-4/5-9 splits 2 and 3, chains settled
        with 7.1 or 8.3 active ARD columns in view fou, each with its own τ), while on the all-view
        tasks it went from 1.010 / 1.031 to 1.007 / 1.023.
    spectral_scale_moves : bool
        Not in the paper: after the NIW scale ``ψ``, a slice step moves the DP spectrum's overall
        scale, ``(Ω, ψ) → (e^t Ω, e^{2t} ψ)`` with the components integrated out (``ψ`` stays
        fixed without ``niw_psi0_prior``). The joint (β, Ω) move is whitened by the current
        components and ``ψ`` is drawn given ``Ω``, so each pins the other along this direction.
        A move of the DP spectrum: ignored with ``spectral_prior="gaussian"``. On by default:
        at the other defaults (fixed ``ψ``), 4 × (2000 + 2000), on the demo's task (seeds 0-3)
        and the mixing benchmark's fou+kar tasks (300 training points, even/odd splits 0 and 3,
        0-4/5-9 splits 0-3), one fit each with and without it: ‖Ω‖²'s bulk ESS rose in 8 of
        10 fits (median 547 against 377), the largest r̂ of the training decision values over
        the 10 fits fell from 1.014 to 1.009, and 8 fits against 7 met r̂ ≤ 1.01 and ESS ≥ 400
        for the decision values and τ (the misses: τ, r̂ 1.011-1.012); fits 131-182 s against
        132-166 s, accuracy and Brier score unchanged. With ``niw_psi0_prior=(1, 0.1)`` on
        ``make_latent_views(rule="cosines")`` (``n_latent=5``, split 1 of
        ``benchmarks/m3lak_spectrum.py``) the decision values' r̂ went from 1.542 (ESS 7) to
        1.005 (1095). At the fixed ``ψ`` on the same task with 30 features per view and
        ``n_latent=14`` (5 splits), it made the DP find the fast wave less often: some chain
        reached it on 2 of 5 splits, against 4 of 5 without the move, and the DP's accuracy lead
        over the Gaussian spectrum fell from +0.305 (+3.8 SE) to +0.157 (+1.6 SE).
    dp_relocation_moves : bool
        Not in the paper: after the DP update, one Metropolis–Hastings proposal per frequency that
        moves ``ω_j`` to a fresh draw from a component picked by its stick weight and ``β_j`` to
        the Laplace approximation of its conditional there
        (:mod:`bayesmv.inference.m3lak_sampler.relocate`): a frequency can jump between the
        spectrum's modes, which the joint (β, Ω) move crosses only through the region between
        them. Needs ``spectral_prior="dp"`` and ``likelihood="logistic"``. On
        ``make_latent_views(rule="cosines")`` (30 features per view, ``n_latent=14``, split 0
        of ``benchmarks/m3lak_spectrum.py``, ``niw_psi0_prior=(1, 0.1)`` and
        ``spectral_scale_moves=True``, 4 × (2000 + 2000)) the chains had 5.4 / 6.4 / 23.0 / 8.0
        of 25 frequencies at the fast wave without it (decision values r̂ 1.436, ESS 8); with it,
        in two fits with different random numbers, 22.4–22.7 in all four chains (r̂ 1.017, ESS
        391) and 22.2–22.3 in three, while the fourth had let ``ψ`` collapse to 0 and fitted
        nothing (training accuracy 0.57; r̂ 1.539); fit 159–178 s against 126 s. The move does
        not free such a chain, nor one that fits the training labels through latent columns no
        view uses (training accuracy 1, test accuracy 0.5; at the fixed ``ψ = 1`` three of four
        chains did so without the move, two with it). Off by default.
    dp_sign_moves : bool
        Not in the paper: before the DP update, each frequency's sign is drawn with its slot,
        ``ω_j → -ω_j`` together with its sine weight ``β_{sin,j} → -β_{sin,j}``, which leaves
        every decision value unchanged (:func:`bayesmv.inference.dp.signed_assignments`): a
        frequency that fits a wave at ``-ω`` can join the component at ``+ω`` without crossing
        the origin. Needs ``spectral_prior="dp"`` and ``dp_update="collapsed"``. On
        ``benchmarks/m3lak_spectrum.py`` at its defaults (a slow and a fast wave, ``n_latent=5``,
        5 splits, 4 × (1000 + 2000)) the number of active components had r̂ 1.011–1.031 and
        mean bulk ESS 218 with it, 1.016–1.047 and 157 without; with ``dp_relocation_moves``
        as well, 1.005–1.018 and 736 (fits 30 % longer): that count moves with the number of
        frequencies at each wave, which the relocation move carries between them. Off by
        default.
    warmup_tempering : float or None
        Not in the paper: a tempered warm-up. Over the first half of the warm-up the views'
        likelihood is raised to a power ``t`` rising geometrically from this value to 1 (None: no
        tempering): while the views' pull is weak, the latent columns can change view. The draws
        after warm-up target the posterior whatever this is, and it costs no time. On the two
        fou+kar tasks of ``benchmarks/m3lak_mixing.py``, splits 0–4, 4 × (2000 + 2000): ``0.02``
        met r̂ ≤ 1.01 and ESS ≥ 400 for the decision values and τ in 7 of 10 fits, None in 4, with
        the same accuracy (mean 0.960 and 0.936 on the two tasks either way); on the demo's task
        (seeds 0–3) both pass. It does not join two modes that both hold chains (even/odd split 1:
        τ r̂ 1.51 with and without it). It needs a warm-up of a hundred sweeps or more, whose
        untempered second half lets the chains settle: on scikit-learn's blob check (one view of
        2 features, one chain of 4 draws) the training accuracy was 0.837 after 20 warm-up
        sweeps against 0.933 untempered, and 0.923 after 100. Set None for shorter warm-ups.
    fixed_blocks : sequence of str
        Sampler blocks held at their initial values, a mixing diagnostic (names in
        ``bayesmv.models.m3lak.FIXABLE_BLOCKS``); empty for inference.
    shard_data : bool or int, mesh : jax.sharding.Mesh or None
        Data-sharded sweep (``bayesmv.distributed``): shard the sample axis of X, H, U, λ over
        every device (``True``), the first ``k`` devices (an int) or the devices of ``mesh``;
        XLA does the cross-sample reductions. Draws equal the unsharded run up to rounding.
        Not with ``chain_method="parallel"`` (which puts one chain on each device instead);
        with ``"processes"`` the chains run in this process.

    Attributes
    ----------
    classes_, n_views_, n_features_per_view_, view_means_, view_scales_
    posterior_draws_ : list of dict
        Per one-vs-rest problem (one for binary labels), the draws the predictive needs,
        flattened over chains: ``"W_i"``, ``"V_i"``, ``"tau"``, ``"beta"``, ``"omega"``.
    raw_posterior_ : list of dict
        Per one-vs-rest problem, every draw as the sampler made it, ``(chain, draw, ...)``
        (``inference_data_`` holds ``W_i``, ``omega`` and ``r`` aligned instead).
    inference_data_ : xarray.DataTree
        The ArviZ posterior: posterior (β, Ω, τ, r, W, V, DP weights/assignments, training decision
        values; ``W_i``, ``omega`` and ``r`` turned to one orientation of the latent space by
        :func:`align_latent_axes`, which leaves the decision values unchanged, so that their
        summaries and r̂ mean something across chains), sample statistics, ``observed_data`` y (±1)
        and ``log_likelihood`` y (``log p(y_n | f_n)`` per draw and training sample under
        ``likelihood``; the hinge's is its pseudo-likelihood), so ``az.loo`` and ``az.compare`` run
        (read their Pareto k: each training point has latents of its own, and on an mfeat fit of 300
        points every k was above 0.7, which makes PSIS-LOO unreliable there),
        ``posterior_predictive`` y (replicated training labels, :func:`replicate_labels`) and
        ``constant_data`` observed (the ``(obs_id, view)`` mask of observed views). Every axis is
        named (:func:`posterior_dims`). With more than two classes every variable gains an
        ``ovr_class`` dimension (one slice per one-vs-rest problem, labelled with the class).
    """

    _allow_missing = True
    _min_views = 1
    _persistence_exclude = ("_continuation",)  # sampler states: live JAX arrays, refit to continue

    def __init__(
        self,
        n_latent=14,
        n_frequencies=25,
        C=1.0,
        n_view_latent=1,
        spectral_prior="dp",
        num_warmup=1000,
        num_samples=2000,
        num_chains=4,
        chain_method="processes",
        random_state=0,
        standardize=True,
        eta=1e3,
        alpha=1.0,
        a_r=0.1,
        b_r=1e-5,
        a_tau=0.01,
        b_tau=1e-5,
        v=0.01,
        v_prior=None,
        niw_kappa0=1.0,
        niw_nu0=None,
        niw_mu0=0.01,
        niw_psi0=1.0,
        niw_psi0_prior=None,
        niw_psi0_warmup_hold=0.0,
        dp_capacity=50,
        dp_update="collapsed",
        dp_split_merge=5,
        augmented=False,
        likelihood="logistic",
        precision_update="collapsed",
        noise="view",
        lengthscale=None,
        hmc_steps_h=5,
        h_lvm_passes=2,
        kernel_passes=2,
        hmc_steps_omega=10,
        hmc_steps_joint=30,
        target_accept=0.9,
        init_step_size=0.05,
        latent_axis_moves=False,
        spectral_scale_moves=True,
        dp_relocation_moves=False,
        dp_sign_moves=False,
        warmup_tempering=0.02,
        fixed_blocks=(),
        shard_data=False,
        mesh=None,
        seed=SEED_DEPRECATED,
    ):
        self.n_latent = n_latent
        self.n_frequencies = n_frequencies
        self.C = C
        self.n_view_latent = n_view_latent
        self.spectral_prior = spectral_prior
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.chain_method = chain_method
        self.random_state = random_state
        self.seed = seed
        self.standardize = standardize
        self.eta = eta
        self.alpha = alpha
        self.a_r = a_r
        self.b_r = b_r
        self.a_tau = a_tau
        self.b_tau = b_tau
        self.v = v
        self.v_prior = v_prior
        self.niw_kappa0 = niw_kappa0
        self.niw_nu0 = niw_nu0
        self.niw_mu0 = niw_mu0
        self.niw_psi0 = niw_psi0
        self.niw_psi0_prior = niw_psi0_prior
        self.niw_psi0_warmup_hold = niw_psi0_warmup_hold
        self.dp_capacity = dp_capacity
        self.dp_update = dp_update
        self.dp_split_merge = dp_split_merge
        self.augmented = augmented
        self.likelihood = likelihood
        self.precision_update = precision_update
        self.noise = noise
        self.lengthscale = lengthscale
        self.hmc_steps_h = hmc_steps_h
        self.h_lvm_passes = h_lvm_passes
        self.kernel_passes = kernel_passes
        self.hmc_steps_omega = hmc_steps_omega
        self.hmc_steps_joint = hmc_steps_joint
        self.target_accept = target_accept
        self.init_step_size = init_step_size
        self.latent_axis_moves = latent_axis_moves
        self.spectral_scale_moves = spectral_scale_moves
        self.dp_relocation_moves = dp_relocation_moves
        self.dp_sign_moves = dp_sign_moves
        self.warmup_tempering = warmup_tempering
        self.fixed_blocks = fixed_blocks
        self.shard_data = shard_data
        self.mesh = mesh

    # ---------------------------------------------------------------- fit
    def fit(self, Xs, y):
        """Fit one M3LAK posterior (binary labels) or one per class (one-vs-rest).

        ``Xs``: list of views ``(n_samples, D_i)``; a sample missing from a view is an all-NaN
        row. ``y``: any labels with at least two classes.
        """
        params = self.get_params()
        check_settings(params)
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        views, y = self._validate_fit(Xs, y)
        classes, codes = encode_labels(y)
        self.view_means_, self.view_scales_ = view_standardization(views, self.standardize)
        Zs = self._standardize(views)
        targets = one_vs_rest_targets(codes, len(classes))
        config, run_kwargs = model_config(params), run_options(params)
        seeds = [self._problem_seed(k) for k in range(targets.shape[1])]
        runs, notes = sample_problems(
            Zs, targets, config, self.num_samples, run_kwargs, self.dp_capacity, random_states=seeds
        )
        self.classes_ = classes
        self.raw_posterior_ = [run.samples for run in runs]
        self._sample_stats = [run.stats for run in runs]
        self._continuation = Continuation(Zs, targets, config, run_kwargs, [run.state for run in runs], notes)
        self._set_posterior()
        return self

    def sample_more(self, num_samples=None):
        """Continue every chain from where it stopped by ``num_samples`` draws (default: the
        fit's ``num_samples``), as NumPyro's ``MCMC.post_warmup_state`` does: no new warm-up, and
        with the fit's ``num_samples`` no new compilation. The draws are appended to
        ``raw_posterior_``, ``posterior_draws_`` and ``inference_data_`` (re-aligned); with the
        same ``random_state``, ``fit`` then ``sample_more(n)`` gives the draws of one fit with ``n`` more.
        Returns ``self``."""
        self._check_is_fitted()
        if not hasattr(self, "_continuation"):
            raise RuntimeError(
                "sample_more needs the sampler states of this session's fit; a loaded estimator keeps "
                "only its draws: fit it again to continue its chains"
            )
        n = self.num_samples if num_samples is None else num_samples
        check_positive("num_samples", n, integer=True)
        runs, self._continuation = continued_problems(self._continuation, n, self.dp_capacity)
        self.raw_posterior_ = appended_draws(self.raw_posterior_, [run.samples for run in runs])
        self._sample_stats = appended_draws(self._sample_stats, [run.stats for run in runs])
        self._set_posterior()
        return self

    def _set_posterior(self):
        """``posterior_draws_`` and ``inference_data_`` from ``raw_posterior_``
        (:func:`posterior_outputs`); warns on sampler trouble."""
        cont = self._continuation
        self.posterior_draws_, self.inference_data_ = posterior_outputs(
            self.raw_posterior_,
            self._sample_stats,
            cont.Zs,
            cont.targets,
            cont.config,
            self.likelihood,
            self.random_seed_,
            self.classes_,
        )
        warn_sampler_trouble(
            self.inference_data_, type(self).__name__, var_names=["decision"], notes=cont.notes, stacklevel=4
        )

    def _problem_seed(self, k):
        return int(np.random.default_rng([self.random_seed_, int(k)]).integers(2**31 - 1))

    def _standardize(self, views):
        return standardized(views, self.view_means_, self.view_scales_)

    # ---------------------------------------------------------------- predict
    def _check_is_fitted(self):
        self._check_fitted()
        if not hasattr(self, "posterior_draws_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call 'fit' first.")

    def predictive_decisions(self, Xs):
        """Posterior predictive draws of ``βᵀφ̃(h*)``: array ``(n_problems, n_draws, n_samples)``
        (one problem for binary labels, one per class otherwise)."""
        self._check_is_fitted()
        Zs = self._standardize(self._validate_predict(Xs))
        return problem_decisions(self.posterior_draws_, Zs, self.random_seed_)

    def decision_function(self, Xs):
        """Posterior predictive log-odds ``log P(y* = c | x*) / P(y* ≠ c | x*)`` of each
        one-vs-rest problem: ``(n,)`` for two classes (positive means ``classes_[1]``), else
        ``(n, n_classes)``. Its sign (its arg-max) gives :meth:`predict`; it orders the points as
        :meth:`predict_proba` does. ``likelihood="logistic"``: from the mean of ``σ(f)`` over the
        draws, computed in log space (finite for any ``f``). ``"hinge"``: from the share of draws
        with ``f > 0``, counting half a draw on each side (finite when every draw agrees). The
        posterior mean of ``f = βᵀφ̃(h*)`` itself is ``predictive_decisions(Xs).mean(axis=1)``.
        """
        log_odds = predictive_log_odds(self.predictive_decisions(Xs), self.likelihood)  # (n_problems, n)
        return log_odds[0] if len(self.classes_) == 2 else log_odds.T

    def predict_proba(self, Xs):
        """``P(y* = c | x*)``, averaged over the posterior predictive draws of ``f = βᵀφ̃(h*)``.

        ``likelihood="logistic"``: the posterior predictive mean of ``σ(f)``. ``"hinge"`` (a
        pseudo-likelihood, no ``P(y | f)``): the fraction of draws with ``f > 0`` (a vote,
        DESIGN §5). Multi-class: the one-vs-rest probabilities normalised to sum to one
        (uniform where every one-vs-rest problem gives probability 0).
        """
        return class_probabilities(predictive_probabilities(self.predictive_decisions(Xs), self.likelihood))

    def predict(self, Xs):
        """Most probable class under :meth:`predict_proba`, read from :meth:`decision_function`
        (ties go to ``classes_[0]``)."""
        scores = self.decision_function(Xs)  # raises NotFittedError before fit
        return labels_from_scores(self.classes_, scores)

    # ---------------------------------------------------------------- diagnostics
    def learned_kernel(self, t, direction=None, interval=0.9, ovr_index=0):
        """Posterior of the learned shift-invariant kernel ``k(t) = mean_j cos(ω_jᵀt)`` (§2.2).

        ``t``: lags in the latent space, shape ``(k, n_latent)``, or distances ``(k,)`` along
        ``direction`` (default the unit diagonal ``1/√m``). Returns a :class:`KernelBand`
        ``(t, mean, lower, upper)`` with an equal-tailed ``interval`` credible band over draws.
        """
        self._check_is_fitted()
        if not 0 <= ovr_index < len(self.posterior_draws_):
            raise ValueError(f"ovr_index must be in [0, {len(self.posterior_draws_) - 1}], got {ovr_index!r}")
        return kernel_band(self.posterior_draws_[ovr_index]["omega"], t, direction, interval)

    def chain_training_accuracy(self):
        """Each chain's accuracy on the training labels, ``(in_sample, from_views)``, each
        ``(n_problems, n_chains)`` (one problem for binary labels, one per class otherwise).

        ``in_sample``: from the training decision values the chain drew, whose latents ``h_n``
        the labels move too. ``from_views``: from the posterior predictive decision values of the
        training views, ``h_n`` drawn given ``x_n`` alone as for a new point (the draws of
        :meth:`predictive_decisions` on the training views). A chain far lower from the views than
        in-sample fits the labels through latent columns that no view uses, which a new point's
        latent cannot follow; such a chain is in a mode of its own. Probabilities as in
        :meth:`predict_proba`, per chain. Needs the fit's standardised training views, which an
        estimator loaded by ``bayesmv.load`` does not keep.
        """
        self._check_is_fitted()
        if not hasattr(self, "_continuation"):
            raise ValueError(
                "chain_training_accuracy needs the training views: refit (a loaded estimator has none)"
            )
        labels = self._continuation.targets > 0  # (n, n_problems)
        n_chains = self.raw_posterior_[0]["decision"].shape[0]
        f = problem_decisions(self.posterior_draws_, self._continuation.Zs, self.random_seed_)
        f = f.reshape(f.shape[0], n_chains, -1, f.shape[-1])  # chain by chain, as the draws are stored

        def accuracy(decision, k):  # (chain, draw, n) -> (chain,)
            return np.mean(
                (predictive_probabilities(decision, self.likelihood) > 0.5) == labels[:, k], axis=-1
            )

        in_sample = np.stack([accuracy(raw["decision"], k) for k, raw in enumerate(self.raw_posterior_)])
        return in_sample, np.stack([accuracy(f[k], k) for k in range(len(f))])

    def convergence_report(self, var_names=("decision", "tau"), rhat_max=1.01, ess_min=400):
        """``bayesmv.check_convergence`` on the identifiable quantities (training decision values
        and the view noise precisions; β, Ω, W are identified only up to symmetries). When it
        fails and the training views are at hand, it also lists :meth:`chain_training_accuracy`."""
        self._check_is_fitted()
        report = check_convergence(
            self.inference_data_, rhat_max=rhat_max, ess_min=ess_min, var_names=list(var_names)
        )
        if not report.passed:
            if hasattr(self, "_continuation"):
                in_sample, from_views = self.chain_training_accuracy()
                for k, (inside, outside) in enumerate(zip(in_sample, from_views)):
                    where = "" if len(in_sample) == 1 else f" (one-vs-rest problem {k})"
                    pairs = ", ".join(f"{a:.2f} / {b:.2f}" for a, b in zip(inside, outside))
                    report.info.append(
                        f"training accuracy per chain{where}, in-sample / latents from the views alone: "
                        f"{pairs} (a chain much lower from the views has fitted the labels through latent "
                        "columns that no view uses)"
                    )
            report.info.append(
                "to extend every chain from where it stopped (no new warm-up, no recompilation): "
                "clf.sample_more(num_samples), then check again"
            )
        return report
