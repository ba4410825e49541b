"""Progress and stopping from Python: ``verbose=2``'s line per iteration, the callback
(which sees the fit's own objective trace and may stop it), Ctrl-C in every iterative
family and in a sweep (from a timer thread and from another process), and an estimator
left as it was by a fit that did not finish."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest

import unfold
from conftest import swiss_roll


#: Fits that run until they are stopped (DDRTree without a tolerance), or for much longer
#: than the test waits (LL-LVM's EM on 1500 points), with the points they fit.
ENDLESS = {
    "DDRTree": (dict(tol=0.0, max_iter=10**8), 200),
    "LLLVM": (dict(n_neighbors=8, max_iter=10**8), 1500),
}


def test_verbose_2_prints_a_line_per_iteration(roll, capsys):
    est = unfold.DDRTree(n_components=2, verbose=2, restarts=1).fit(roll)
    err = capsys.readouterr().err
    lines = [l for l in err.splitlines() if ", iteration " in l]
    assert len(lines) == est.n_iter_ > 1
    assert lines[0].startswith("unfold ddrtree: restart 0, iteration 1: objective ")
    assert "fitted 200 points" in err
    # The default's five starts (run in parallel) each report their iterations, numbered
    # from 0.
    unfold.DDRTree(n_components=2, verbose=2).fit(roll)
    lines = [l for l in capsys.readouterr().err.splitlines() if ", iteration 1:" in l]
    assert sorted(l.split(",")[0] for l in lines) == [f"unfold ddrtree: restart {r}" for r in range(5)]


def test_the_callback_hears_each_iteration_of_the_trace_and_false_ends_the_fit(roll):
    heard = []
    est = unfold.DDRTree(n_components=2, restarts=1, callback=lambda i, v: heard.append((i, v)))
    est.fit(roll)
    assert [i for i, _ in heard] == list(range(1, est.n_iter_ + 1))
    np.testing.assert_array_equal([v for _, v in heard], est.trace_)
    # With the default's five starts it hears each start's iterations from 1.
    heard.clear()
    unfold.DDRTree(n_components=2, callback=lambda i, v: heard.append((i, v))).fit(roll)
    assert [i for i, _ in heard].count(1) == 5
    # LL-LVM: one bound per EM iteration, as in its trace.
    heard.clear()
    lllvm = unfold.LLLVM(n_components=2, n_neighbors=8, max_iter=6, callback=lambda i, v: heard.append(v))
    lllvm.fit(roll)
    np.testing.assert_array_equal(heard, lllvm.trace_)

    # Returning False ends the fit at the iteration it has reached and keeps that iterate:
    # a fit that would otherwise run for 10^8 iterations, stopped by the caller.
    calls = []

    def enough(i, v):
        calls.append(i)
        return i < 3

    est = unfold.DDRTree(n_components=2, restarts=1, callback=enough, tol=0.0, max_iter=10**8)
    est.fit(roll)
    assert calls[:3] == [1, 2, 3]
    assert est.stopped_by_ == "caller" and not est.converged_
    assert 3 <= est.n_iter_ < 10**8
    assert len(est.trace_) == est.n_iter_
    assert est.embedding_.shape == (roll.shape[0], 2) and np.isfinite(est.embedding_).all()

    # MVU's iterates are not a fit before it converges: FitStopped, and the estimator keeps
    # its previous fit. (300 points: seconds of interior-point iterations, so that the
    # callback is heard before the fit ends; every method's end in Rust is tested by
    # every_iterative_method_ended_by_the_caller_keeps_its_iterate.)
    est = unfold.MVU(n_components=2, n_neighbors=8).fit(roll[:80])
    before = est.embedding_.copy()
    est.set_params(callback=lambda i, v: False)
    with pytest.raises(unfold.FitStopped, match="nothing was kept"):
        bigger = swiss_roll(300, seed=2)
        est.fit(np.c_[bigger, 0.5 * bigger[:, 0]])
    assert est.n_features_in_ == 3
    np.testing.assert_array_equal(est.embedding_, before)
    with pytest.raises(TypeError, match="callable"):
        unfold.DDRTree(callback=3).fit(roll)


@pytest.mark.parametrize("name", sorted(ENDLESS))
def test_ctrl_c_stops_a_fit_that_would_never_end_and_leaves_the_estimator_unfitted(name):
    params, n = ENDLESS[name]
    est = unfold.ESTIMATORS[name](n_components=2, **params)
    X = swiss_roll(n, seed=2)
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X)
    stopped = time.monotonic() - start
    assert not hasattr(est, "embedding_") and not hasattr(est, "n_features_in_")
    # Reported, not asserted: the machines are shared.
    print(f"{name}: KeyboardInterrupt {stopped - 1.0:.2f} s after SIGINT")


def test_ctrl_c_stops_a_fit_inside_one_long_kernel():
    """Isomap's fit is one long computation (a Dijkstra search from every point) with no
    iterations to report: Ctrl-C at a fifth of its time stops it well before it would have
    ended, measured against the same fit on the same machine in this run."""
    X = swiss_roll(5000, seed=3)
    start = time.monotonic()
    unfold.Isomap(n_components=2).fit(X)
    whole = time.monotonic() - start
    est = unfold.Isomap(n_components=2)
    threading.Timer(0.2 * whole, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X)
    stopped = time.monotonic() - start
    assert not hasattr(est, "embedding_")
    assert stopped < 0.6 * whole, (stopped, whole)
    print(f"Isomap: stopped {stopped - 0.2 * whole:.2f} s after SIGINT; the fit takes {whole:.2f} s")


def test_ctrl_c_from_another_process_stops_the_fit():
    """A script fitting forever, sent SIGINT by this process, ends with the interpreter's
    KeyboardInterrupt (its exit by SIGINT) and without its 'finished' line."""
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import unfold
        rng = np.random.default_rng(0)
        X = rng.standard_normal((300, 5))
        print("fitting", flush=True)
        unfold.DDRTree(n_components=2, tol=0.0, max_iter=10**8).fit(X)
        print("finished", flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "fitting"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert "KeyboardInterrupt" in err, err
    assert "finished" not in out
    assert child.returncode in (-signal.SIGINT, 130, 1), child.returncode


BUT_TIME = ["k", "graph", "dim", "restart", "seed", "kind", "value", "best", "error", "method", "score", "sweep"]


def test_ctrl_c_stops_a_sweep_which_keeps_its_finished_rows_and_resumes(tmp_path, capsys):
    X = swiss_roll(300, seed=3)
    sweep = dict(k=list(range(6, 16)), restarts=2, max_iter=40)
    full = unfold.select("lllvm", X, verbose=1, **sweep)
    err = capsys.readouterr().err
    assert err.count("unfold select lllvm: candidate ") == len(full) == 20
    out = tmp_path / "t.csv"

    def stop_after_rows():
        while not out.exists() or len(out.read_text().splitlines()) < 4:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=stop_after_rows, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        unfold.select("lllvm", X, out=out, **sweep)
    kept = len(out.read_text().splitlines()) - 1
    assert 3 <= kept < 20
    resumed = unfold.select("lllvm", X, out=out, resume=True, **sweep)
    pd.testing.assert_frame_equal(full[BUT_TIME], resumed[BUT_TIME], check_exact=True)


def test_progress_true_shows_a_bar_or_says_why_not(roll, capsys):
    try:
        import tqdm  # noqa: F401
    except ImportError:
        with pytest.warns(UserWarning, match="needs tqdm"):
            unfold.DDRTree(n_components=2, progress=True).fit(roll)
        return
    # One start: the bar counts the fit's iterations (with several, every start's).
    est = unfold.DDRTree(n_components=2, restarts=1, progress=True).fit(roll)
    err = capsys.readouterr().err
    assert "unfold ddrtree" in err and f"{est.n_iter_} it" in err
    # None: no bar outside a notebook.
    unfold.DDRTree(n_components=2).fit(roll)
    assert capsys.readouterr().err == ""


def test_warnings_point_at_the_users_line(roll):
    X = np.vstack([roll, roll[:1]])
    with pytest.warns(UserWarning, match="repeats another point") as said:
        unfold.Isomap(n_components=2, n_neighbors=8).fit(X)
    assert said[0].filename == __file__
