"""ONORMA's and MONORMA's online pass (Algorithms 1-2) as compiled JAX, and the functions the
estimators call around it: learning rates, stream targets, the coefficient buffer, the
per-step errors and losses and the fit trace."""

from __future__ import annotations

import warnings
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..base import encode_labels, one_vs_rest_targets
from ..datasets import check_targets
from ..diagnostics import FitTrace
from .terms import _kern

__all__ = [
    "LOSSES",
    "SCHEDULES",
    "encode_stream_targets",
    "grow_buffer",
    "labels_from_scores",
    "learning_rates",
    "online_pass",
    "online_trace",
    "ovk_predict",
    "run_stream",
    "step_errors",
    "step_losses",
]


def _loss_grad(loss, f, y):
    """``∇_z ℓ(z, y)`` at ``z = f``: squared ``½||z - y||²``; Crammer–Singer multi-class hinge
    ``max(0, 1 - z_y + max_{r≠y} z_r)`` (``y`` one-hot); one-vs-rest hinge ``Σ_c max(0, 1 - y_c z_c)``
    (``y`` in ±1)."""
    if loss == "squared":
        return f - y
    if loss == "hinge":
        other = jnp.where(y > 0, -jnp.inf, f)
        r = jnp.argmax(other)
        active = (f @ y - other[r]) < 1.0
        return jnp.where(active, jax.nn.one_hot(r, f.shape[0], dtype=f.dtype) - y, 0.0)
    # ovr_hinge
    return jnp.where(y * f < 1.0, -y, 0.0)


