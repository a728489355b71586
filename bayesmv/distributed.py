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
* :func:`check_uncached_collectives` — refuses a CPU mesh over several processes while JAX's
  persistent compilation cache is on (see below); :func:`initialize` turns the cache off there.

Random numbers: with ``jax_threefry_partitionable`` (JAX's default since 0.5) a draw of shape
``(N, d)`` is a function of the element index only, so sharded and unsharded runs draw the same
numbers, and the first ``N`` rows of a padded draw equal the unpadded draw.

Forced host devices (``--xla_force_host_platform_device_count``) share the host's cores: on one
machine sharding divides the memory per device, not the time. The jaxlib 0.10 CPU deadlock
between concurrent batched LAPACK calls (see ``bayesmv/__init__.py``) is avoided by the XLA flag
set at import and by the sampler's unbatched triangular solves; the 4-forced-device tests run
the DP spectral prior.

JAX's persistent compilation cache and several processes on CPU: an XLA:CPU program whose
collectives run across processes (through gloo) deadlocks when the processes load it from the
cache (JAX 0.12, two processes of one CPU device each: a jitted loop of all-reduces, as in the
M3LAK sweep, hangs in every run that reads it and passes in every run that compiles it).
:func:`initialize` therefore turns the cache off in a multi-process CPU run, and
:func:`check_uncached_collectives` raises where a data-sharded run across processes would read
it. The programs of chains spread over processes without a data mesh have no cross-process
collectives.
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
    "check_uncached_collectives",
    "compilation_cache_on",
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
    """Where this process stands in the (possibly multi-host) JAX runtime.

    Returned by :func:`process_info` and :func:`initialize`.

    Parameters
    ----------
    process_index : int
        Index of this process, in ``[0, process_count)``.
    process_count : int
        Number of processes.
    local_device_count : int
        Number of devices of this process.
    device_count : int
        Number of devices of all processes.
    platform : str
        Platform of the first device (``"cpu"``, ``"gpu"``, ``"tpu"``).
    """

    process_index: int
    process_count: int
    local_device_count: int
    device_count: int
    platform: str


def process_info() -> ProcessInfo:
    """Where this process stands in the (possibly multi-host) JAX runtime.

    Returns
    -------
    info : ProcessInfo
        The named tuple ``(process_index, process_count, local_device_count, device_count,
        platform)``: this process's index, the number of processes, the devices of this
        process and of all processes, and the platform of the first device (``"cpu"``,
        ``"gpu"``, ``"tpu"``).

    Examples
    --------
    >>> from bayesmv.distributed import process_info
    >>> info = process_info()
    >>> info.process_index, info.process_count  # a single-process run
    (0, 1)
    """
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
    """Join a multi-host JAX runtime (``jax.distributed.initialize``) and return where this process stands.

    Call it first, before any JAX computation. With all arguments ``None`` on a cluster that JAX
    can auto-detect (SLURM, Open MPI, Cloud TPU, ...) the values come from the environment; with
    all ``None`` and nothing to detect, a single process runs without a coordinator. A
    single-host run may also pass ``coordinator_address="127.0.0.1:PORT", num_processes=1,
    process_id=0``. Calling it again after a successful initialisation only returns the info.
    In a run of several processes on CPU it turns JAX's persistent compilation cache off: XLA:CPU
    programs with collectives across processes deadlock when loaded from it (module docstring).

    Parameters
    ----------
    coordinator_address : str, default=None
        ``"host:port"`` of the coordinator (process 0); ``None``: auto-detected.
    num_processes : int, default=None
        Number of processes, >= 1; ``None``: auto-detected.
    process_id : int, default=None
        Index of this process, in ``[0, num_processes)``; ``None``: auto-detected.
    local_device_ids : int or list of int, default=None
        The local devices this process uses; ``None``: all of them.
    **kwargs
        Extra keyword arguments of ``jax.distributed.initialize``.

    Returns
    -------
    info : ProcessInfo
        This process's place in the runtime, as :func:`process_info` returns it.

    Raises
    ------
    ValueError
        If ``num_processes`` is not a positive integer or ``process_id`` is outside
        ``[0, num_processes)``, or if ``jax.distributed.initialize`` fails with explicit
        arguments.
    RuntimeError
        If ``jax.distributed.initialize`` fails other than by having been called before.

    Warns
    -----
    RuntimeWarning
        When it turns the persistent compilation cache off (several processes, CPU, the cache on).
    """
    from jax._src import distributed as _dist  # the only place the runtime records its state

    if getattr(_dist.global_state, "client", None) is not None:
        return _without_cross_process_cache(process_info())
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
    return _without_cross_process_cache(process_info())


def compilation_cache_on() -> bool:
    """Whether JAX's persistent compilation cache is on: enabled, with a directory.

    Returns
    -------
    on : bool
        ``jax_enable_compilation_cache`` is true and ``jax_compilation_cache_dir`` is set.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import compilation_cache_on
    >>> compilation_cache_on() == bool(jax.config.jax_compilation_cache_dir)  # enabled by default
    True
    """
    return bool(jax.config.jax_enable_compilation_cache and jax.config.jax_compilation_cache_dir)


def _without_cross_process_cache(info: ProcessInfo) -> ProcessInfo:
    """Turn JAX's persistent compilation cache off in a multi-process CPU run (warning once):
    XLA:CPU programs with cross-process collectives deadlock when loaded from it (module
    docstring). Returns ``info``."""
    if info.process_count > 1 and info.platform == "cpu" and compilation_cache_on():
        from jax.experimental.compilation_cache import compilation_cache

        jax.config.update("jax_enable_compilation_cache", False)
        compilation_cache.reset_cache()  # JAX decides once whether to use the cache
        warnings.warn(
            "JAX's persistent compilation cache is turned off in this process: XLA:CPU programs "
            "with collectives across processes deadlock when loaded from it",
            RuntimeWarning,
            stacklevel=3,
        )
    return info


def check_uncached_collectives(mesh) -> None:
    """Raise where a data-sharded run on ``mesh`` would read programs with cross-process
    collectives from JAX's persistent compilation cache on CPU, where they deadlock (see the
    module docstring); :func:`initialize` turns the cache off in such a run.

    Parameters
    ----------
    mesh : jax.sharding.Mesh or None
        The data mesh of the run; ``None`` (unsharded) passes.

    Raises
    ------
    RuntimeError
        If ``mesh`` spans CPU devices of several processes while the cache is on.

    Examples
    --------
    >>> from bayesmv.distributed import check_uncached_collectives, data_mesh
    >>> check_uncached_collectives(data_mesh())  # one process: nothing to check
    """
    if mesh is None:
        return
    devices = list(mesh.devices.flat)
    if (
        len({d.process_index for d in devices}) > 1
        and devices[0].platform == "cpu"
        and compilation_cache_on()
    ):
        raise RuntimeError(
            "a data-sharded run across processes on CPU cannot use JAX's persistent compilation "
            "cache: XLA:CPU programs with collectives across processes deadlock when loaded from "
            "it. Start the processes with bayesmv.distributed.initialize (which turns the cache "
            'off), or call jax.config.update("jax_enable_compilation_cache", False) before the '
            "first compile"
        )


def data_mesh(devices=None, axis_name: str = DATA_AXIS) -> Mesh:
    """A 1-D device mesh (axis ``"data"`` by default) for sharding the sample axis.

    The axis is ``AxisType.Auto``: XLA's sharding propagation places the intermediates and
    inserts the collectives (all-reduces for the sums over samples).

    Parameters
    ----------
    devices : list of jax.Device, default=None
        The devices of the mesh; ``None`` means ``jax.devices()``, every device of every
        process.
    axis_name : str, default="data"
        Name of the mesh axis (``DATA_AXIS``).

    Returns
    -------
    mesh : jax.sharding.Mesh
        The 1-D mesh.

    Raises
    ------
    ValueError
        If ``devices`` is empty.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh
    >>> mesh = data_mesh(jax.devices()[:1])
    >>> mesh.axis_names, mesh.devices.shape
    (('data',), (1,))
    """
    if devices is None:
        return jax.make_mesh(
            (jax.device_count(),), (axis_name,), axis_types=(AxisType.Auto,), devices=jax.devices()
        )
    devices = list(devices)
    if not devices:
        raise ValueError("devices must not be empty")
    return Mesh(np.asarray(devices, dtype=object), (axis_name,), axis_types=(AxisType.Auto,))


def resolve_mesh(mesh=None, shard_data=False):
    """The mesh an estimator shards its data over, from its ``mesh`` and ``shard_data`` settings.

    ``mesh`` if given, else :func:`data_mesh` when ``shard_data`` is true (``True``: every
    device; an int ``k``: the first ``k`` devices), else ``None`` (no sharding).

    Parameters
    ----------
    mesh : jax.sharding.Mesh, default=None
        An explicit mesh; it takes precedence over ``shard_data``.
    shard_data : bool or int, default=False
        ``True``: every device; an int ``k``: the first ``k`` devices; ``False`` or ``None``:
        no sharding.

    Returns
    -------
    mesh : jax.sharding.Mesh or None
        The mesh, or ``None`` for an unsharded run.

    Raises
    ------
    TypeError
        If ``mesh`` is not a ``jax.sharding.Mesh``.
    ValueError
        If ``shard_data`` is an int outside ``[1, jax.device_count()]`` or is neither a bool
        nor an int.

    Examples
    --------
    >>> from bayesmv.distributed import mesh_size, resolve_mesh
    >>> resolve_mesh() is None
    True
    >>> mesh_size(resolve_mesh(shard_data=1))
    1
    """
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
    """Number of devices the sample axis is split over (the product of the mesh axes).

    Parameters
    ----------
    mesh : jax.sharding.Mesh
        The mesh.

    Returns
    -------
    n_devices : int
        The product of the mesh's axis sizes.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, mesh_size
    >>> mesh_size(data_mesh(jax.devices()[:1]))
    1
    """
    return int(math.prod(mesh.shape.values()))


def padded_length(n: int, mesh: Mesh) -> int:
    """``n`` rounded up to a multiple of the mesh size.

    Parameters
    ----------
    n : int
        Number of rows.
    mesh : jax.sharding.Mesh
        The mesh the rows are sharded over.

    Returns
    -------
    n_padded : int
        The smallest multiple of :func:`mesh_size` that is ``>= n``.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, padded_length
    >>> padded_length(5, data_mesh(jax.devices()[:1]))
    5
    """
    k = mesh_size(mesh)
    return -(-int(n) // k) * k


def row_sharding(mesh: Mesh) -> NamedSharding:
    """Sharding of the first axis over all mesh axes; the other axes are replicated.

    Parameters
    ----------
    mesh : jax.sharding.Mesh
        The mesh.

    Returns
    -------
    sharding : jax.sharding.NamedSharding
        The row sharding.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, row_sharding
    >>> row_sharding(data_mesh(jax.devices()[:1])).shard_shape((4, 2))  # one device: all rows
    (4, 2)
    """
    return NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names)))


