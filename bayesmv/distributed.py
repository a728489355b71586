"""Scale-out helpers on JAX's own SPMD machinery (``jax.sharding``, ``jax.distributed``).

Nothing here is a home-made distributed engine: a :class:`jax.sharding.Mesh` over the global
device list (all processes), :class:`~jax.sharding.NamedSharding` for the sample axis ``N``, and
XLA inserts the collectives for every cross-sample reduction of a jitted computation.

* :func:`initialize` — ``jax.distributed.initialize`` (multi-host; a no-op for one process
  without a coordinator), returning a :class:`ProcessInfo`.
* :func:`data_mesh` — a 1-D mesh (axis ``"data"``) over ``jax.devices()`` (global, every host).
* :func:`shard_rows` — places a host array as a global array sharded along its first axis,
  padded to a multiple of the mesh size. Each process materialises only the rows of its own
  (addressable) devices (``jax.make_array_from_callback``), so the same script runs unchanged on
  one or many hosts; the host array may be a ``numpy.memmap``.
* :func:`constrain_rows` / :func:`constrain_replicated` — ``with_sharding_constraint`` helpers
  used inside jitted code.
* :func:`per_device_bytes` — live bytes per device of a pytree of arrays.

Random numbers: with ``jax_threefry_partitionable`` (JAX's default since 0.5) a draw of shape
``(N, d)`` is a function of the element index only, so sharded and unsharded runs draw the same
numbers, and the first ``N`` rows of a padded draw equal the unpadded draw.

Forced host devices (``--xla_force_host_platform_device_count``) share the host's cores: on one
machine sharding divides the memory per device, not the time. The jaxlib 0.10 CPU deadlock
between concurrent batched LAPACK calls (see ``bayesmv/__init__.py``) is avoided by the XLA flag
set at import and by the sampler's unbatched triangular solves; the 4-forced-device tests run
the default DP spectral prior.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

__all__ = [
    "DATA_AXIS",
    "ProcessInfo",
    "check_partitionable_rng",
    "constrain_replicated",
    "constrain_rows",
    "data_mesh",
    "initialize",
    "mesh_size",
    "padded_length",
    "per_device_bytes",
    "process_info",
    "replicated_sharding",
    "resolve_mesh",
    "row_sharding",
    "shard_rows",
]

#: Name of the mesh axis along which the sample rows are sharded.
DATA_AXIS = "data"


class ProcessInfo(NamedTuple):
    process_index: int
    process_count: int
    local_device_count: int
    device_count: int
    platform: str


def process_info() -> ProcessInfo:
    """Where this process stands in the (possibly multi-host) JAX runtime."""
    return ProcessInfo(
        jax.process_index(),
        jax.process_count(),
        jax.local_device_count(),
        jax.device_count(),
        jax.devices()[0].platform,
    )


def initialize(
    coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, **kwargs
) -> ProcessInfo:
    """Join a multi-host JAX runtime (``jax.distributed.initialize``) and return :class:`ProcessInfo`.

    Call it first, before any JAX computation. With all arguments ``None`` on a cluster that JAX
    can auto-detect (SLURM, Open MPI, Cloud TPU, ...) the values come from the environment; with
    all ``None`` and nothing to detect, a single process runs without a coordinator. A
    single-host run may also pass ``coordinator_address="127.0.0.1:PORT", num_processes=1,
    process_id=0``. Calling it again after a successful initialisation only returns the info.
    Extra keyword arguments go to ``jax.distributed.initialize``.
    """
    from jax._src import distributed as _dist  # the only place the runtime records its state

    if getattr(_dist.global_state, "client", None) is not None:
        return process_info()
    if num_processes is not None and (isinstance(num_processes, bool) or int(num_processes) < 1):
        raise ValueError(f"num_processes must be a positive integer; got {num_processes!r}")
    if process_id is not None and num_processes is not None and not 0 <= int(process_id) < int(num_processes):
        raise ValueError(f"process_id must lie in [0, num_processes={num_processes}); got {process_id!r}")
    explicit = any(v is not None for v in (coordinator_address, num_processes, process_id))
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator_address,
            num_processes=num_processes,
            process_id=process_id,
            local_device_ids=local_device_ids,
            **kwargs,
        )
    except ValueError as err:
        # nothing given and no cluster detected: plain single-process run
        if explicit or "coordinator_address" not in str(err):
            raise
    except RuntimeError as err:
        if "should only be called once" not in str(err) and "already" not in str(err):
            raise
    return process_info()


def data_mesh(devices=None, axis_name: str = DATA_AXIS) -> Mesh:
    """A 1-D mesh over ``devices`` (default: ``jax.devices()``, every device of every process).

    The axis is ``AxisType.Auto``: XLA's sharding propagation places the intermediates and
    inserts the collectives (all-reduces for the sums over samples)."""
    if devices is None:
        return jax.make_mesh(
            (jax.device_count(),), (axis_name,), axis_types=(AxisType.Auto,), devices=jax.devices()
        )
    devices = list(devices)
    if not devices:
        raise ValueError("devices must not be empty")
    return Mesh(np.asarray(devices, dtype=object), (axis_name,), axis_types=(AxisType.Auto,))


def resolve_mesh(mesh=None, shard_data=False):
    """``mesh`` if given (a :class:`Mesh`), else :func:`data_mesh` when ``shard_data`` is true
    (``True``: every device; an int ``k``: the first ``k`` devices), else ``None``."""
    if mesh is not None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh must be a jax.sharding.Mesh; got {type(mesh).__name__}")
        return mesh
    if shard_data is None or shard_data is False:
        return None
    if shard_data is True:
        return data_mesh()
    if isinstance(shard_data, (int, np.integer)) and not isinstance(shard_data, bool):
        k = int(shard_data)
        if not 1 <= k <= jax.device_count():
            raise ValueError(f"shard_data={k} devices requested; {jax.device_count()} available")
        return data_mesh(jax.devices()[:k])
    raise ValueError(f"shard_data must be True, False or a number of devices; got {shard_data!r}")


def mesh_size(mesh: Mesh) -> int:
    """Number of devices the sample axis is split over (product of the mesh axes)."""
    return int(math.prod(mesh.shape.values()))


def padded_length(n: int, mesh: Mesh) -> int:
    """``n`` rounded up to a multiple of the mesh size."""
    k = mesh_size(mesh)
    return -(-int(n) // k) * k


def row_sharding(mesh: Mesh) -> NamedSharding:
    """Shard the first axis over all mesh axes; the other axes are replicated."""
    return NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names)))


def replicated_sharding(mesh: Mesh) -> NamedSharding:
    """The sharding that holds a full copy of an array on every device of ``mesh``."""
    return NamedSharding(mesh, PartitionSpec())


def constrain_rows(x, mesh):
    """``with_sharding_constraint`` of every array leaf of ``x`` to row sharding (no-op for
    ``mesh=None``)."""
    if mesh is None:
        return x
    return jax.lax.with_sharding_constraint(x, row_sharding(mesh))


def constrain_replicated(x, mesh):
    """``x`` constrained to be replicated on every device of ``mesh`` inside a jitted function
    (``x`` itself when ``mesh`` is None).
    """
    if mesh is None:
        return x
    return jax.lax.with_sharding_constraint(x, replicated_sharding(mesh))


def shard_rows(x, mesh: Mesh, n_padded=None, fill=0):
    """Global array with the rows of host array ``x`` sharded over ``mesh``.

    Rows ``len(x) .. n_padded - 1`` are ``fill``. Every process calls this with the same ``x``
    (e.g. a ``numpy.memmap`` of the same file); each materialises only the row blocks of its
    own devices.
    """
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x
    n = x.shape[0]
    n_padded = padded_length(n, mesh) if n_padded is None else int(n_padded)
    if n_padded < n or n_padded % mesh_size(mesh):
        raise ValueError(
            f"n_padded={n_padded} must be >= {n} and a multiple of the mesh size {mesh_size(mesh)}"
        )
    shape = (n_padded,) + x.shape[1:]

    def block(index):
        rows = index[0]
        start, stop, _ = rows.indices(n_padded)
        out = np.full((stop - start,) + x.shape[1:], fill, dtype=x.dtype)
        hi = min(stop, n)
        if hi > start:
            out[: hi - start] = x[start:hi]
        return out

    return jax.make_array_from_callback(shape, row_sharding(mesh), block)


def check_partitionable_rng(stacklevel=3) -> bool:
    """Warn (and return False) when ``jax_threefry_partitionable`` is off: sharded draws are then
    still valid but no longer identical to the unsharded run."""
    on = bool(jax.config.jax_threefry_partitionable)
    if not on:
        warnings.warn(
            "jax_threefry_partitionable is off: a sharded run draws different random numbers "
            "than the unsharded one (set jax.config.update('jax_threefry_partitionable', True))",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
    return on


def per_device_bytes(tree) -> dict:
    """Bytes held on each addressable device by the array leaves of ``tree`` (shards counted where
    they live; replicated arrays count once per device)."""
    out = {}
    for leaf in jax.tree.leaves(tree):
        if isinstance(leaf, jax.Array):
            for s in leaf.addressable_shards:
                out[s.device] = out.get(s.device, 0) + s.data.nbytes
    return out