@partial(jax.jit, static_argnames=("kfns", "cols", "groups", "n_groups", "loss", "adapt", "trunc", "block"))
def online_pass(
    Xbuf,
    A,
    times,
    t0,
    delta,
    gamma,
    TW,
    lam,
    r,
    Xc,
    Yc,
    etas,
    valid,
    *,
    kfns,
    cols,
    groups,
    n_groups,
    loss,
    adapt,
    trunc,
    block,
):
    """One compiled pass of Algorithm 1 (``adapt=False``) or Algorithm 2 (``adapt=True``) over a chunk.

    Audiffren & Kadri 2013. The chunk has ``n`` a multiple of ``block``; padded steps have
    ``eta = 0`` and ``valid = False`` and change nothing.

    Parameters
    ----------
    Xbuf : jax.Array of shape (cap, p)
        The input buffer.
    A : jax.Array of shape (cap, d)
        The coefficients ``α_{i,t0}``.
    times : jax.Array of shape (cap,)
        The 1-based stream index stored in each slot (0 = empty).
    t0 : int
        The number of steps done.
    delta : jax.Array of shape (m,)
        The kernel weights.
    gamma : jax.Array of shape (m,)
        The squared RKHS norms of the ``g^j`` (eq. 6).
    TW : jax.Array of shape (L, d, d)
        The weighted output matrices ``w_l T_l``.
    lam : float
        The regularisation weight ``λ``.
    r : float
        The exponent of the kernel-weight update (eq. 5).
    Xc : jax.Array of shape (n, p)
        The inputs of the chunk.
    Yc : jax.Array of shape (n, d)
        The targets of the chunk.
    etas : jax.Array of shape (n,)
        The learning rates of the chunk.
    valid : jax.Array of shape (n,), dtype=bool
        False on padded steps.
    kfns : tuple of callable
        The scalar kernel of each term (static).
    cols : tuple
        The column range of each term's view, or None for single-view inputs (static).
    groups : tuple of int
        The kernel each term belongs to (static).
    n_groups : int
        The number of kernels ``m`` (static).
    loss : {"squared", "hinge", "ovr_hinge"}
        The loss (static).
    adapt : bool
        Learn the kernel weights, Algorithm 2 (static).
    trunc : int or None
        None, or the budget ``s`` (then ``cap == s`` and ``block <= s``): a ring buffer (static).
    block : int
        The steps per block (static).

    Returns
    -------
    state : tuple of jax.Array
        The new ``(Xbuf, A, times, t0, delta, gamma)``.
    F : jax.Array of shape (n, d)
        The per-step predictions ``f_{t-1}(x_t)``.
    D : jax.Array of shape (n, m)
        The per-step kernel weights ``δ_t``.
    Gam : jax.Array of shape (n, m)
        The per-step squared norms ``γ_t``.
    """
    cap, d = A.shape
    n = Xc.shape[0]
    nb = n // block
    L = len(kfns)
    Gm = jnp.asarray(np.eye(n_groups)[list(groups)], dtype=A.dtype)  # (L, m) term -> kernel
    ks = jnp.arange(block)
    page = cap if (trunc is not None or cap <= 512 or cap % 512) else 512
    n_pages = cap // page

    def block_step(carry, blk):
        Xbuf, A, times, t0, delta, gamma = carry
        Xb, Yb, eb, vb = blk
        # Old coefficients' contribution to g^j(x) at every step of the block (matrix products),
        # page by page over the filled part of the buffer only (slots fill from 0 upwards).
        n_fill = jnp.minimum(n_pages, (t0 + page - 1) // page)

        def page_step(pg, acc):
            Xp = jax.lax.dynamic_slice_in_dim(Xbuf, pg * page, page)
            Ap = jax.lax.dynamic_slice_in_dim(A, pg * page, page)
            if trunc is not None:  # alive at time t-1 = t0 + k: index i > t0 + k - s (Algorithm 1, step 3)
                tp = jax.lax.dynamic_slice_in_dim(times, pg * page, page)
                mask = tp[None, :] > (t0 + ks)[:, None] - trunc
            out = []
            for term in range(L):
                Ko = _kern(kfns[term], cols[term], Xb, Xp)
                if trunc is not None:
                    Ko = jnp.where(mask, Ko, 0.0)
                out.append(Ko @ Ap)
            return acc + jnp.stack(out)

        kA = jax.lax.fori_loop(0, n_fill, page_step, jnp.zeros((L, block, d), A.dtype))  # (L, B, d)
        gold = jnp.einsum("lbd,lde,lj->bje", kA, TW, Gm)  # (B, m, d)
        kin = [_kern(kfns[term], cols[term], Xb, Xb) for term in range(L)]
        kin = jnp.stack(kin)  # (L, B, B)
        kdiag = jnp.diagonal(kin, axis1=1, axis2=2)  # (L, B)

        def step(c, inp):
            Ablk, cdec, delta, gamma = c
            k, y, eta, v, go = inp
            vin = jnp.einsum("lb,bd,lde->le", kin[:, k, :], Ablk, TW)  # in-block part, per term
            g = cdec * go + Gm.T @ vin  # g^j_{t-1}(x_t), (m, d)
            f = delta @ g  # f_{t-1}(x_t)
            alpha = -eta * _loss_grad(loss, f, y)  # new coefficient α_{t,t}
            dec = 1.0 - eta * lam  # decay of the old coefficients
            Ablk = (Ablk * dec).at[k].set(alpha)
            # eq. (6): ||g_t||² = (1-ηλ)² ||g_{t-1}||² + <K(x_t,x_t) α, α> + 2 (1-ηλ) <g_{t-1}(x_t), α>
            quad = Gm.T @ (kdiag[:, k] * jnp.einsum("d,lde,e->l", alpha, TW, alpha))
            gamma_new = dec**2 * gamma + quad + 2.0 * dec * (g @ alpha)
            gamma = jnp.where(v, gamma_new, gamma)
            if adapt:  # Algorithm 2, step 2.2 / eq. (5)
                z = jnp.maximum(delta**2 * gamma, 0.0)
                den = jnp.sum(z ** (r / (r + 1.0))) ** (1.0 / r)
                ok = v & (den > 0)
                delta = jnp.where(ok, z ** (1.0 / (r + 1.0)) / jnp.where(den > 0, den, 1.0), delta)
            return (Ablk, cdec * dec, delta, gamma), (f, delta, gamma)

        init = (jnp.zeros((block, d), A.dtype), jnp.ones((), A.dtype), delta, gamma)
        (Ablk, cdec, delta, gamma), outs = jax.lax.scan(step, init, (ks, Yb, eb, vb, gold))
        idx = jnp.where(vb, (t0 + ks) % cap, cap)  # padded steps write nowhere
        A = (A * cdec).at[idx].set(Ablk, mode="drop")
        Xbuf = Xbuf.at[idx].set(Xb, mode="drop")
        times = times.at[idx].set(t0 + ks + 1, mode="drop")
        t0 = t0 + jnp.sum(vb)
        return (Xbuf, A, times, t0, delta, gamma), outs

    xs = (
        Xc.reshape(nb, block, -1),
        Yc.reshape(nb, block, d),
        etas.reshape(nb, block),
        valid.reshape(nb, block),
    )
    state, (F, D, Gam) = jax.lax.scan(block_step, (Xbuf, A, times, t0, delta, gamma), xs)
    return state, F.reshape(n, d), D.reshape(n, -1), Gam.reshape(n, -1)


@partial(jax.jit, static_argnames=("kfns", "cols", "groups", "n_groups"))
def ovk_predict(Xbuf, A, TW, delta, Xq, *, kfns, cols, groups, n_groups):
    """Predict ``f(x) = Σ_j δ^j Σ_{l ∈ j} w_l k_l(x, X_buf) A T_l`` for the rows of ``Xq``.

    Parameters
    ----------
    Xbuf : jax.Array of shape (cap, p)
        The input buffer.
    A : jax.Array of shape (cap, d)
        The coefficients.
    TW : jax.Array of shape (L, d, d)
        The weighted output matrices ``w_l T_l``.
    delta : jax.Array of shape (m,)
        The kernel weights.
    Xq : jax.Array of shape (n, p)
        The query inputs.
    kfns : tuple of callable
        The scalar kernel of each term (static).
    cols : tuple
        The column range of each term's view, or None for single-view inputs (static).
    groups : tuple of int
        The kernel each term belongs to (static).
    n_groups : int
        The number of kernels ``m`` (static).

    Returns
    -------
    F : jax.Array of shape (n, d)
        The predictions.
    """
    out = jnp.zeros((Xq.shape[0], A.shape[1]), A.dtype)
    for term in range(len(kfns)):
        out = out + delta[groups[term]] * ((_kern(kfns[term], cols[term], Xq, Xbuf) @ A) @ TW[term])
    return out


def _predict_rows(Xbuf, A, TW, delta, Xq, static, chunk=2048):
    """Row-blocked prediction (bounded memory; one compile per chunk size)."""
    n = Xq.shape[0]
    size = min(chunk, 1 << max(0, (n - 1).bit_length()))
    outs = []
    for s in range(0, n, size):
        Xb = Xq[s : s + size]
        m = Xb.shape[0]
        if m < size:
            Xb = np.concatenate([Xb, np.zeros((size - m, Xq.shape[1]))])
        outs.append(np.asarray(ovk_predict(Xbuf, A, TW, delta, jnp.asarray(Xb), **static))[:m])
    return np.concatenate(outs)


def _next_pow2(n):
    return 1 << max(0, int(n - 1).bit_length())


def _check_targets(Y, n, name="Y"):
    Y = check_targets(Y, name)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] != n:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n} samples")
    return Y


