"""M3LAK's progress bars: one per chain, moved after each call of the draw program, from this
process or from worker processes; the draws are the same with or without them."""

import os
import threading
import time
import warnings

import numpy as np
import pytest

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier
from bayesmv.datasets import make_latent_views
from bayesmv.inference.m3lak_sampler import progress as progress_module
from bayesmv.inference.m3lak_sampler import run
from bayesmv.inference.m3lak_sampler.progress import ChainProgress, FileReport
from bayesmv.models import M3LAKConfig


def test_bars_count_sweeps_and_name_the_phase(capfd):
    with ChainProgress(2, num_warmup=30, num_samples=20) as progress:
        progress.report(1)(10)
        assert progress.done == [0, 10]
    assert "chain 1 (warm-up)" in capfd.readouterr().err
    with ChainProgress(2, num_warmup=30, num_samples=20) as progress:
        report = progress.report(1)
        report(10)
        report(40)
    err = capfd.readouterr().err
    assert "chain 1 (sampling)" in err and "40/50" in err
    assert "chain 0 (warm-up)" in err and "0/50" in err
    with ChainProgress(2, 30, 20, enabled=False) as quiet:
        assert quiet.report(0) is None
        assert quiet.worker_files() == [None, None]
    assert "chain" not in capfd.readouterr().err


def test_worker_files_move_the_bars(capfd):
    with ChainProgress(2, num_warmup=0, num_samples=20) as progress:
        files = progress.worker_files()
        FileReport(files[0])(5)
        FileReport(files[1])(20)
        FileReport(files[0])(15)
    # the display thread reads every file once more as the block ends; the files go with it
    assert progress.done == [15, 20]
    err = capfd.readouterr().err
    assert "15/20" in err and "chain 1 (sampling)" in err and "20/20" in err
    assert not os.path.exists(os.path.dirname(files[0]))


def test_a_second_block_reads_its_own_worker_files():
    progress = ChainProgress(1, num_warmup=0, num_samples=10)
    folders = []
    for value in (4, 7):
        with progress:
            files = progress.worker_files()
            FileReport(files[0])(value)
        folders.append(os.path.dirname(files[0]))
        assert progress.done == [value]
        assert not os.path.exists(folders[-1])
    assert folders[0] != folders[1]


def _hold_tqdm_lock():
    """Hold tqdm's lock in another thread until the returned event is set (at most 30 s)."""
    from tqdm.auto import tqdm

    held, release = threading.Event(), threading.Event()

    def hold():
        with tqdm.get_lock():
            held.set()
            release.wait(30)

    threading.Thread(target=hold, daemon=True).start()
    assert held.wait(10)
    return release


def test_the_fitting_thread_never_waits_on_a_held_tqdm_lock(monkeypatch):
    """tqdm's write lock held elsewhere (as a Ctrl-C between its acquire and release leaves it,
    or a thread that ended inside tqdm): the block still ends, after ``CLOSE_SECONDS``, and the
    bars close once the lock is free. (Before, the fitting thread itself created and closed the
    bars and waited on the lock for ever.)"""

    monkeypatch.setattr(progress_module, "CLOSE_SECONDS", 0.5)
    release = _hold_tqdm_lock()
    outcome = {}

    def fit_like():
        with ChainProgress(2, num_warmup=5, num_samples=5) as progress:
            progress.report(0)(3)
        outcome["progress"] = progress

    start = time.monotonic()
    fitting = threading.Thread(target=fit_like, daemon=True)
    fitting.start()
    fitting.join(10)
    try:
        assert not fitting.is_alive(), "the block waited on tqdm's lock"
        assert time.monotonic() - start < 5
        assert not outcome["progress"]._closed.is_set()  # the display thread still waits
    finally:
        release.set()
    assert outcome["progress"]._closed.wait(10)


