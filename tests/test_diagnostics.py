"""ArviZ conversion, summaries and convergence reports for MCMC and deterministic fits."""

import subprocess
import sys

import arviz as az
import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
import xarray as xr
from numpyro.infer import MCMC, NUTS
from scipy.stats import norm

import bayesmv
from bayesmv import cli
from bayesmv.diagnostics import FitTrace, check_convergence, summary, to_inference_data


@pytest.fixture(scope="module")
def nuts_run():
    def model(y=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    y = np.random.default_rng(0).normal(1.5, 1.0, 30)
    mcmc = MCMC(
        NUTS(model),
        num_warmup=300,
        num_samples=600,
        num_chains=2,
        progress_bar=False,
        chain_method="sequential",
    )
    mcmc.run(jax.random.PRNGKey(0), y=y)
    return mcmc, y


@pytest.mark.slow
def test_to_inference_data_from_numpyro(nuts_run):
    mcmc, y = nuts_run
    extra = {"my_stat": np.ones((2, 600))}
    idata = to_inference_data(mcmc, observed_data={"y": y}, extra_sample_stats=extra)
    assert isinstance(idata, xr.DataTree)
    assert {"posterior", "sample_stats", "observed_data", "log_likelihood"} <= set(idata.children)
    assert idata.posterior["mu"].shape == (2, 600)
    assert "diverging" in idata.sample_stats and "my_stat" in idata.sample_stats
    np.testing.assert_allclose(idata.observed_data["y"].values, y)
    mu = idata.posterior["mu"].values[..., None]  # NumPyro's pointwise log-likelihood of y
    np.testing.assert_allclose(idata.log_likelihood["y"].values, norm.logpdf(y, mu, 1.0), rtol=1e-6)
    # posterior mean of mu close to the conjugate answer
    post_mean = y.sum() / (len(y) + 1e-2)
    assert float(idata.posterior["mu"].mean()) == pytest.approx(post_mean, abs=0.1)
    assert "r_hat" in summary(idata).columns
    given = {"y": np.zeros((2, 600, len(y)))}  # a caller's log-likelihood replaces NumPyro's
    np.testing.assert_array_equal(
        to_inference_data(mcmc, log_likelihood=given).log_likelihood["y"].values, 0.0
    )


@pytest.mark.slow
def test_to_inference_data_in_a_fresh_interpreter():
    """ArviZ 1.x, imported by bayesmv, puts a lazily loaded numpyro in ``sys.modules``; a numpyro
    submodule imported before the package itself then goes missing from its parent, and
    ``az.from_numpyro`` fails on ``numpyro.infer.initialization`` (so it did before bayesmv
    imported the numpyro package first). A fresh interpreter imports in the order that broke."""
    code = (
        "import bayesmv, jax\n"
        "from numpyro.infer import MCMC, NUTS\n"
        "from numpyro import distributions, sample\n"
        "def model():\n"
        "    sample('mu', distributions.Normal(0.0, 1.0))\n"
        "mcmc = MCMC(NUTS(model), num_warmup=20, num_samples=20, progress_bar=False)\n"
        "mcmc.run(jax.random.PRNGKey(0))\n"
        "print(bayesmv.to_inference_data(mcmc).posterior['mu'].shape)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("(1, 20)"), run.stdout


def test_check_convergence_passes_for_good_chains_and_fails_for_stuck_ones(nuts_run):
    idata = to_inference_data(nuts_run[0])
    report = check_convergence(idata, ess_min=200)
    assert report.passed and report.variables[0].r_hat < 1.01 and report.n_chains == 2
    text = str(report)
    assert "mu" in text and "PASSED" in text and "r_hat" in text
    rng = np.random.default_rng(1)
    stuck = az.from_dict(
        {
            "posterior": {
                "a": rng.normal(size=(4, 500)) + np.arange(4)[:, None],
                "b": rng.normal(size=(4, 500, 3)),
            },
            "sample_stats": {"diverging": np.zeros((4, 500), bool)},
        }
    )
    rep = check_convergence(stuck)
    assert not rep.passed and rep.failed == ["a"]
    assert rep.to_dataframe().loc["b", "passed"]
    assert "NOT CONVERGED" in str(rep)
    div = stuck.copy(deep=True)
    div.sample_stats["diverging"][0, :3] = True
    assert check_convergence(div, var_names=["b"]).divergences == 3
    assert not any("by block" in line for line in check_convergence(div, var_names=["b"]).info)
    by_block = az.from_dict(
        {
            "posterior": {"b": rng.normal(size=(4, 500))},
            "sample_stats": {
                "diverging": np.eye(4, 500, dtype=bool) | np.eye(4, 500, k=1, dtype=bool),
                "diverging_H": np.eye(4, 500, dtype=bool),
                "diverging_omega": np.eye(4, 500, k=1, dtype=bool),
            },
        }
    )
    assert "divergent transitions by block: H 4, omega 4" in check_convergence(by_block).info
    assert not check_convergence(div, var_names=["b"]).passed
    nan = az.from_dict({"posterior": {"a": np.where(np.eye(4, 500) > 0, np.nan, rng.normal(size=(4, 500)))}})
    assert any("non-finite" in n for n in check_convergence(nan).notes)
    with pytest.raises(ValueError, match="not in the posterior"):
        check_convergence(stuck, var_names=["zzz"])
    with pytest.raises(TypeError, match="DataTree"):
        check_convergence({"a": 1})
    with pytest.raises(TypeError, match="DataTree"):
        check_convergence(stuck["posterior"].to_dataset())


def test_fit_trace_container_works_with_the_same_functions():
    tr = FitTrace(
        estimates={"A": np.eye(3), "w": np.array([0.4, 0.6])},
        traces={"objective": np.array([5.0, 3.0, 2.5, 2.49])},
        converged=True,
        method="MVML",
    )
    assert tr.n_iter == 4 and tr.objective[-1] == 2.49
    rep = check_convergence(tr)
    assert rep.passed and rep.n_draws == 4
    table = summary(tr)
    assert table.loc["objective[final]", "mean"] == 2.49 and table.loc["A", "size"] == 9
    idata = tr.to_inference_data()
    assert idata.posterior["A"].shape == (1, 1, 3, 3)
    assert idata.sample_stats["objective"].shape == (1, 4)
    bad = FitTrace(
        estimates={"A": np.array([np.nan])},
        traces={"objective": np.array([1.0, np.inf])},
        converged=False,
        method="MVML",
    )
    rep = check_convergence(bad)
    assert not rep.passed and len(rep.notes) == 3


def test_cli_help_and_info(capsys):
    assert cli.main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "numpyro" in out and "arviz" in out and "cpu:0" in out and bayesmv.__version__ in out


@pytest.mark.slow
def test_console_script_is_installed():
    exe = __import__("shutil").which("bayesmv", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe is not None, "the `bayesmv` console script is not installed next to the interpreter"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    assert "info" in out and "demo" in out
