"""Scale-out: parallel chains, data-sharded M3LAK sweep, jax.distributed, memory-bounded
kernel methods.

Tests that need several devices run in a subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (the flag must be set before JAX starts).
"""

import json
import os
import socket
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bayesmv  # noqa: F401  (x64)
from bayesmv import distributed as bd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_script(script, devices=4, timeout=900):
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), ROOT) if p),
    }
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(lines[-1])


# ------------------------------------------------------------------------------------------
# in-process helpers (one CPU device)
# ------------------------------------------------------------------------------------------
def test_partitionable_rng_is_on_and_padding_invariant():
    """The padded sharded run relies on: a draw of shape (N_pad, d) starts with the (N, d) draw."""
    assert bd.check_partitionable_rng() is True
    key = jax.random.PRNGKey(3)
    np.testing.assert_array_equal(jax.random.normal(key, (12, 3))[:10], jax.random.normal(key, (10, 3)))
    np.testing.assert_array_equal(jax.random.uniform(key, (12, 1))[:10], jax.random.uniform(key, (10, 1)))


def test_mesh_helpers_and_errors():
    mesh = bd.data_mesh()
    assert bd.mesh_size(mesh) == jax.device_count()
    assert bd.resolve_mesh(None, False) is None
    assert bd.mesh_size(bd.resolve_mesh(None, True)) == jax.device_count()
    assert bd.resolve_mesh(mesh) is mesh
    with pytest.raises(ValueError, match="shard_data"):
        bd.resolve_mesh(None, jax.device_count() + 1)
    with pytest.raises(ValueError, match="shard_data"):
        bd.resolve_mesh(None, "yes")
    with pytest.raises(TypeError, match="mesh"):
        bd.resolve_mesh("mesh")
    x = np.arange(10.0).reshape(5, 2)
    a = bd.shard_rows(x, mesh, n_padded=7, fill=-1.0)
    assert a.shape == (7, 2)
    np.testing.assert_array_equal(np.asarray(a)[:5], x)
    np.testing.assert_array_equal(np.asarray(a)[5:], -1.0)
    assert sum(bd.per_device_bytes(a).values()) == 7 * 2 * 8
    with pytest.raises(ValueError, match="n_padded"):
        bd.shard_rows(x, mesh, n_padded=4)


@pytest.mark.slow
def test_padding_rows_contribute_nothing_to_the_conditionals():
    """β, [W V] and τ conditionals: padding rows (features zeroed, every view missing, arbitrary
    H/U/λ) leave the draws unchanged (same key)."""
    from bayesmv.inference import conditionals as cond

    rng = np.random.default_rng(0)
    N, P_, D, m, K = 9, 5, 4, 3, 1
    pad = 3
    feats = rng.normal(size=(N, P_))
    y = np.where(rng.normal(size=N) > 0, 1.0, -1.0)
    lam = rng.uniform(0.5, 2.0, N)
    X, H, U = rng.normal(size=(N, D)), rng.normal(size=(N, m)), rng.normal(size=(N, K))
    obs = np.ones(N, bool)
    obs[2] = False
    X[2] = 0.0
    W, V = rng.normal(size=(D, m)), rng.normal(size=(D, K))
    junk = lambda a: np.concatenate([a, 5.0 + rng.normal(size=(pad,) + a.shape[1:])])  # noqa: E731
    valid = np.r_[np.ones(N, bool), np.zeros(pad, bool)]
    key = jax.random.PRNGKey(1)

    b0 = cond.sample_beta_conditional(key, feats, y, lam, 1.5, 0.01)
    b1 = cond.sample_beta_conditional(
        key, junk(feats) * valid[:, None], np.r_[y, np.zeros(pad)], junk(lam), 1.5, 0.01
    )
    np.testing.assert_allclose(b1, b0, rtol=1e-12, atol=1e-12)

    Xp = np.concatenate([X, np.zeros((pad, D))])  # padding rows of X are zero-filled like missing views
    obs_p = np.r_[obs, np.zeros(pad, bool)]
    w0 = cond.sample_wv_conditional(key, X, H, U, np.ones(m), 1e3, 2.0, obs)
    w1 = cond.sample_wv_conditional(key, Xp, junk(H), junk(U), np.ones(m), 1e3, 2.0, obs_p)
    for a, b in zip(w0, w1):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    t0 = cond.sample_tau_conditional(key, X, H, U, W, V, obs, 0.01, 1e-5)
    t1 = cond.sample_tau_conditional(key, Xp, junk(H), junk(U), W, V, obs_p, 0.01, 1e-5)
    np.testing.assert_allclose(t1, t0, rtol=1e-12)