#: The losses of the online pass: squared (vector-valued regression), Crammer–Singer
#: multi-class hinge and one-vs-rest hinge.
LOSSES = ("squared", "hinge", "ovr_hinge")
#: The named learning-rate schedules: ``η_t = η/√t`` (§5) and constant.
SCHEDULES = ("invsqrt", "constant")


def learning_rates(schedule, eta0, lam, t_start, n):
    """Learning rates ``η_t`` for the stream steps ``t = t_start + 1 .. t_start + n``.

    The rates must be finite, positive and keep ``η_t λ < 1`` (Algorithm 1's decay).

    Parameters
    ----------
    schedule : {"invsqrt", "constant"} or callable
        ``"invsqrt"``: ``η_t = eta0/√t``; ``"constant"``: ``η_t = eta0``; a callable of the
        step array returns one rate per step.
    eta0 : float
        The base rate of the named schedules.
    lam : float
        The regularisation weight ``λ``.
    t_start : int
        The number of stream steps done before.
    n : int
        The number of steps.

    Returns
    -------
    etas : ndarray of shape (n,)
        The rate of each step.

    Raises
    ------
    ValueError
        If a callable schedule does not return ``n`` rates, a rate is not finite and
        positive, or ``η_t λ >= 1``.
    """
    t = np.arange(t_start + 1, t_start + n + 1)
    if schedule == "invsqrt":
        eta = eta0 / np.sqrt(t)
    elif schedule == "constant":
        eta = np.full(n, float(eta0))
    else:
        eta = np.asarray(schedule(t), dtype=float)
        if eta.shape != (n,):
            raise ValueError(f"schedule(t) must return one rate per step (shape ({n},)), got {eta.shape}")
    if not np.all(np.isfinite(eta)) or np.any(eta <= 0):
        raise ValueError("the learning-rate schedule must give finite rates eta_t > 0")
    if np.any(eta * lam >= 1.0):
        raise ValueError(
            f"eta_t * lam must be < 1 (Algorithm 1); got max {float(np.max(eta * lam)):.3g} — lower eta0 or lam"
        )
    return eta


