"""Trajectory metrics: an inferred tree over the cells against a reference one, with the
definitions of dynverse's benchmark of trajectory inference (Saelens et al. 2019, the
``dyneval`` package), computed by ``unfold-eval`` in Rust.

A trajectory is a pair ``(edges, cells)`` of arrays (or a ``Trajectory``):

* ``edges``: ``(m, 2)`` node ids ``(a, b)`` (every length 1), or ``(m, 3)`` rows
  ``(a, b, length)``: a tree over the nodes ``0..K-1`` (``m = K - 1``, connected, lengths
  finite and ``>= 0``). For a DDRTree fit, ``tree = est.tables_["tree"][1]`` holds squared
  lengths: ``np.c_[tree[:, :2], np.sqrt(tree[:, 2])]``.
* ``cells``: ``(n, 3)`` rows ``(from, to, t)``: each cell on the edge between ``from`` and
  ``to`` (either orientation), at the fraction ``t`` in ``[0, 1]`` of its length from
  ``from``. A simulator's milestone network and progressions have this shape.

Both trajectories of a comparison describe the same cells in the same order; their trees
are unrelated (any number of nodes, any ids). See ``docs/trajectory_metrics.md``.
"""

from typing import NamedTuple

import numpy as np

from . import _native


class Trajectory(NamedTuple):
    """A tree over nodes ``0..K-1`` (``edges``) and each cell's position on it (``cells``)."""

    edges: np.ndarray
    cells: np.ndarray


class BranchF1(NamedTuple):
    """Recovery, relevance and their harmonic mean, the F1 (dyneval's ``*_branches``)."""

    recovery: float
    relevance: float
    f1: float


class HIM(NamedTuple):
    """The Hamming–Ipsen–Mikhailov distance and its terms; ``similarity = 1 - distance``
    is dyneval's ``him`` score."""

    distance: float
    hamming: float
    ipsen_mikhailov: float
    nodes: int
    exact_matching: bool

    @property
    def similarity(self):
        return 1.0 - self.distance


def _edges(edges):
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 2 or e.shape[1] not in (2, 3):
        raise ValueError(
            f"edges must be an (m, 2) array of node ids or an (m, 3) array (a, b, length); got shape {e.shape}"
        )
    if e.shape[1] == 2:
        e = np.c_[e, np.ones(len(e))]
    return np.ascontiguousarray(e)


def _cells(cells):
    c = np.asarray(cells, dtype=np.float64)
    if c.ndim != 2 or c.shape[1] != 3:
        raise ValueError(f"cells must be an (n, 3) array (from, to, t); got shape {c.shape}")
    return np.ascontiguousarray(c)


def _trajectory(trajectory, what):
    try:
        edges, cells = trajectory
    except (TypeError, ValueError):
        raise TypeError(f"the {what} must be a pair (edges, cells) or a Trajectory") from None
    return _edges(edges), _cells(cells)


def geodesic_distances(trajectory, rows=None):
    """The distances along the tree from the cells ``rows`` (default: every cell) to every
    cell: an array ``(len(rows), n)``."""
    edges, cells = _trajectory(trajectory, "trajectory")
    rows = range(len(cells)) if rows is None else rows
    rows = [int(i) for i in np.asarray(rows, dtype=np.int64).ravel()]
    if any(i < 0 for i in rows):
        raise ValueError("rows must be cell indices >= 0")
    return _native.trajectory_geodesic_distances(edges, cells, rows)


def waypoint_cells(trajectory, count=100):
    """About ``count`` cells spread over the trajectory's branches and branch points in
    proportion to their cells (deterministically: the middles of equal slices along each
    branch), ascending."""
    edges, cells = _trajectory(trajectory, "trajectory")
    if int(count) < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    return np.asarray(_native.trajectory_waypoints(edges, cells, int(count)), dtype=np.int64)


def trajectory_correlation(pred, ref, waypoints=100):
    """Spearman's correlation between the geodesic distances along the predicted tree and
    along the reference tree, from the waypoint cells to every cell (dyneval's
    ``correlation``, which also clamps it at 0).

    ``waypoints``: about this many waypoint cells from each trajectory (``waypoint_cells``;
    the union is used; dyneval's default is 100), or ``None`` for every cell (all ``n x n``
    distances: slow above a few thousand cells). In ``[-1, 1]``; 0 when either tree puts
    all the cells at one point.
    """
    pe, pc = _trajectory(pred, "prediction")
    re, rc = _trajectory(ref, "reference")
    if waypoints is not None:
        waypoints = int(waypoints)
        if waypoints < 1:
            raise ValueError("waypoints must be >= 1, or None for every cell")
    return _native.trajectory_correlation(pe, pc, re, rc, waypoints)