def test_estimator_sharding_parameters():
    from sklearn.base import clone

    from bayesmv import M3LAKClassifier, M3LAKSampler

    Xs = [np.zeros((6, 2)), np.ones((6, 3))]
    y = np.array([0, 1] * 3)
    est = M3LAKClassifier(sampler=M3LAKSampler(shard_data=2, mesh=None))
    assert clone(est).get_params()["sampler__shard_data"] == 2
    with pytest.raises(ValueError, match="parallel"):
        M3LAKClassifier(sampler=M3LAKSampler(shard_data=True), chain_method="parallel").fit(Xs, y)
    with pytest.raises(ValueError, match="shard_data"):
        M3LAKClassifier(sampler=M3LAKSampler(shard_data="all")).fit(Xs, y)
    with pytest.raises(ValueError, match="mesh"):
        M3LAKClassifier(sampler=M3LAKSampler(mesh="devices")).fit(Xs, y)


@pytest.mark.slow
def test_padded_sweep_equals_unpadded_sweep():
    """One full M3LAK sweep (no mesh) on data padded with y = 0 / all-views-missing rows equals the
    sweep on the original data: first N rows of H, and every global block (β, Ω, W, V, τ, r)."""
    from bayesmv.inference.m3lak_sampler import M3LAKData, initial_latent, m3lak_sweep
    from bayesmv.models.m3lak import M3LAKConfig

    rng = np.random.default_rng(2)
    N, pad = 7, 3
    Xs = [rng.normal(size=(N, 3)), rng.normal(size=(N, 2))]
    obs = np.ones((N, 2), bool)
    obs[1, 1] = False
    Xs[1][1] = 0.0
    y = np.where(rng.normal(size=N) > 0, 1.0, -1.0)
    cfg = M3LAKConfig.paper(
        n_latent=2, n_frequencies=3, dp_capacity=8, hmc_steps_h=2, hmc_steps_omega=2, latent_axis_moves=True
    )
    d0 = M3LAKData(tuple(jnp.asarray(X) for X in Xs), jnp.asarray(obs), jnp.asarray(y))
    d1 = M3LAKData(
        tuple(jnp.asarray(np.concatenate([X, np.zeros((pad, X.shape[1]))])) for X in Xs),
        jnp.asarray(np.concatenate([obs, np.zeros((pad, 2), bool)])),
        jnp.asarray(np.r_[y, np.zeros(pad)]),
    )

    @jax.jit
    def two_sweeps(key, data):  # one compiled sweep body (a scan), run twice
        k0, *ks = jax.random.split(key, 3)

        def sweep(lat, k):
            lat, info = m3lak_sweep(k, lat, data, cfg, 0.3, 0.05)
            return lat, info

        lat, infos = jax.lax.scan(sweep, initial_latent(k0, data, cfg), jnp.stack(ks))
        return lat, jax.tree.map(lambda x: x[-1], infos)

    key = jax.random.PRNGKey(5)
    (l0, i0), (l1, i1) = two_sweeps(key, d0), two_sweeps(key, d1)
    np.testing.assert_allclose(l1.H[:N], l0.H, rtol=1e-9, atol=1e-10)
    for name in ("beta", "omega", "tau", "r"):
        np.testing.assert_allclose(getattr(l1, name), getattr(l0, name), rtol=1e-9, atol=1e-10)
    for a, b in zip(l0.Ws + l0.Vs, l1.Ws + l1.Vs):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(i1[0], i0[0], rtol=1e-12)  # acceptance rate over the real rows only