def encode_stream_targets(loss, y, n, classes=None):
    """Targets of ``n`` stream steps for ``loss``.

    Parameters
    ----------
    loss : {"squared", "hinge", "ovr_hinge"}
        The loss of the online pass.
    y : array-like of shape (n,) or (n, d)
        Real targets (``"squared"``) or 1-D labels (the hinge losses).
    n : int
        The number of stream steps.
    classes : array-like or None, default=None
        For the hinge losses, the sorted unique labels to code against; None: those of ``y``.
        Unused with ``"squared"``.

    Returns
    -------
    Y : ndarray of shape (n, d)
        The real targets, or the labels coded as one-hot (``"hinge"``) or ±1 one-vs-rest
        (``"ovr_hinge"``) rows.
    classes : ndarray or None
        The classes coded against; None with ``"squared"``.

    Raises
    ------
    ValueError
        If ``y`` does not have ``n`` rows (1-D labels for the hinge losses), contains NaN or
        inf, or holds a label not in ``classes``.
    """
    if loss == "squared":
        return _check_targets(y, n), None
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be 1-D labels of length {n} for loss={loss!r}, got shape {y.shape}")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or inf")
    classes, _ = encode_labels(y if classes is None else np.asarray(classes))
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    if not np.all(classes[pos] == y):
        bad = y[classes[pos] != y][0]
        raise ValueError(
            f"y contains the label {bad!r} not in classes_ {list(classes)}; pass classes= on the first partial_fit"
        )
    Y = np.eye(len(classes))[pos] if loss == "hinge" else one_vs_rest_targets(pos, len(classes))
    return Y, classes


def grow_buffer(X_buffer, coef, support_times, n_needed):
    """Grow the coefficient ring buffer to hold ``n_needed`` slots.

    The buffer is padded with empty slots to the next power of two at or above ``n_needed``
    when it holds fewer (an untruncated stream keeps every step), else returned as it is.

    Parameters
    ----------
    X_buffer : ndarray of shape (cap, p)
        The inputs of the buffer.
    coef : ndarray of shape (cap, d)
        The coefficients.
    support_times : ndarray of shape (cap,)
        The 1-based stream index stored in each slot (0 = empty).
    n_needed : int
        The number of slots needed.

    Returns
    -------
    X_buffer : ndarray of shape (new_cap, p)
        The inputs, padded with zeros.
    coef : ndarray of shape (new_cap, d)
        The coefficients, padded with zeros.
    support_times : ndarray of shape (new_cap,)
        The stream indices, padded with zeros (empty slots).
    """
    if n_needed <= coef.shape[0]:
        return X_buffer, coef, support_times
    grow = _next_pow2(n_needed) - coef.shape[0]
    return (
        np.pad(X_buffer, ((0, grow), (0, 0))),
        np.pad(coef, ((0, grow), (0, 0))),
        np.pad(support_times, (0, grow)),
    )


