"""One diagnostics layer for every estimator: ArviZ conversion, summaries and convergence checks.

MCMC fits become ArviZ 1.x posteriors: an ``xarray.DataTree`` whose children are the groups
(``posterior``, ``sample_stats``, ``log_likelihood``, ...). Deterministic fits keep a ``FitTrace``
(final estimates + per-iteration traces such as the objective). ``summary`` and
``check_convergence`` accept either, so notebooks treat all methods alike.

This module is the package's one adapter to ArviZ's API: the rest of the package builds its
posteriors through :func:`to_inference_data` and handles them as plain ``xarray.DataTree``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import xarray as xr

__all__ = [
    "ConvergenceReport",
    "FitTrace",
    "VariableDiagnostics",
    "check_convergence",
    "summary",
    "to_inference_data",
]


@dataclass
class FitTrace:
    """Result container of a deterministic / MAP fit.

    :func:`summary` and :func:`check_convergence` accept it as they accept an ArviZ posterior;
    :meth:`to_inference_data` converts it to one.

    Parameters
    ----------
    estimates : dict of str to array-like, default={}
        Maps names to final arrays (any shape).
    traces : dict of str to array-like of shape (n_iter,), default={}
        Maps names to per-iteration 1-D arrays (``"objective"`` is the one convergence is
        judged on).
    converged : bool or None, default=None
        The optimiser's own verdict (``None`` when it has none, e.g. online learners).
    method : str, default=""
        Name of the method that produced the fit.

    Attributes
    ----------
    objective : ndarray of shape (n_iter,)
        The ``objective`` trace as an array (empty if none was recorded).
    n_iter : int
        Number of iterations recorded (the longest trace).

    See Also
    --------
    check_convergence : Check a fit's convergence.
    summary : Summary table of a fit.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.diagnostics import FitTrace
    >>> trace = FitTrace(
    ...     estimates={"w": np.array([0.5, 0.5])},
    ...     traces={"objective": np.array([3.0, 2.0, 1.5])},
    ...     converged=True,
    ...     method="gradient descent",
    ... )
    >>> trace.n_iter, float(trace.objective[-1])
    (3, 1.5)
    """

    estimates: dict = field(default_factory=dict)
    traces: dict = field(default_factory=dict)
    converged: bool | None = None
    method: str = ""

    @property
    def objective(self):
        """The ``objective`` trace as an array (empty if none was recorded)."""
        return np.asarray(self.traces.get("objective", np.empty(0)))

    @property
    def n_iter(self) -> int:
        """Number of iterations recorded (the longest trace)."""
        return int(max((len(np.atleast_1d(t)) for t in self.traces.values()), default=0))

    def to_inference_data(self) -> xr.DataTree:
        """ArviZ posterior (``xarray.DataTree``) of the fit.

        The estimates form a one-draw ``posterior`` and each trace is in ``sample_stats`` along
        ``draw`` (one draw per iteration, one chain).

        Returns
        -------
        idata : xarray.DataTree
            The groups ``posterior`` (one chain, one draw) and ``sample_stats`` (one chain,
            one draw per iteration); an empty group is left out.
        """
        groups = {
            "posterior": {k: np.asarray(v)[None, None, ...] for k, v in self.estimates.items()},
            "sample_stats": {k: np.asarray(v)[None, :] for k, v in self.traces.items()},
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.from_dict({g: d for g, d in groups.items() if d})


def to_inference_data(
    mcmc,
    observed_data=None,
    posterior_predictive=None,
    coords=None,
    dims=None,
    extra_sample_stats=None,
    log_likelihood=None,
    constant_data=None,
) -> xr.DataTree:
    """Convert a NumPyro MCMC run, or its draws, to an ArviZ 1.x posterior (``xarray.DataTree``).

    ``mcmc`` is a ``numpyro.infer.MCMC`` run or its draws: a dict of ``(chain, draw, ...)``
    arrays. The other groups are added beside ``posterior``. This is the package's one adapter
    to ArviZ's API: the estimators build their posteriors through it.

    Parameters
    ----------
    mcmc : numpyro.infer.MCMC or dict
        The run, or its draws by name, each shaped ``(chain, draw, ...)``.
    observed_data : dict, default=None
        Arrays without chain and draw axes.
    posterior_predictive : dict, default=None
        Arrays shaped ``(chain, draw, ...)``.
    coords : dict, default=None
        Coordinates of every group's variables, as in ``az.from_dict``.
    dims : dict, default=None
        Dimension names of every group's variables, as in ``az.from_dict``.
    extra_sample_stats : dict, default=None
        Arrays shaped ``(chain, draw, ...)`` added to ``sample_stats`` (beside NumPyro's
        ``diverging``, ``accept_prob``, ``num_steps``, ...).
    log_likelihood : dict, default=None
        Pointwise log-likelihood arrays shaped ``(chain, draw, ...)``, named after the observed
        variable, for ``az.loo`` and ``az.compare``. From an ``MCMC`` run without
        ``log_likelihood``, NumPyro's pointwise log-likelihood of the model's observed sites.
    constant_data : dict, default=None
        Arrays without chain and draw axes.

    Returns
    -------
    idata : xarray.DataTree
        One child per non-empty group (``posterior``, ``sample_stats``, ``log_likelihood``,
        ``posterior_predictive``, ``observed_data``, ``constant_data``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import to_inference_data
    >>> rng = np.random.default_rng(0)
    >>> draws = {"mu": rng.normal(size=(4, 500)), "theta": rng.normal(size=(4, 500, 3))}
    >>> idata = to_inference_data(draws, observed_data={"y": np.ones(3)})
    >>> sorted(idata.children)
    ['observed_data', 'posterior']
    >>> idata["posterior"]["theta"].shape
    (4, 500, 3)
    """
    groups = {
        "posterior_predictive": posterior_predictive,
        "sample_stats": extra_sample_stats,
        "log_likelihood": log_likelihood,
        "observed_data": observed_data,
        "constant_data": constant_data,
    }
    groups = {g: {k: np.asarray(v) for k, v in d.items()} for g, d in groups.items() if d}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(mcmc, dict):
            groups["posterior"] = {k: np.asarray(v) for k, v in mcmc.items()}
            return az.from_dict(groups, coords=coords, dims=dims)
        # NumPyro's pointwise log-likelihood only where the caller gives none (it would be replaced)
        idata = az.from_numpyro(mcmc, coords=coords, dims=dims, log_likelihood="log_likelihood" not in groups)
        if not groups:
            return idata
        extra = az.from_dict(groups, coords=coords, dims=dims)
    for group in groups:
        if group == "sample_stats" and "sample_stats" in idata.children:
            idata["sample_stats"] = idata["sample_stats"].to_dataset().assign(extra["sample_stats"].data_vars)
        else:
            idata[group] = extra[group]
    return idata


def summary(data, var_names=None, **kwargs):
    """Summary table of a fit: ``arviz.summary`` of a posterior, or the final values of a ``FitTrace``.

    For an ArviZ posterior (``xarray.DataTree``, MCMC) this is ``arviz.summary`` (its warnings
    silenced). For a :class:`FitTrace` (deterministic fits) it is a table of the final
    estimates (``mean``, ``sd``, ``min``, ``max`` and ``size`` of each array) plus one row
    ``"<name>[final]"`` per trace whose ``mean`` is the trace's last value (``min``/``max``
    over the trace). Notebooks can so treat all methods alike.

    Parameters
    ----------
    data : xarray.DataTree or FitTrace
        The posterior, or the trace of a deterministic fit.
    var_names : list of str, default=None
        Variables to summarise (for a ``FitTrace``: estimates; its traces are always shown);
        ``None`` means all.
    **kwargs
        Further arguments of ``arviz.summary`` (posteriors only).

    Returns
    -------
    table : pandas.DataFrame
        One row per variable element (posterior) or per estimate and trace (``FitTrace``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import FitTrace, summary, to_inference_data
    >>> rng = np.random.default_rng(0)
    >>> idata = to_inference_data({"mu": rng.normal(size=(4, 500)), "theta": rng.normal(size=(4, 500, 2))})
    >>> table = summary(idata)
    >>> list(table.index)
    ['mu', 'theta[0]', 'theta[1]']
    >>> {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns)
    True
    >>> trace = FitTrace(estimates={"w": np.array([0.5, 0.5])}, traces={"objective": np.array([3.0, 1.5])})
    >>> summary(trace)
                      mean   sd  min  max  size
    w                  0.5  0.0  0.5  0.5     2
    objective[final]   1.5  0.0  1.5  3.0     2
    """
    if isinstance(data, FitTrace):
        import pandas as pd

        rows = {}
        for name, value in data.estimates.items():
            if var_names is not None and name not in var_names:
                continue
            arr = np.asarray(value, dtype=float)
            rows[name] = {
                "mean": arr.mean(),
                "sd": arr.std(),
                "min": arr.min(),
                "max": arr.max(),
                "size": arr.size,
            }
        for name, trace in data.traces.items():
            trace = np.asarray(trace, dtype=float)
            if trace.size:
                rows[f"{name}[final]"] = {
                    "mean": trace[-1],
                    "sd": 0.0,
                    "min": trace.min(),
                    "max": trace.max(),
                    "size": trace.size,
                }
        return pd.DataFrame.from_dict(rows, orient="index")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.summary(data, var_names=var_names, **kwargs)


@dataclass
class VariableDiagnostics:
    """Worst-case diagnostics of one variable over its elements.

    One row of a :class:`ConvergenceReport`.

    Parameters
    ----------
    name : str
        Name of the variable (or, for a :class:`FitTrace`, of the trace).
    r_hat : float
        Largest r̂ over the variable's elements (NaN for a ``FitTrace`` or a single chain).
    ess_bulk : float
        Smallest bulk effective sample size over its elements (NaN for a ``FitTrace``).
    ess_tail : float
        Smallest tail effective sample size over its elements (NaN for a ``FitTrace``).
    passed : bool
        Whether the variable meets the thresholds of the report (for a ``FitTrace``: whether
        the trace is non-empty and finite).
    """

    name: str
    r_hat: float
    ess_bulk: float
    ess_tail: float
    passed: bool


@dataclass
class ConvergenceReport:
    """Per-variable convergence verdict; ``str(report)`` is a readable table.

    Returned by :func:`check_convergence`.

    Parameters
    ----------
    variables : list of VariableDiagnostics
        The diagnostics of each variable checked.
    rhat_max : float
        Largest r̂ that passes.
    ess_min : float
        Smallest bulk and tail ESS that pass.
    divergences : int, default=0
        Number of divergent transitions.
    n_chains : int, default=0
        Number of chains.
    n_draws : int, default=0
        Number of draws per chain (for a :class:`FitTrace`, the number of iterations).
    notes : list of str, default=[]
        Problems found; any note fails the report.
    info : list of str, default=[]
        Remarks that do not fail it.

    Attributes
    ----------
    passed : bool
        True when every variable meets its thresholds, no transition diverged and no note was
        raised.
    failed : list of str
        Names of the variables that miss a threshold.

    See Also
    --------
    check_convergence : Check a fit's convergence against thresholds.
    """

    variables: list
    rhat_max: float
    ess_min: float
    divergences: int = 0
    n_chains: int = 0
    n_draws: int = 0
    notes: list = field(default_factory=list)  # problems: any note fails the report
    info: list = field(default_factory=list)  # remarks that do not fail it

    @property
    def passed(self) -> bool:
        """True when every variable meets its thresholds, no transition diverged and no note was raised."""
        return all(v.passed for v in self.variables) and self.divergences == 0 and not self.notes

    @property
    def failed(self) -> list:
        """Names of the variables that miss a threshold."""
        return [v.name for v in self.variables if not v.passed]

    def to_dataframe(self):
        """The per-variable diagnostics as a pandas ``DataFrame`` indexed by variable name.

        Returns
        -------
        df : pandas.DataFrame
            One row per variable, indexed by ``name``, with the columns ``r_hat``,
            ``ess_bulk``, ``ess_tail`` and ``passed``.
        """
        import pandas as pd

        return pd.DataFrame([vars(v) for v in self.variables]).set_index("name")

    def __str__(self) -> str:
        width = max([len(v.name) for v in self.variables] + [8])
        lines = [
            f"Convergence report ({self.n_chains} chain(s) x {self.n_draws} draw(s); "
            f"r_hat <= {self.rhat_max}, ESS >= {self.ess_min})",
            f"{'variable':<{width}}  {'r_hat':>7}  {'ess_bulk':>9}  {'ess_tail':>9}  status",
        ]
        for v in self.variables:
            lines.append(
                f"{v.name:<{width}}  {v.r_hat:>7.3f}  {v.ess_bulk:>9.1f}  {v.ess_tail:>9.1f}  "
                f"{'ok' if v.passed else 'FAIL'}"
            )
        lines.append(f"divergent transitions: {self.divergences}")
        lines.extend(self.notes + self.info)
        lines.append("PASSED" if self.passed else "NOT CONVERGED")
        return "\n".join(lines)

    _repr_pretty_ = lambda self, p, cycle: p.text(str(self))  # noqa: E731  (IPython display)


def _worst(ds, name, reducer):
    values = np.asarray(ds[name].values, dtype=float).ravel()
    values = values[np.isfinite(values)]
    return float(reducer(values)) if values.size else float("nan")


def _trace_report(trace: FitTrace, rhat_max, ess_min) -> ConvergenceReport:
    notes = []
    variables = []
    for name, values in trace.traces.items():
        values = np.asarray(values, dtype=float)
        finite = bool(np.isfinite(values).all()) and values.size > 0
        variables.append(VariableDiagnostics(name, float("nan"), float("nan"), float("nan"), finite))
        if not finite:
            notes.append(f"trace {name!r} is empty or not finite")
    for name, value in trace.estimates.items():
        if not np.isfinite(np.asarray(value, dtype=float)).all():
            notes.append(f"estimate {name!r} is not finite")
    if trace.converged is False:
        notes.append(f"{trace.method or 'optimiser'} stopped before reaching its tolerance")
    return ConvergenceReport(variables, rhat_max, ess_min, 0, 1, trace.n_iter, notes)


def check_convergence(data, rhat_max=1.01, ess_min=400, var_names=None) -> ConvergenceReport:
    """Check a fit's convergence: r̂, bulk and tail ESS and divergences, against thresholds.

    For an ArviZ posterior (``xarray.DataTree``, MCMC), each variable is judged on the worst
    element of its r̂, bulk ESS and tail ESS, and fails with non-finite draws; divergent
    transitions fail the report too, and are also counted per block when ``sample_stats``
    holds ``diverging_<block>`` flags (M3LAK: ``diverging_H``, ``diverging_omega``), in
    ``info``. ArviZ computes r̂ from 2 or more chains only: with one chain it is NaN and a
    remark in ``info`` says so.

    For a :class:`FitTrace` (deterministic fits), finite traces and the optimiser's own
    convergence flag are checked; r̂/ESS do not apply and show as NaN.

    Parameters
    ----------
    data : xarray.DataTree or FitTrace
        An ArviZ posterior with a ``posterior`` group, or the trace of a deterministic fit.
    rhat_max : float, default=1.01
        Largest r̂ that passes.
    ess_min : float, default=400
        Smallest bulk and tail ESS that pass.
    var_names : list of str, default=None
        Posterior variables to check; ``None`` means all (ignored for a ``FitTrace``).

    Returns
    -------
    report : ConvergenceReport
        Per-variable diagnostics and the verdict (``report.passed``, ``report.failed``);
        ``str(report)`` is a readable table.

    Raises
    ------
    TypeError
        If ``data`` is neither a ``FitTrace`` nor an ``xarray.DataTree`` with a ``posterior``
        group.
    ValueError
        If a name in ``var_names`` is not a posterior variable.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import check_convergence, to_inference_data
    >>> rng = np.random.default_rng(0)
    >>> idata = to_inference_data({"mu": rng.normal(size=(4, 500)), "theta": rng.normal(size=(4, 500, 3))})
    >>> report = check_convergence(idata)
    >>> report.passed, report.n_chains, report.n_draws
    (True, 4, 500)
    >>> check_convergence(idata, ess_min=5000).failed  # 2000 draws in all
    ['mu', 'theta']
    """
    if isinstance(data, FitTrace):
        return _trace_report(data, rhat_max, ess_min)
    if not isinstance(data, xr.DataTree) or "posterior" not in data.children:
        raise TypeError(
            "check_convergence needs an ArviZ posterior (xarray.DataTree) with a posterior group, "
            f"or a FitTrace; got {type(data).__name__}"
        )
    post = data["posterior"].to_dataset()
    names = list(post.data_vars) if var_names is None else list(var_names)
    missing = [n for n in names if n not in post.data_vars]
    if missing:
        raise ValueError(f"var_names {missing} are not in the posterior (have {list(post.data_vars)})")
    n_chains, n_draws = int(post.sizes["chain"]), int(post.sizes["draw"])
    notes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sub = post[names]
        rhat = az.rhat(sub)
        ess_bulk = az.ess(sub, method="bulk")
        ess_tail = az.ess(sub, method="tail")
    variables = []
    for name in names:
        if not np.isfinite(np.asarray(post[name].values, dtype=float)).all():
            notes.append(f"variable {name!r} has non-finite draws")
        r = _worst(rhat, name, np.max)
        eb = _worst(ess_bulk, name, np.min)
        et = _worst(ess_tail, name, np.min)
        ok = np.isfinite(r) and r <= rhat_max and eb >= ess_min and et >= ess_min
        variables.append(VariableDiagnostics(name, r, eb, et, bool(ok)))
    info = (
        ["single chain: ArviZ computes r_hat from >= 2 chains only (NaN here); run more chains"]
        if n_chains < 2
        else []
    )
    divergences = 0
    if "sample_stats" in data.children and "diverging" in data["sample_stats"].data_vars:
        stats = data["sample_stats"].to_dataset()
        divergences = int(np.asarray(stats["diverging"].values).sum())
        blocks = [name for name in stats.data_vars if name.startswith("diverging_")]
        if divergences and blocks:
            counts = [
                f"{b.removeprefix('diverging_')} {int(np.asarray(stats[b].values).sum())}" for b in blocks
            ]
            info.append("divergent transitions by block: " + ", ".join(counts))
    return ConvergenceReport(variables, rhat_max, ess_min, divergences, n_chains, n_draws, notes, info)