# ------------------------------------------------------------------------------------------
# forced multi-device subprocesses
# ------------------------------------------------------------------------------------------
_TINY_DATA = """
import json, os, warnings
import numpy as np, jax
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
rng = np.random.default_rng(0)
N = 10
Xs = [rng.normal(size=(N, 3)), rng.normal(size=(N, 4))]
Xs[1][2] = np.nan  # a missing view
y = (rng.normal(size=N) > 0).astype(int)
steps = M3LAKSampler(hmc_steps_h=2, hmc_steps_omega=2)
"""

_FORCED_4 = (
    _TINY_DATA
    + """
import bayesmv.inference as inf
kw = dict(n_latent=2, n_frequencies=3, num_warmup=3, num_samples=3, random_state=1, spectral_prior="dp",
          likelihood="hinge", priors=M3LAKPriors(view_features=None, label_feedback=True))
# (the paper's spectrum, sampler (hmc_steps_omega) and classifier; its vote makes proba exact)
def compare(a, b):
    d = {}
    for k in a.posterior_draws_[0]:
        x, z = np.asarray(a.posterior_draws_[0][k]), np.asarray(b.posterior_draws_[0][k])
        assert x.shape == z.shape, (k, x.shape, z.shape)
        d[k] = float(np.max(np.abs(x - z) / (1.0 + np.abs(x))))
    x = a.inference_data_.posterior["decision"].values
    z = b.inference_data_.posterior["decision"].values
    assert x.shape == z.shape, (x.shape, z.shape)
    d["decision"] = float(np.max(np.abs(x - z)))
    return d
proba = lambda a, b: float(np.max(np.abs(a.predict_proba(Xs) - b.predict_proba(Xs))))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    par = M3LAKClassifier(num_chains=4, chain_method="parallel", sampler=steps, **kw).fit(Xs, y)
seq = M3LAKClassifier(num_chains=4, chain_method="sequential", sampler=steps, **kw).fit(Xs, y)
parallel = {"devices": jax.device_count(), "diff": compare(seq, par),
            "chains": int(par.inference_data_.posterior.sizes["chain"]),
            "warned": [str(w.message) for w in caught if "device" in str(w.message)], "proba": proba(seq, par)}

captured = []
orig = inf.run_m3lak
def spy(*a, **k):
    post = orig(*a, **k)
    captured.append(post)
    return post
inf.run_m3lak = spy
plain = M3LAKClassifier(num_chains=1, sampler=steps, **kw).fit(Xs, y)
shard = M3LAKClassifier(num_chains=1, sampler=steps.replace(shard_data=True), **kw).fit(Xs, y)
lat = captured[1].last_state.latent
sharded = {"diff": compare(plain, shard), "H_shape": list(lat.H.shape), "H_spec": str(lat.H.sharding.spec),
           "lam_spec": str(lat.lam.sharding.spec),
           "rows_per_device": sorted(int(s.data.shape[0]) for s in lat.H.addressable_shards),
           "plain_spec": str(getattr(captured[0].last_state.latent.H.sharding, "spec", None)),
           "proba": proba(plain, shard)}
# the default chain method ("processes") at the default number of chains (4): worker processes
# with fresh JAX backends, then workers whose JAX another job of the pool started on 4 devices
from joblib import Parallel, delayed
from joblib.externals.loky import get_reusable_executor
default = M3LAKClassifier(sampler=steps, **kw)
fresh = M3LAKClassifier(sampler=steps, **kw).fit(Xs, y)
get_reusable_executor().shutdown(wait=True)
started = Parallel(n_jobs=2, backend="loky")(delayed(jax.local_device_count)() for _ in range(2))
reused = M3LAKClassifier(sampler=steps, **kw).fit(Xs, y)
processes = {"chain_method": default.chain_method, "num_chains": default.num_chains,
             "chains": int(fresh.inference_data_.posterior.sizes["chain"]),
             "diff_fresh": compare(seq, fresh), "diff_started": compare(seq, reused),
             "started_devices": started, "proba": proba(seq, fresh)}
print(json.dumps({"parallel": parallel, "sharded": sharded, "processes": processes}))
"""
)