def run_stream(state, TW, lam, r, X, Y, etas, *, loss, adapt, truncation, block_size, static, owner):
    """Run one call of :func:`online_pass` over ``n`` stream steps.

    The steps are padded to whole blocks of ``block_size`` (at most ``truncation``).

    Parameters
    ----------
    state : tuple of array-like
        The buffer, coefficients, support times, step count, kernel weights δ and norms γ.
    TW : array-like of shape (L, d, d)
        The weighted output matrices ``w_l T_l``.
    lam : float
        The regularisation weight ``λ``.
    r : float
        The exponent of MONORMA's kernel-weight update (eq. 5).
    X : ndarray of shape (n, p)
        The inputs of the steps.
    Y : ndarray of shape (n, d)
        The targets of the steps.
    etas : ndarray of shape (n,)
        The learning rates of the steps.
    loss : {"squared", "hinge", "ovr_hinge"}
        The loss.
    adapt : bool
        Learn the kernel weights (Algorithm 2, MONORMA).
    truncation : int or None
        The budget ``s`` of the ring buffer; None: no truncation.
    block_size : int
        The stream steps per compiled block.
    static : dict
        The static arguments of :func:`online_pass` (``kfns``, ``cols``, ``groups``,
        ``n_groups``).
    owner : str
        The estimator's name, for the messages.

    Returns
    -------
    state : tuple of ndarray
        The new state (NumPy).
    F : ndarray of shape (n, d)
        The online predictions ``f_{t-1}(x_t)``.
    kernel_weights : ndarray of shape (n, m)
        The kernel weights δ after each step.
    norms : ndarray of shape (n, m)
        The squared RKHS norms γ after each step.

    Raises
    ------
    ValueError
        If a prediction or coefficient is not finite (the pass diverged).

    Warns
    -----
    RuntimeWarning
        If the predictions exceed 1e6 times the targets (steps too large).
    """
    n = X.shape[0]
    block = int(min(block_size, truncation or block_size))
    npad = -n % block
    padded = [np.concatenate([a, np.zeros((npad,) + a.shape[1:])]) for a in (X, Y, etas)]
    valid = np.arange(n + npad) < n
    new_state, F, D, Gam = online_pass(
        *(jnp.asarray(s) for s in state[:3]),
        jnp.asarray(state[3], dtype=jnp.int64),
        *(jnp.asarray(s) for s in state[4:]),
        jnp.asarray(TW),
        float(lam),
        float(r),
        *(jnp.asarray(a) for a in padded),
        jnp.asarray(valid),
        loss=loss,
        adapt=adapt,
        trunc=None if truncation is None else int(truncation),
        block=block,
        **static,
    )
    F = np.asarray(F)[:n]
    bad = ~np.isfinite(F).all(axis=1)
    if bad.any() or not np.isfinite(np.asarray(new_state[1])).all():
        step = int(state[3]) + (int(np.argmax(bad)) + 1 if bad.any() else n)
        raise ValueError(
            f"{owner} diverged (non-finite prediction at stream step {step}); "
            "lower eta0 or rescale the inputs/kernel so that eta_t * ||K(x, x)|| < 2"
        )
    if np.abs(F).max(initial=0.0) > 1e6 * max(1.0, np.abs(Y).max(initial=0.0)):
        warnings.warn(
            f"{owner}: online predictions reached {np.abs(F).max():.3g}, over 1e6 times the "
            "targets — the steps are too large (eta_t * ||K(x, x)|| >= 2); lower eta0 or rescale the inputs",
            RuntimeWarning,
            stacklevel=3,
        )
    return tuple(np.asarray(s) for s in new_state), F, np.asarray(D)[:n], np.asarray(Gam)[:n]


def labels_from_scores(F):
    """Class indices of the rows of ``F``: ``F > 0`` for one output, else the argmax.

    Parameters
    ----------
    F : ndarray of shape (n, d)
        The scores.

    Returns
    -------
    labels : ndarray of shape (n,)
        The class index of each row.
    """
    if F.shape[1] == 1:
        return (F[:, 0] > 0).astype(int)
    return np.argmax(F, axis=1)


