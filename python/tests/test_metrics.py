"""Trajectory metrics from Python: hand-computed cases, a brute-force check of the
geodesic distances, and bad input."""

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from unfold import metrics
from unfold.metrics import Trajectory

# A bifurcation: trunk 0-1 (length 2), branches 1-2 (length 1) and 1-3 (length 3); four
# cells inside the trunk, three inside each branch.
BIF_EDGES = np.array([[0, 1, 2.0], [1, 2, 1.0], [1, 3, 3.0]])
BIF_CELLS = np.array(
    [
        [0, 1, 0.1],
        [0, 1, 0.3],
        [1, 0, 0.4],
        [0, 1, 0.8],
        [1, 2, 0.2],
        [2, 1, 0.5],
        [1, 2, 0.9],
        [1, 3, 0.25],
        [1, 3, 0.5],
        [3, 1, 0.1],
    ]
)
BIF = Trajectory(BIF_EDGES, BIF_CELLS)


def relabel(traj, perm):
    """The same trajectory with node v renamed perm[v], edges reversed and flipped, and
    every other cell given from the other end of its edge."""
    perm = np.asarray(perm)
    e = traj.edges[::-1]
    edges = np.c_[perm[e[:, 1].astype(int)], perm[e[:, 0].astype(int)], e[:, 2]]
    c = traj.cells.copy()
    a, b = perm[c[:, 0].astype(int)], perm[c[:, 1].astype(int)]
    flip = np.arange(len(c)) % 2 == 0
    cells = np.c_[np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1 - c[:, 2], c[:, 2])]
    return Trajectory(edges, cells)


def brute_distances(traj):
    """Cells as extra vertices splitting their edges, then SciPy's shortest paths."""
    k = int(traj.edges[:, :2].max()) + 1
    n = len(traj.cells)
    rows, cols, vals = [], [], []
    for a, b, length in traj.edges:
        a, b = int(a), int(b)
        points = [(0.0, a), (length, b)]
        for i, (f, t, x) in enumerate(traj.cells):
            if (int(f), int(t)) == (a, b):
                points.append((x * length, k + i))
            elif (int(f), int(t)) == (b, a):
                points.append(((1 - x) * length, k + i))
        points.sort()
        for (s0, u), (s1, v) in zip(points, points[1:]):
            # A tiny positive length keeps coincident points connected in the sparse graph.
            rows.append(u)
            cols.append(v)
            vals.append(max(s1 - s0, 1e-300))
    g = coo_matrix((vals, (rows, cols)), shape=(k + n, k + n))
    d = shortest_path(g, directed=False)
    return d[k:, k:]


def test_geodesic_distances_match_scipy_shortest_paths():
    d = metrics.geodesic_distances(BIF)
    np.testing.assert_allclose(d, brute_distances(BIF), atol=1e-12)
    sub = metrics.geodesic_distances(BIF, rows=[3, 0])
    np.testing.assert_array_equal(sub, d[[3, 0]])


def test_identical_and_relabelled_trajectories_are_perfect():
    other = relabel(BIF, [2, 0, 3, 1])
    for pred in (BIF, other, (other.edges, other.cells)):
        for w in (None, 3, 100):
            assert metrics.trajectory_correlation(pred, BIF, waypoints=w) == pytest.approx(1.0, abs=1e-12)
        assert metrics.f1_branches(pred, BIF) == (1.0, 1.0, 1.0)
        h = metrics.him(pred[0], BIF.edges)
        assert h.distance < 1e-12 and h.exact_matching and h.similarity == pytest.approx(1.0)


def test_agreement_of_several_trajectories_is_spearman_of_pair_distances():
    from scipy.stats import spearmanr

    # The bifurcation, a relabelled copy, and the same cells on a path of three edges.
    path = Trajectory(np.array([[0, 1, 1.0], [1, 2, 1.0], [2, 3, 1.0]]),
                      np.c_[np.arange(10) % 3, np.arange(10) % 3 + 1, 0.05 * np.arange(10)])
    cells = [0, 2, 4, 5, 7, 9]
    a = metrics.trajectory_agreement([BIF, relabel(BIF, [2, 0, 3, 1]), path], cells)
    assert a.shape == (3, 3)
    np.testing.assert_array_equal(a, a.T)
    np.testing.assert_array_equal(np.diag(a), 1.0)
    assert a[0, 1] == pytest.approx(1.0, abs=1e-12)
    iu = np.triu_indices(len(cells), 1)
    # In units of 1e-9 of each tree's total length, rounded (the metrics' tie precision).
    pairs = lambda t: np.round(brute_distances(t)[np.ix_(cells, cells)][iu] / (1e-9 * t.edges[:, 2].sum()))
    want = spearmanr(pairs(BIF), pairs(path))[0]
    assert a[0, 2] == pytest.approx(want, abs=1e-12)
    assert a[0, 2] < 0.9
    # Every cell by default; bad input.
    assert metrics.trajectory_agreement([BIF, path]).shape == (2, 2)
    with pytest.raises(ValueError, match="out of range"):
        metrics.trajectory_agreement([BIF, path], [0, 99])
    with pytest.raises(ValueError):
        metrics.trajectory_agreement([])