@pytest.fixture(scope="module")
def forced_4_devices():
    """One subprocess on 4 forced CPU devices (DP spectral prior, tiny shapes): 4 parallel vs 4
    sequential chains, then a plain vs a data-sharded fit (N = 10 padded to 12)."""
    return _run_script(_FORCED_4)


@pytest.mark.slow
def test_parallel_chains_equal_sequential_on_4_devices(forced_4_devices):
    res = forced_4_devices["parallel"]
    assert res["devices"] == 4 and res["chains"] == 4
    assert not res["warned"], res[
        "warned"
    ]  # numpyro falls back to sequential (with a warning) if devices are missing
    assert max(res["diff"].values()) < 1e-8, res["diff"]
    assert res["proba"] == 0.0


@pytest.mark.slow
def test_default_chain_method_runs_on_4_devices(forced_4_devices):
    """The default ``chain_method="processes"`` at the default 4 chains in a process with 4
    forced CPU devices: its worker processes each get one device (``XLA_FLAGS`` is inherited),
    so the programs compiled here load there, and the draws equal the ``"sequential"`` chains of
    the same process; also where another job of the worker pool had already started JAX on 4
    devices (the worker then compiles its own program). Both raised an ``INVALID_ARGUMENT``
    (4 shards expected, 1 given) before the workers dropped the forced device count."""
    res = forced_4_devices["processes"]
    assert (res["chain_method"], res["num_chains"], res["chains"]) == ("processes", 4, 4)
    assert res["started_devices"] == [4, 4]
    assert max(res["diff_fresh"].values()) < 1e-8, res["diff_fresh"]
    assert max(res["diff_started"].values()) < 1e-8, res["diff_started"]
    assert res["proba"] == 0.0


_FORCED_4_DEFAULT_LENGTH = """
import json, warnings
import numpy as np, jax, arviz as az
from bayesmv import M3LAKClassifier, M3LAKSampler
rng = np.random.default_rng(0)
N = 10
Xs = [rng.normal(size=(N, 3)), rng.normal(size=(N, 4))]
y = (rng.normal(size=N) > 0).astype(int)
# the default chain length, 4 x (1000 + 2000), not extended (both runs the same length)
kw = dict(n_latent=2, n_frequencies=3, random_state=1, sampler=M3LAKSampler(max_extensions=0))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    par = M3LAKClassifier(chain_method="parallel", **kw).fit(Xs, y)
    seq = M3LAKClassifier(chain_method="sequential", **kw).fit(Xs, y)
dp, ds = (m.inference_data_.posterior["decision"] for m in (par, seq))
apart = np.abs(dp.values - ds.values).max(axis=(0, 2)) > 1e-8
se = np.sqrt(az.mcse(dp.to_dataset())["decision"].values ** 2 + az.mcse(ds.to_dataset())["decision"].values ** 2)
z = (dp.values.mean((0, 1)) - ds.values.mean((0, 1))) / se
print(json.dumps({"devices": jax.device_count(), "draws": int(dp.sizes["draw"]),
                  "first_apart": int(np.argmax(apart)) if apart.any() else -1,
                  "max_abs_z": float(np.max(np.abs(z))),
                  "proba": float(np.max(np.abs(par.predict_proba(Xs) - seq.predict_proba(Xs))))}))
"""