def step_errors(loss, F, Y):
    """Per-step error of the online predictions ``F`` against ``Y``.

    Parameters
    ----------
    loss : {"squared", "hinge", "ovr_hinge"}
        The loss.
    F : ndarray of shape (n, d)
        The online predictions.
    Y : ndarray of shape (n, d)
        The targets.

    Returns
    -------
    errors : ndarray of shape (n,)
        ``||f - y||²``, or a mistake (0/1) for the hinge losses.
    """
    if loss == "squared":
        return np.sum((F - Y) ** 2, axis=1)
    return (labels_from_scores(F) != labels_from_scores(Y)).astype(float)


def step_losses(loss, F, Y):
    """Per-step loss ``ℓ(f_{t-1}(x_t), y_t)`` of ``loss``.

    Squared ``½||z - y||²``; Crammer–Singer multi-class hinge ``max(0, 1 - z_y + max_{r≠y} z_r)``
    (``y`` one-hot); one-vs-rest hinge ``Σ_c max(0, 1 - y_c z_c)`` (``y`` in ±1); see
    :func:`_loss_grad`.

    Parameters
    ----------
    loss : {"squared", "hinge", "ovr_hinge"}
        The loss.
    F : ndarray of shape (n, d)
        The online predictions.
    Y : ndarray of shape (n, d)
        The targets.

    Returns
    -------
    losses : ndarray of shape (n,)
        The loss of each step.
    """
    if loss == "squared":
        return 0.5 * np.sum((F - Y) ** 2, axis=1)
    if loss == "hinge":
        zy = np.sum(F * Y, axis=1)
        other = np.max(np.where(Y > 0, -np.inf, F), axis=1)
        return np.maximum(0.0, 1.0 - zy + other)
    return np.sum(np.maximum(0.0, 1.0 - Y * F), axis=1)


def online_trace(
    losses, errors, rkhs_norms_sq, lam, coef, support_times, method, kernel_weights=None, delta=None
):
    """The :class:`~bayesmv.diagnostics.FitTrace` of a stream.

    The running regularised risk ``(1/t) Σ_s [ℓ_s + λ/2 Σ_j ||g_{s-1}^j||²]``, the losses, the
    running error and the norms; with ``kernel_weights`` (MONORMA) the weight of each kernel
    per step and ``delta`` as the estimate.

    Parameters
    ----------
    losses : ndarray of shape (n,)
        The loss of each step.
    errors : ndarray of shape (n,)
        The error of each step.
    rkhs_norms_sq : ndarray of shape (n, m)
        The squared RKHS norms of the ``g^j`` after each step.
    lam : float
        The regularisation weight ``λ``.
    coef : ndarray of shape (cap, d)
        The coefficient buffer.
    support_times : ndarray of shape (cap,)
        The stream index of each slot (0 = empty); the filled slots' coefficients are the
        estimate.
    method : str
        The method name recorded.
    kernel_weights : ndarray of shape (n, m) or None, default=None
        The kernel weights after each step (MONORMA).
    delta : ndarray of shape (m,) or None, default=None
        The final kernel weights, recorded as the estimate with ``kernel_weights``.

    Returns
    -------
    trace : FitTrace
        The trace of the stream.
    """
    steps = np.arange(1, len(losses) + 1)
    norm_sq = rkhs_norms_sq.sum(axis=1)
    prev_norm = np.concatenate([[0.0], norm_sq[:-1]])
    traces = {
        "objective": np.cumsum(losses + 0.5 * lam * prev_norm) / steps,
        "loss": losses,
        "cumulative_error": np.cumsum(errors) / steps,
        "rkhs_norm_sq": norm_sq,
    }
    estimates = {"coef": coef[support_times > 0]}
    if kernel_weights is not None:
        estimates["kernel_weights"] = delta
        traces.update({f"kernel_weight_{j}": kernel_weights[:, j] for j in range(kernel_weights.shape[1])})
    return FitTrace(estimates=estimates, traces=traces, converged=None, method=method)