def replicated_sharding(mesh: Mesh) -> NamedSharding:
    """The sharding that holds a full copy of an array on every device of ``mesh``.

    Parameters
    ----------
    mesh : jax.sharding.Mesh
        The mesh.

    Returns
    -------
    sharding : jax.sharding.NamedSharding
        The replicated sharding.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, replicated_sharding
    >>> replicated_sharding(data_mesh(jax.devices()[:1])).is_fully_replicated
    True
    """
    return NamedSharding(mesh, PartitionSpec())


def constrain_rows(x, mesh):
    """Constrain every array leaf of ``x`` to row sharding inside a jitted function.

    ``jax.lax.with_sharding_constraint`` with :func:`row_sharding`; a no-op for
    ``mesh=None``.

    Parameters
    ----------
    x : jax.Array or pytree of jax.Array
        The value to constrain.
    mesh : jax.sharding.Mesh or None
        The mesh; ``None`` returns ``x`` unchanged.

    Returns
    -------
    x : jax.Array or pytree of jax.Array
        ``x``, sharded along its first axis over ``mesh``.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, constrain_rows
    >>> mesh = data_mesh(jax.devices()[:1])
    >>> jax.jit(lambda a: constrain_rows(2.0 * a, mesh))(jax.numpy.ones((4, 2))).shape
    (4, 2)
    """
    if mesh is None:
        return x
    return jax.lax.with_sharding_constraint(x, row_sharding(mesh))