def test_a_linear_prediction_of_a_bifurcation_has_f1_four_elevenths():
    # One group of 10 against groups of 4, 3 and 3: recovery (4 + 3 + 3) / 10 / 3 = 1/3,
    # relevance 4/10, F1 = 2 (1/3)(2/5) / (1/3 + 2/5) = 4/11.
    line = Trajectory(np.array([[0, 1]]), np.c_[np.zeros(10), np.ones(10), np.linspace(0, 1, 10)])
    f = metrics.f1_branches(line, BIF)
    assert f.recovery == pytest.approx(1 / 3, abs=1e-15)
    assert f.relevance == pytest.approx(0.4, abs=1e-15)
    assert f.f1 == pytest.approx(4 / 11, abs=1e-15)
    np.testing.assert_array_equal(metrics.branches(BIF), [0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    # The same from labels of any type.
    g = metrics.f1_labels(["x"] * 10, ["trunk"] * 4 + ["a"] * 3 + ["b"] * 3)
    assert g == pytest.approx(tuple(f), abs=1e-15)


def test_f1_labels_by_hand():
    # P0 = {0, 1}, P1 = {2, 3}; R0 = {0, 1, 2}, R1 = {3}: the best Jaccards are 2/3 and
    # 1/2 on both sides, so all three are 7/12.
    f = metrics.f1_labels(np.array([5, 5, 9, 9]), np.array([1, 1, 1, 0]))
    assert f == pytest.approx((7 / 12, 7 / 12, 7 / 12), abs=1e-15)


def test_pseudotime_and_its_correlation():
    t = metrics.pseudotime(BIF, root_node=0)
    np.testing.assert_allclose(t, [0.2, 0.6, 1.2, 1.6, 2.2, 2.5, 2.9, 2.75, 3.5, 4.7], atol=1e-12)
    np.testing.assert_allclose(metrics.pseudotime(BIF, root_cell=4), brute_distances(BIF)[4], atol=1e-12)
    assert metrics.pseudotime_correlation(t, 3 * t + 1) == pytest.approx(1.0)
    assert metrics.pseudotime_correlation(t, -t) == pytest.approx(-1.0)
    assert metrics.pseudotime_correlation(t, np.ones_like(t)) == 0.0
    with pytest.raises(ValueError, match="exactly one"):
        metrics.pseudotime(BIF)
    with pytest.raises(ValueError, match="not a node"):
        metrics.pseudotime(BIF, root_node=9)


def test_him_of_a_path_against_a_star_by_hand():
    # The path becomes a-m-b with weights 1/4 each, the star has 1/6 on each edge, n = 4:
    # H = 2 (2 (1/4 - 1/6) + 1/6) / (4 * 3) = 1/18.
    h = metrics.him(np.array([[0, 1, 2.0]]), np.array([[0, 1], [0, 2], [0, 3]]))
    assert h.hamming == pytest.approx(1 / 18, abs=1e-15)
    assert h.nodes == 4 and h.exact_matching
    assert h.distance == pytest.approx(np.sqrt((h.hamming**2 + h.ipsen_mikhailov**2) / 2))
    assert 0 < h.ipsen_mikhailov < 1
    assert metrics.him(BIF, relabel(BIF, [1, 2, 3, 0])).distance < 1e-12


def test_waypoints_spread_over_the_branches():
    np.testing.assert_array_equal(metrics.waypoint_cells(BIF, 2), [2, 5, 8])
    np.testing.assert_array_equal(metrics.waypoint_cells(BIF, 10), np.arange(10))


def test_bad_input_raises_value_error_with_a_message():
    with pytest.raises(ValueError, match="not a tree"):
        metrics.f1_branches(([[0, 1], [1, 2], [2, 0]], BIF_CELLS), BIF)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        metrics.trajectory_correlation((BIF_EDGES, [[0, 1, 1.5]] * 10), BIF)
    with pytest.raises(ValueError, match="not an edge"):
        metrics.trajectory_correlation((BIF_EDGES, [[0, 2, 0.5]] * 10), BIF)
    with pytest.raises(ValueError, match="9 cells"):
        metrics.trajectory_correlation((BIF_EDGES, BIF_CELLS[:9]), BIF)
    with pytest.raises(ValueError, match="9 cells"):
        metrics.f1_branches((BIF_EDGES, BIF_CELLS[:9]), BIF)
    with pytest.raises(ValueError, match="empty"):
        metrics.branches((BIF_EDGES, np.zeros((0, 3))))
    with pytest.raises(ValueError, match="no edges"):
        metrics.branches((np.zeros((0, 3)), BIF_CELLS))
    with pytest.raises(ValueError, match="node id"):
        metrics.branches((BIF_EDGES + 0.5, BIF_CELLS))
    with pytest.raises(ValueError, match="shape"):
        metrics.branches((BIF_EDGES, BIF_CELLS[:, :2]))
    with pytest.raises(TypeError, match="pair"):
        metrics.branches(BIF_EDGES)
    with pytest.raises(ValueError, match="length 0"):
        metrics.him([[0, 1, 0.0]], BIF_EDGES)
    with pytest.raises(ValueError, match="labels"):
        metrics.f1_labels([0, 1], [0])
    with pytest.raises(ValueError, match="waypoints"):
        metrics.trajectory_correlation(BIF, BIF, waypoints=0)
