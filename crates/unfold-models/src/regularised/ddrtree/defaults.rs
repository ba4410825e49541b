//! The settings a DDRTree fit chooses from the data when they are not given: the latent
//! dimension, `lambda` and which side branches of the learned tree are branches
//! (`docs/methods/ddrtree.md`, "Defaults"; measured in `bench/results/trajectory_defaults.md`).
//! The papers and Monocle 2 fix `d = 2` and `lambda = 5 N`; a tree with several branch
//! points does not fit in a plane, and `5 N` pulls the centres of a deep tree together.

use nalgebra::{DMatrix, DVector};
use unfold_core::Result;
use unfold_graph::trajectory::Trajectory;
use unfold_linalg::{rank::MIN_VALUES, signal_rank, sym_eigen};

/// A setting chosen from the data: its name, the value and why (reported by the fit's
/// notes as `name` and `name_reason`).
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    /// The parameter's name.
    pub name: &'static str,
    /// The value, as text.
    pub value: String,
    /// Why this value.
    pub reason: String,
}

impl Chosen {
    fn new(name: &'static str, value: impl ToString, reason: String) -> Self {
        Chosen {
            name,
            value: value.to_string(),
            reason,
        }
    }
}

/// The latent dimension when not given: the number of principal components of the centred
/// data that stand above the noise ([`signal_rank`], Gavish and Donoho's threshold), at
/// least 2 (the plane the papers use) and below `min(N, D)`; 2 when the spectrum has too
/// few values or no spread for the rule. `gram` is `Y^T Y` of the data the fit reads, and
/// `mean` their column means when `gram` is not centred (the R package's conventions).
pub(crate) fn latent_dim(
    gram: &DMatrix<f64>,
    mean: Option<&DVector<f64>>,
    n: usize,
) -> Result<(usize, Chosen)> {
    let p = gram.nrows();
    let centred = match mean {
        Some(mu) => gram - (mu * mu.transpose()) * n as f64,
        None => gram.clone(),
    };
    let values = sym_eigen(&centred)?.values;
    let m = n.min(p);
    // The m largest eigenvalues are the squared singular values; the rest are zeros of a
    // wide matrix.
    let top = &values.as_slice()[p - m..];
    let most = m.saturating_sub(1).max(1);
    let (dim, reason) = match signal_rank(top, n, p) {
        Some(r) => {
            let dim = r.clamp(2.min(most), most);
            let bound = match dim.cmp(&r) {
                std::cmp::Ordering::Equal => String::new(),
                std::cmp::Ordering::Greater => ", raised to 2 (a plane)".to_string(),
                std::cmp::Ordering::Less => format!(", lowered to min(N, D) - 1 = {dim}"),
            };
            (
                dim,
                format!(
                    "{r} principal components stand above the noise (Gavish-Donoho hard \
                     threshold on the singular values){bound}"
                ),
            )
        }
        None => (
            2.min(most),
            format!(
                "the spectrum rule needs at least {MIN_VALUES} singular values with some \
                 spread (min(N, D) = {m}); fell back to the papers' 2 (or min(N, D) - 1)"
            ),
        ),
    };
    Ok((dim, Chosen::new("dim", dim, reason)))
}

/// `lambda` when not given, for the paper's conventions: `gamma N / K`, so that the tree
/// term's pull on a centre (`lambda` times its squared edge lengths) weighs as much as the
/// clustering term's pull of the `N / K` cells it stands for (`gamma` times their squared
/// distances). Scale-free, as every term of (31) scales with the squared data.
pub(crate) fn balanced_lambda(n: usize, k: usize, gamma: f64) -> (f64, Chosen) {
    let lambda = gamma * n as f64 / k as f64;
    let reason = format!(
        "gamma N / K = {gamma} x {n} / {k}: the tree's pull on a centre balances the \
         clustering pull of its N / K cells"
    );
    (lambda, Chosen::new("lambda", lambda, reason))
}

/// The fewest centres of a side branch: one or two centres are a single cluster's bulge.
const MIN_CENTRES: usize = 3;

/// The smallest side branch, in centres, that an ordering counts as a branch when not
/// given: spurs whose length is within three root-mean-square distances `r` of the cells
/// from the tree are the noise's width, not a fate; and a spur of one or two centres is one
/// cluster of cells bulging from the tree, with no direction of its own. With `l` the
/// tree's mean edge length, `max(3, ceil(3 r / l))` centres.
pub(crate) fn min_branch(
    z: &DMatrix<f64>,
    centres: &DMatrix<f64>,
    edges: &[(usize, usize, f64)],
    ordering: &Trajectory,
) -> (usize, Chosen) {
    let n = z.nrows();
    let residual: f64 = ordering
        .position
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let t = q.t.clamp(0.0, 1.0);
            let on_tree = centres.row(q.from) * (1.0 - t) + centres.row(q.to) * t;
            (z.row(i) - on_tree).norm_squared()
        })
        .sum();
    let r = (residual / n as f64).sqrt();
    let length: f64 = edges
        .iter()
        .map(|&(a, b, _)| (centres.row(a) - centres.row(b)).norm())
        .sum();
    let l = length / edges.len().max(1) as f64;
    let width = if l > 0.0 {
        (3.0 * r / l).ceil() as usize
    } else {
        0
    };
    let m = width.max(MIN_CENTRES);
    let reason = format!(
        "max({MIN_CENTRES}, ceil(3 r / l)) with ceil(3 x {r:.3e} / {l:.3e}) = {width}: side \
         branches within three RMS distances r of the cells from the tree (l: the mean edge \
         length), or of fewer than {MIN_CENTRES} centres, are noise"
    );
    (m, Chosen::new("min_branch", m, reason))
}