def constrain_replicated(x, mesh):
    """Constrain ``x`` to be replicated on every device of ``mesh`` inside a jitted function.

    ``jax.lax.with_sharding_constraint`` with :func:`replicated_sharding`; ``x`` itself when
    ``mesh`` is None.

    Parameters
    ----------
    x : jax.Array or pytree of jax.Array
        The value to constrain.
    mesh : jax.sharding.Mesh or None
        The mesh; ``None`` returns ``x`` unchanged.

    Returns
    -------
    x : jax.Array or pytree of jax.Array
        ``x``, replicated on every device of ``mesh``.

    Examples
    --------
    >>> import jax
    >>> from bayesmv.distributed import data_mesh, constrain_replicated
    >>> mesh = data_mesh(jax.devices()[:1])
    >>> jax.jit(lambda a: constrain_replicated(a.sum(0), mesh))(jax.numpy.ones((4, 2)))
    Array([4., 4.], dtype=float64)
    """
    if mesh is None:
        return x
    return jax.lax.with_sharding_constraint(x, replicated_sharding(mesh))


def shard_rows(x, mesh: Mesh, n_padded=None, fill=0):
    """Global array with the rows of a host array ``x`` sharded over ``mesh``.

    The rows are padded to ``n_padded``: rows ``len(x) .. n_padded - 1`` are ``fill``. Every
    process calls this with the same ``x`` (e.g. a ``numpy.memmap`` of the same file); each
    materialises only the row blocks of its own (addressable) devices
    (``jax.make_array_from_callback``), so the same script runs on one or many hosts.

    Parameters
    ----------
    x : array-like of shape (n, ...)
        The host array, e.g. a ``numpy.ndarray`` or ``numpy.memmap``.
    mesh : jax.sharding.Mesh
        The mesh to shard the rows over.
    n_padded : int, default=None
        Number of rows of the result, a multiple of the mesh size and ``>= n``; ``None``
        means :func:`padded_length` of ``n``.
    fill : scalar, default=0
        Value of the padding rows.

    Returns
    -------
    x_sharded : jax.Array of shape (n_padded, ...)
        The global array, with :func:`row_sharding`.

    Raises
    ------
    ValueError
        If ``n_padded`` is smaller than ``n`` or not a multiple of the mesh size.

    Examples
    --------
    >>> import jax
    >>> import numpy as np
    >>> from bayesmv.distributed import data_mesh, shard_rows
    >>> x = shard_rows(np.ones((5, 2)), data_mesh(jax.devices()[:1]), n_padded=6)
    >>> x.shape, np.asarray(x)[-1].tolist()
    ((6, 2), [0.0, 0.0])
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
    """Check that sharded random draws equal the unsharded run's (``jax_threefry_partitionable``).

    With ``jax_threefry_partitionable`` on, a draw of shape ``(N, d)`` is a function of the
    element index only, so sharded and unsharded runs draw the same numbers. When it is off,
    sharded draws are still valid but no longer identical to the unsharded run: this warns
    and returns False.

    Parameters
    ----------
    stacklevel : int, default=3
        ``stacklevel`` of the warning (3: the caller of the function that calls this one).

    Returns
    -------
    on : bool
        Whether ``jax_threefry_partitionable`` is on.

    Warns
    -----
    RuntimeWarning
        If ``jax_threefry_partitionable`` is off.

    Examples
    --------
    >>> from bayesmv.distributed import check_partitionable_rng
    >>> check_partitionable_rng()  # JAX's default
    True
    """
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
    """Bytes held on each addressable device by the array leaves of a pytree.

    Shards count on the device where they live; replicated arrays count once per device.
    Leaves that are not JAX arrays are ignored.

    Parameters
    ----------
    tree : pytree
        Arrays, or any pytree with arrays as leaves.

    Returns
    -------
    bytes_per_device : dict
        Maps each ``jax.Device`` that holds data to its number of bytes.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from bayesmv.distributed import per_device_bytes
    >>> list(per_device_bytes({"a": jnp.ones((4, 2)), "b": 1.0}).values())  # 8 float64
    [64]
    """
    out = {}
    for leaf in jax.tree.leaves(tree):
        if isinstance(leaf, jax.Array):
            for s in leaf.addressable_shards:
                out[s.device] = out.get(s.device, 0) + s.data.nbytes
    return out