@pytest.mark.slow
def test_parallel_chains_match_sequential_in_distribution_at_default_length():
    """At the default chain length (4 x (1000 + 2000), 4 forced CPU devices) parallel and
    sequential chains are no longer the same numbers: the two compiled programs round
    differently and the chains drift apart. They sample the same posterior: every training
    decision value's posterior mean agrees within 4.5 combined Monte-Carlo standard errors
    (Bonferroni over 10 values at about 1e-4)."""
    res = _run_script(_FORCED_4_DEFAULT_LENGTH, timeout=900)
    assert res["devices"] == 4 and res["draws"] == 2000
    assert res["max_abs_z"] < 4.5, res


@pytest.mark.slow
def test_sharded_sweep_equals_unsharded_on_4_devices(forced_4_devices):
    """H, U, λ and X sharded along N (10 rows padded to 12, 3 per device); the draws equal the
    unsharded run's."""
    res = forced_4_devices["sharded"]
    assert res["H_shape"] == [12, 2]
    assert "data" in res["H_spec"] and "data" in res["lam_spec"], res
    assert res["rows_per_device"] == [3, 3, 3, 3]
    assert "data" not in res["plain_spec"]
    assert max(res["diff"].values()) < 1e-7, res["diff"]
    assert res["proba"] < 1e-12


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_distributed_initialize_single_process():
    """``jax.distributed.initialize`` through bayesmv with a local coordinator, one process of two
    (forced) devices; global placement with ``shard_rows`` and an XLA all-reduce."""
    res = _run_script(
        f"""
import json
import numpy as np
from bayesmv import distributed as bd
info = bd.initialize("127.0.0.1:{_free_port()}", num_processes=1, process_id=0)
again = bd.initialize()  # idempotent
import jax
mesh = bd.data_mesh()
x = np.arange(15.0).reshape(5, 3)
a = bd.shard_rows(x, mesh)
s = jax.jit(lambda a: (a.T @ a))(a)
print(json.dumps({{"info": list(info), "again": list(again), "shape": list(a.shape),
                  "fully_addressable": bool(a.is_fully_addressable),
                  "gram_err": float(np.max(np.abs(np.asarray(s) - x.T @ x)))}}))
""",
        devices=2,
        timeout=300,
    )
    assert res["info"][:4] == [0, 1, 2, 2]
    assert res["again"] == res["info"]
    assert res["shape"] == [6, 3]
    assert res["gram_err"] == 0.0