def test_a_block_entered_again_keeps_its_events_from_the_earlier_display_thread(monkeypatch):
    """The first block ends while its display thread waits on tqdm's held lock; the object is
    entered again. Once the lock is free, the first thread closes its bars and sets the first
    block's ``closed`` event, not the second block's, and the second block's thread runs on until
    its own block ends. (With the events read from the object, the first thread took the second
    block's, marked it closed and displayed beside the second thread.)"""

    monkeypatch.setattr(progress_module, "CLOSE_SECONDS", 0.3)
    release = _hold_tqdm_lock()
    progress = ChainProgress(1, num_warmup=0, num_samples=10)
    try:
        with progress:
            pass
        first_closed = progress._closed
        assert not first_closed.is_set()  # its thread still waits on the lock
        with progress:
            second_closed = progress._closed
            assert second_closed is not first_closed
            release.set()
            assert first_closed.wait(10)
            time.sleep(0.5)  # the first thread's loop would have ended on the second's events
            assert not second_closed.is_set()
        assert second_closed.wait(10)
    finally:
        release.set()


def test_ctrl_c_in_the_block_closes_the_bars_and_frees_tqdm():
    from tqdm.auto import tqdm

    with pytest.raises(KeyboardInterrupt):
        with ChainProgress(2, num_warmup=5, num_samples=5) as progress:
            progress.report(1)(4)
            raise KeyboardInterrupt
    assert progress._closed.is_set() and progress.done == [0, 4]
    free = []

    def take():  # from another thread, as the next fit's display thread takes it
        for lock in tqdm.get_lock().locks:  # a multiprocessing and a threading RLock
            free.append(lock.acquire(timeout=5))
            if free[-1]:
                lock.release()

    taker = threading.Thread(target=take)
    taker.start()
    taker.join()
    assert free and all(free)


@pytest.mark.parametrize(
    "warmup, samples, thinning, length",
    [
        (1000, 2000, 1, 200),  # the defaults: 15 calls per chain
        (30, 20, 1, 10),
        (15, 10, 1, 5),  # gcd below the smallest chunk: the gcd
        (3, 2, 1, 2),  # gcd 1: the warm-up and the draws as two calls
        (301, 200, 1, 200),  # too many calls of the gcd: likewise
        (40, 20, 2, 20),  # thinning
    ],
)
def test_chunk_length(warmup, samples, thinning, length):
    settings = run._RunSettings(M3LAKConfig(), None, None, warmup, samples, thinning)
    assert run._chunk_length(settings) == length
    warm, draws = run._draw_calls(settings, warm_up=True)
    assert sum(call.num_samples for call in warm) == warmup
    assert sum(call.num_samples for call in draws) == samples


def _tiny_fit(**params):
    Xs, y = make_latent_views(n_samples=30, n_features=3, random_state=2)
    clf = M3LAKClassifier(
        n_latent=2,
        n_frequencies=3,
        spectral_prior="gaussian",  # the tests are about the bars; compiles 2x faster than the DP
        num_warmup=20,
        num_samples=20,
        num_chains=2,
        random_state=4,
        **params,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 chains of 20 draws: the sampler warns, as it should
        return clf.fit(Xs, y)


@pytest.mark.slow
def test_the_bars_change_no_draw_and_show_the_worker_chains(capfd):
    """``"processes"`` (two worker processes on a 2-CPU machine): every chain's bar reaches its 40
    sweeps; the draws equal those of the same fit without bars."""
    shown = _tiny_fit(chain_method="processes", progress_bar=True)
    err = capfd.readouterr().err
    assert "chain 0 (sampling)" in err and "chain 1 (sampling)" in err and "40/40" in err
    quiet = _tiny_fit(chain_method="processes", progress_bar=False)
    assert "chain 0" not in capfd.readouterr().err
    for name in ("decision", "tau", "beta"):
        np.testing.assert_array_equal(
            shown.raw_posterior_[0][name], quiet.raw_posterior_[0][name], err_msg=name
        )


@pytest.mark.slow
def test_chunk_length_changes_no_draw(monkeypatch):
    """The chunks that the bars follow are loops of 10 sweeps (4 calls per chain) by default;
    loops of 20 (2 calls) give the same draws."""
    short = _tiny_fit(chain_method="sequential", progress_bar=False)
    monkeypatch.setattr(run, "_PROGRESS_CALLS", 2)
    long = _tiny_fit(chain_method="sequential", progress_bar=False)
    for name in ("decision", "tau", "beta", "omega"):
        np.testing.assert_array_equal(
            short.raw_posterior_[0][name], long.raw_posterior_[0][name], err_msg=name
        )