def trajectory_agreement(trajectories, cells=None):
    """How far several trajectories over the same cells agree: Spearman's correlation of
    the distances along each tree between every pair of ``cells`` (default: every cell),
    for every pair of the trajectories, as a symmetric ``(m, m)`` array with 1 on the
    diagonal (0 where a tree puts all the cells at one point). DDRTree keeps the start
    whose tree agrees most with the others' by this measure.
    """
    parts = [_trajectory(t, f"trajectory {i}") for i, t in enumerate(trajectories)]
    if not parts:
        raise ValueError("give at least one trajectory")
    cells = range(len(parts[0][1])) if cells is None else cells
    cells = [int(i) for i in np.asarray(cells, dtype=np.int64).ravel()]
    if any(i < 0 for i in cells):
        raise ValueError("cells must be cell indices >= 0")
    return _native.trajectory_agreement(parts, cells)


def pseudotime(trajectory, root_node=None, root_cell=None):
    """The distance along the tree from the root, a node (``root_node``) or a cell's
    position (``root_cell``), to every cell."""
    edges, cells = _trajectory(trajectory, "trajectory")
    if (root_node is None) == (root_cell is None):
        raise ValueError("give exactly one of root_node and root_cell")
    for name, v in (("root_node", root_node), ("root_cell", root_cell)):
        if v is not None and int(v) < 0:
            raise ValueError(f"{name} must be >= 0, got {v}")
    node = None if root_node is None else int(root_node)
    cell = None if root_cell is None else int(root_cell)
    return _native.trajectory_pseudotime(edges, cells, node, cell)


def pseudotime_correlation(pred, ref):
    """Spearman's correlation of two pseudotimes of the same cells (1-D arrays: from
    ``pseudotime``, Palantir, DPT, ...); 0 when either is constant."""
    a = np.ascontiguousarray(pred, dtype=np.float64)
    b = np.ascontiguousarray(ref, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"pseudotimes must be 1-D arrays; got shapes {a.shape} and {b.shape}")
    return _native.rank_correlation(a, b)


def branches(trajectory):
    """Each cell's branch, ``0..B-1``: the maximal path between nodes of degree other
    than 2 that holds its edge (a tree with one branch point of degree 3 has 3)."""
    edges, cells = _trajectory(trajectory, "trajectory")
    return np.asarray(_native.trajectory_branches(edges, cells), dtype=np.int64)


def f1_branches(pred, ref):
    """dyneval's ``F1_branches``: the cells grouped by the branch they lie on in each
    trajectory (``branches``), then ``f1_labels`` of the two groupings."""
    pe, pc = _trajectory(pred, "prediction")
    re, rc = _trajectory(ref, "reference")
    return BranchF1(*_native.trajectory_f1_branches(pe, pc, re, rc))


def f1_labels(pred, ref):
    """Recovery, relevance and F1 of two groupings of the same cells, given as labels of
    any type (e.g. DPT's branches against ``branches(reference)``): with the Jaccard index
    of every pair of groups, recovery is the mean over the reference's groups of the best,
    relevance the mean over the predicted groups of the best, F1 their harmonic mean."""
    p, r = np.asarray(pred).ravel(), np.asarray(ref).ravel()
    if len(p) != len(r):
        raise ValueError(f"there are {len(p)} predicted labels but {len(r)} reference labels")
    p = np.unique(p, return_inverse=True)[1].astype(np.int64).ravel()
    r = np.unique(r, return_inverse=True)[1].astype(np.int64).ravel()
    return BranchF1(*_native.f1_labels(p, r))


def him(pred, ref, gamma=0.1, max_matching_steps=1_000_000):
    """The Hamming–Ipsen–Mikhailov distance between two trees weighted by edge length, as
    dyneval computes its ``him`` (``HIM(...).similarity``): each tree contracted to its
    branch points and leaves, the adjacency normalised to sum 1, ``gamma = 0.1``. The
    Hamming term takes the best correspondence of the nodes (dyneval's aligns them by
    name); ``exact_matching`` says whether the search proved it best.

    ``pred``, ``ref``: the trees' edges (as ``Trajectory.edges``) or ``Trajectory``
    objects.
    """
    if int(max_matching_steps) < 1:
        raise ValueError(f"max_matching_steps must be >= 1, got {max_matching_steps}")

    def edges_of(x):
        return _edges(x.edges if isinstance(x, Trajectory) else x)

    return HIM(*_native.trajectory_him(edges_of(pred), edges_of(ref), float(gamma), int(max_matching_steps)))


__all__ = [
    "BranchF1",
    "HIM",
    "Trajectory",
    "branches",
    "f1_branches",
    "f1_labels",
    "geodesic_distances",
    "him",
    "pseudotime",
    "pseudotime_correlation",
    "trajectory_agreement",
    "trajectory_correlation",
    "waypoint_cells",
]