def _run_processes(script, num_processes=2, devices=2, timeout=600, command=None, env=None):
    """``script`` in ``num_processes`` local processes of ``devices`` forced CPU devices each,
    joined by ``jax.distributed`` on a loopback coordinator: the script reads
    ``COORDINATOR``, ``NUM_PROCESSES`` and ``PROCESS_ID`` from its environment. Or ``command``
    (an argv) with ``env(i)`` added to process ``i``'s environment. All are killed when the time
    limit passes. Returns each process's last JSON line (None where it printed none)."""
    base = {  # without a cluster's variables (a run of the suite inside a SLURM job)
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_"))},
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), ROOT) if p),
        "COORDINATOR": f"127.0.0.1:{_free_port()}",
        "NUM_PROCESSES": str(num_processes),
    }
    command = command or [sys.executable, "-c", textwrap.dedent(script)]
    procs = [
        subprocess.Popen(
            command,
            env={**base, "PROCESS_ID": str(i), **(env(i) if env else {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for i in range(num_processes)
    ]
    try:
        outs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-4000:]
    lines = [[ln for ln in out.splitlines() if ln.startswith("{")] for out, _ in outs]
    return [json.loads(found[-1]) if found else None for found in lines]


_TWO_PROCESS_DATA = (
    _TINY_DATA
    + """
kw = dict(n_latent=2, n_frequencies=3, num_warmup=3, num_samples=3, random_state=1, num_chains=1)
def result(m):
    return {"proba": m.predict_proba(Xs).tolist(),
            "decision": m.inference_data_.posterior["decision"].values.tolist()}
"""
)


@pytest.mark.slow
def test_two_process_data_sharded_fit_equals_one_process():
    """Two local processes joined by ``jax.distributed`` on 127.0.0.1 (2 forced CPU devices
    each, 4 in all) fit one data-sharded ``M3LAKClassifier`` (N = 10 padded to 12, 3 rows per
    device): both get the training decision values and ``predict_proba`` of the unsharded fit
    in one process with the same seed, to rounding. The processes inherit the test session's
    persistent compilation cache, which ``bd.initialize`` turns off (see the next test)."""
    fits = _run_processes(
        _TWO_PROCESS_DATA
        + """
from bayesmv import distributed as bd
info = bd.initialize(os.environ["COORDINATOR"], num_processes=int(os.environ["NUM_PROCESSES"]),
                     process_id=int(os.environ["PROCESS_ID"]))
m = M3LAKClassifier(sampler=steps.replace(shard_data=True), **kw).fit(Xs, y)
print(json.dumps({"info": list(info)[:4], **result(m)}))
"""
    )
    one = _run_script(
        _TWO_PROCESS_DATA + "print(json.dumps(result(M3LAKClassifier(sampler=steps, **kw).fit(Xs, y))))",
        devices=1,
    )
    assert [f["info"] for f in fits] == [[0, 2, 2, 4], [1, 2, 2, 4]]
    assert fits[0]["decision"] == fits[1]["decision"] and fits[0]["proba"] == fits[1]["proba"]
    decision, want = np.asarray(fits[0]["decision"]), np.asarray(one["decision"])
    assert decision.shape == want.shape == (1, 3, 10)
    # the sharded sums round differently: relative to 1 + |value|, as the 4-device test
    assert np.max(np.abs(decision - want) / (1.0 + np.abs(want))) < 1e-7
    assert np.max(np.abs(np.asarray(fits[0]["proba"]) - one["proba"])) < 1e-9


_CROSS_PROCESS_SUM = """
import json, os, warnings
import numpy as np, jax, jax.numpy as jnp
from bayesmv import distributed as bd
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    bd.initialize(os.environ["COORDINATOR"], num_processes=2, process_id=int(os.environ["PROCESS_ID"]))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # cache every program
mesh = bd.data_mesh()
X = bd.shard_rows(np.arange(12.0).reshape(6, 2), mesh)
def grams(X):  # all-reduces in a loop, as in the M3LAK sweep (one all-reduce alone passes)
    return jax.lax.fori_loop(0, 3, lambda i, G: G + X.T @ (X * (i + 1.0)), jnp.zeros((2, 2)))
gram = jax.jit(grams, out_shardings=bd.replicated_sharding(mesh))(X)
print(json.dumps({"gram": np.asarray(gram.addressable_data(0)).tolist(),
                  "cache_on": bd.compilation_cache_on(), "warned": [str(w.message) for w in caught]}))
"""


@pytest.mark.slow
def test_initialize_turns_off_the_compilation_cache_where_cross_process_programs_deadlock(tmp_path):
    """XLA:CPU programs with collectives across processes deadlock when the processes load them
    from JAX's persistent compilation cache (``bayesmv.distributed``'s module docstring): two
    runs of a two-process all-reduce in one cache directory both finish (without
    ``bd.initialize``'s turning the cache off, the second run reads the first one's program and
    hangs until the time limit, in every run), both processes warn, and nothing enters the cache."""
    cache = tmp_path / "cache"
    env = {"JAX_COMPILATION_CACHE_DIR": str(cache)}
    runs = [_run_processes(_CROSS_PROCESS_SUM, devices=1, timeout=120, env=lambda i: env) for _ in range(2)]
    X = np.arange(12.0).reshape(6, 2)
    for run in runs[0] + runs[1]:
        assert np.array_equal(run["gram"], 6 * X.T @ X)
        assert run["cache_on"] is False
        warned = run["warned"]
        assert any("persistent compilation cache is turned off" in w for w in warned), warned
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.slow
def test_a_data_sharded_fit_across_processes_refuses_the_compilation_cache(tmp_path):
    """Processes joined by ``jax.distributed.initialize`` itself keep JAX's persistent
    compilation cache: a data-sharded fit across them raises, before it compiles, instead of
    deadlocking in a later run that reads the cache; the same fit started by ``bd.initialize``,
    which turns the cache off, runs (``test_two_process_data_sharded_fit_equals_one_process``)."""
    runs = _run_processes(
        _TWO_PROCESS_DATA
        + """
jax.distributed.initialize(os.environ["COORDINATOR"], num_processes=2, process_id=int(os.environ["PROCESS_ID"]))
try:
    M3LAKClassifier(sampler=steps.replace(shard_data=True), **kw).fit(Xs, y)
    print(json.dumps({"error": None}))
except RuntimeError as err:
    print(json.dumps({"error": str(err)}))
""",
        devices=1,
        timeout=120,
        env=lambda i: {"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache")},
    )
    for run in runs:
        assert run["error"] is not None and "persistent compilation cache" in run["error"], run


_CHAINS_ACROSS_PROCESSES = """
from bayesmv import distributed as bd
from bayesmv.inference.m3lak_sampler import run
bd.initialize(os.environ["COORDINATOR"], num_processes=int(os.environ["NUM_PROCESSES"]),
              process_id=int(os.environ["PROCESS_ID"]))
ran = []
local_chains = run._local_chains
def counted(settings, chain_method, starts, *args):
    ran.append([chain_method, run._chain_count(starts)])
    return local_chains(settings, chain_method, starts, *args)
run._local_chains = counted
kw["num_chains"] = 4
four = M3LAKClassifier(sampler=steps, **kw).fit(Xs, y)  # the default chain method, "processes"
kw["num_chains"] = 3
three = M3LAKClassifier(chain_method="sequential", sampler=steps, **kw).fit(Xs, y)
print(json.dumps({"ran": ran, "four": result(four), "three": result(three)}))
"""


@pytest.mark.slow
def test_chains_spread_over_two_processes():
    """Under ``jax.distributed`` with two processes (one CPU device each) the chains are spread,
    not repeated: 4 chains (the default, ``"processes"``) run 2 in each process and 3
    sequential chains run 2 + 1 (the second process repeats its chain to keep the shapes equal;
    the copy is dropped). Each process gets every chain, equal to the same chains run in one
    process: draws and ``predict_proba``."""
    fits = _run_processes(_TWO_PROCESS_DATA + _CHAINS_ACROSS_PROCESSES, devices=1)
    one = _run_script(
        _TWO_PROCESS_DATA
        + """
four = M3LAKClassifier(chain_method="sequential", sampler=steps, **{**kw, "num_chains": 4}).fit(Xs, y)
three = M3LAKClassifier(chain_method="sequential", sampler=steps, **{**kw, "num_chains": 3}).fit(Xs, y)
print(json.dumps({"four": result(four), "three": result(three)}))
""",
        devices=1,
    )
    assert fits[0]["ran"] == [["processes", 2], ["sequential", 2]]
    assert fits[1]["ran"] == [["processes", 2], ["sequential", 2]]  # chain 2 and its copy
    for fit in fits:
        for name, chains in (("four", 4), ("three", 3)):
            decision, want = np.asarray(fit[name]["decision"]), np.asarray(one[name]["decision"])
            assert decision.shape == want.shape == (chains, 3, 10)
            assert np.max(np.abs(decision - want) / (1.0 + np.abs(want))) < 1e-8, name
            assert np.max(np.abs(np.asarray(fit[name]["proba"]) - one[name]["proba"])) < 1e-12, name


def _slurm_port_job_id():
    """A SLURM job id whose coordinator port (JAX: ``61440 + id % 4096``) is free on 127.0.0.1."""
    for job_id in np.random.default_rng().permutation(4096):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", 61440 + int(job_id)))
            except OSError:
                continue
        return str(int(job_id) + 4096)
    raise RuntimeError("no free port in 61440-65535")


@pytest.mark.slow
def test_slurm_example_spreads_its_chains_over_two_tasks(tmp_path):
    """``examples/slurm/m3lak_fit.py --quick`` as two tasks of a SLURM job on this host (SLURM's
    variables set as ``srun`` sets them, the node list 127.0.0.1): ``distributed.initialize()``
    reads them, the 4 chains run 2 per process, and process 0 prints and saves the fit of all
    4 chains, equal to the script run as one process; process 1 prints nothing."""
    job_id = _slurm_port_job_id()
    out = tmp_path / "m3lak.bayesmv"
    script = [sys.executable, os.path.join("examples", "slurm", "m3lak_fit.py"), "--quick"]
    slurm = {"SLURM_JOB_ID": job_id, "SLURM_STEP_NODELIST": "127.0.0.1", "SLURM_NTASKS": "2"}
    tasks = _run_processes(
        None,
        devices=1,
        command=script + ["--output", str(out)],
        env=lambda i: {**slurm, "SLURM_PROCID": str(i), "SLURM_LOCALID": str(i), "SLURM_STEP_NUM_NODES": "1"},
    )
    (alone,) = _run_processes(None, num_processes=1, devices=1, command=script)
    assert tasks[1] is None
    assert (tasks[0]["processes"], tasks[0]["chains"], alone["processes"], alone["chains"]) == (2, 4, 1, 4)
    np.testing.assert_allclose(tasks[0]["proba"], alone["proba"], rtol=0, atol=1e-12)
    saved = bayesmv.load(out)
    assert saved.inference_data_.posterior.sizes["chain"] == 4


@pytest.mark.slow
def test_kernel_methods_never_form_n_by_n():
    """MVML block-Nyström and MVL-LS CG at n = 20,000: the peak RSS grows by far less than one
    n x n float64 Gram matrix (3.0 GiB); the growth is O(block_size * n) for the CG."""
    n = 20000
    res = _run_script(
        f"""
import json, numpy as np
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
import bayesmv
from bayesmv.mvml import MVMLClassifier
from bayesmv.mvl import MVLClassifier
rng = np.random.default_rng(0)
h = rng.normal(size=({n}, 2))
y = (np.sum(h**2, 1) > 1.386).astype(int)
Xs = [h @ rng.normal(size=(2, d)) + 0.3 * rng.normal(size=({n}, d)) for d in (5, 6)]
MVMLClassifier(nystrom=50, max_iter=1).fit([X[:200] for X in Xs], y[:200])  # warm-up (imports, BLAS threads)
base = hwm()
a = MVMLClassifier(nystrom=100, max_iter=2).fit(Xs, y)
mvml = hwm()
b = MVLClassifier(solver="cg", gamma_A=1e-3, cg_max_iter=1).fit(Xs, y)
acc = float(np.mean(a.predict([X[:500] for X in Xs]) == y[:500]))
print(json.dumps({{"base": base, "mvml": mvml, "mvl": hwm(), "form": a.solver_form_, "acc": acc,
                  "mvl_shape": list(b.dual_coef_.shape)}}))
""",
        devices=1,
        timeout=900,
    )
    gram = 8 * n * n
    assert res["form"] == "primal"
    assert res["mvml"] - res["base"] < 0.35 * gram, res
    assert res["mvl"] - res["base"] < 0.35 * gram, res
    assert res["mvl_shape"][:2] == [2, n]  # (views, samples, outputs)
    assert res["acc"] > 0.8
