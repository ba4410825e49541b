//! The checks a decoded model runs before it is used ([`Model::validate`]): a model file
//! from someone else, damaged in a way its checksum cannot see (or written by hand), must
//! give an error that says the file is corrupt and what is inconsistent, never a panic deep
//! inside a projection. Each model states its own invariants with these helpers in its own
//! file; every failure is an [`Error::InvalidParameter`] on `model`, which
//! [`Registry::from_bytes`](crate::registry::Registry::from_bytes) reports as a corrupt model file.
//!
//! [`Model::validate`]: super::Model::validate

use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};
use unfold_graph::NeighbourGraph;

/// The error of an inconsistent decoded model.
pub fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::invalid("model", format!("the file is corrupt: {what}"))
}

/// Fails with [`corrupt`] and the message `what` unless `ok`.
pub fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(corrupt(what()))
    }
}

/// Every value of `values` is finite.
pub fn finite(name: &str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(corrupt(format!(
            "{name}: the non-finite value {} at entry {i}",
            values[i]
        ))),
    }
}

/// A matrix whose storage holds exactly `nrows * ncols` finite values, with `rows` rows and
/// `cols` columns where given.
pub fn matrix(
    name: &str,
    m: &DMatrix<f64>,
    rows: Option<usize>,
    cols: Option<usize>,
) -> Result<()> {
    let (r, c) = m.shape();
    ensure(r.checked_mul(c) == Some(m.as_slice().len()), || {
        format!(
            "{name} claims {r} x {c} entries but stores {}",
            m.as_slice().len()
        )
    })?;
    for (axis, found, wanted) in [("rows", r, rows), ("columns", c, cols)] {
        if let Some(w) = wanted {
            ensure(found == w, || {
                format!("{name}: {found} {axis}, expected {w}")
            })?;
        }
    }
    finite(name, m.as_slice())
}

/// A square matrix of side `n` ([`matrix`]).
pub fn square(name: &str, m: &DMatrix<f64>, n: usize) -> Result<()> {
    matrix(name, m, Some(n), Some(n))
}

/// A vector of `len` finite values (any length when `None`).
pub fn vector(name: &str, v: &DVector<f64>, len: Option<usize>) -> Result<()> {
    ensure(v.ncols() == 1 && v.nrows() == v.as_slice().len(), || {
        format!(
            "{name} claims {} entries but stores {}",
            v.nrows(),
            v.as_slice().len()
        )
    })?;
    length(name, v.nrows(), len.unwrap_or(v.nrows()))?;
    finite(name, v.as_slice())
}

/// A list of `found` entries where `expected` belong.
pub fn length(name: &str, found: usize, expected: usize) -> Result<()> {
    ensure(found == expected, || {
        format!("{name}: {found} entries, expected {expected}")
    })
}

/// A parameter that is finite and `> 0`.
pub fn positive(name: &str, x: f64) -> Result<()> {
    ensure(x.is_finite() && x > 0.0, || {
        format!("{name} = {x} is not finite and > 0")
    })
}

/// A parameter that is finite and `>= 0`.
pub fn non_negative(name: &str, x: f64) -> Result<()> {
    ensure(x.is_finite() && x >= 0.0, || {
        format!("{name} = {x} is not finite and >= 0")
    })
}

/// A neighbour count `1 <= k < n`.
pub fn neighbours(k: usize, n: usize) -> Result<()> {
    ensure(k >= 1 && k < n, || {
        format!("k = {k} neighbours is not in 1..{n} (the training points)")
    })
}

/// Pairs of distinct points below `n`.
pub fn pairs(name: &str, pairs: impl IntoIterator<Item = (usize, usize)>, n: usize) -> Result<()> {
    for (e, (i, j)) in pairs.into_iter().enumerate() {
        ensure(i < n && j < n && i != j, || {
            format!("{name} {e} joins points {i} and {j} of {n}")
        })?;
    }
    Ok(())
}

/// The edges `(a, b, squared length)` of a tree over `n` nodes: ends in range and
/// distinct, lengths finite.
pub fn tree_edges(edges: &[(usize, usize, f64)], n: usize) -> Result<()> {
    pairs("tree edge", edges.iter().map(|&(a, b, _)| (a, b)), n)?;
    let lengths: Vec<f64> = edges.iter().map(|e| e.2).collect();
    finite("the tree's edge lengths", &lengths)
}

/// Indices below `n`.
pub fn indices(name: &str, values: &[usize], n: usize) -> Result<()> {
    match values.iter().position(|&i| i >= n) {
        None => Ok(()),
        Some(e) => Err(corrupt(format!("{name} {e} is point {} of {n}", values[e]))),
    }
}

/// A graph on `n` points (its own structure is checked when it is decoded).
pub fn graph(name: &str, g: &NeighbourGraph, n: usize) -> Result<()> {
    ensure(g.n() == n, || {
        format!("{name} has {} points, the model {n}", g.n())
    })
}

/// A kernel's eigenpairs and row means agree in size and are finite.
pub fn kernel(k: &unfold_linalg::CentredKernel) -> Result<()> {
    match k.inconsistency() {
        None => Ok(()),
        Some(what) => Err(corrupt(format!("the centred kernel: {what}"))),
    }
}

/// `order` is a permutation of `0..n`.
pub fn permutation(name: &str, order: &[usize], n: usize) -> Result<()> {
    length(name, order.len(), n)?;
    let mut seen = vec![false; n];
    for &i in order {
        ensure(i < n && !std::mem::replace(&mut seen[i], true), || {
            format!("{name} is not an ordering of the {n} points (at point {i})")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::method::decode;
    use crate::method::Encode;
    use crate::{MeuParams, PcaParams};
    use nalgebra::DMatrix;

    /// A change made to a fitted model before it is encoded.
    type Edit<T> = dyn FnOnce(&mut T);

    fn data() -> DMatrix<f64> {
        unfold_data::synthetic::swiss_roll(30, 0.05, 1)
            .unwrap()
            .points
    }

    /// The message of decoding `model` after `edit`.
    fn refusal<
        T: serde::Serialize + serde::de::DeserializeOwned + crate::registry::Model + 'static,
    >(
        mut model: T,
        edit: impl FnOnce(&mut T),
    ) -> String {
        edit(&mut model);
        let bytes = model.encode().unwrap();
        decode::<T>(&bytes)
            .err()
            .expect("the edited model is refused")
            .to_string()
    }

    #[test]
    fn inconsistent_meu_models_are_refused_saying_what_is_wrong() {
        let meu = MeuParams::new(2, 6).fit(&data()).unwrap();
        let bytes = meu.encode().unwrap();
        assert!(decode::<crate::Meu>(&bytes).is_ok());
        let cases: Vec<(Box<Edit<crate::Meu>>, &str)> = vec![
            (
                Box::new(|m| {
                    m.lambda.pop();
                }),
                "the multipliers: ",
            ),
            (
                Box::new(|m| m.lambda[0] = f64::NAN),
                "non-finite value NaN at entry 0",
            ),
            (Box::new(|m| m.lambda[1] = -1.0), "a multiplier is negative"),
            (
                Box::new(|m| m.edges[0] = (0, 30)),
                "edge 0 joins points 0 and 30 of 30",
            ),
            (Box::new(|m| m.edges[0] = (3, 2)), "does not have i < j"),
            (Box::new(|m| m.k = 30), "k = 30 neighbours is not in 1..30"),
            (
                Box::new(|m| m.gamma = -1.0),
                "gamma = -1 is not finite and >= 0",
            ),
            (
                Box::new(|m| {
                    m.latent_scale = m.latent_scale.rows(0, 1).into_owned();
                }),
                "the latent scale: 1 entries, expected 2",
            ),
        ];
        for (edit, expected) in cases {
            let msg = refusal(meu.clone(), edit);
            assert!(
                msg.contains("the file is corrupt") && msg.contains(expected),
                "{msg}"
            );
        }
    }

    #[test]
    fn pca_axes_and_variances_must_agree() {
        let pca = PcaParams::new(2).fit(&data()).unwrap();
        let msg = refusal(pca.clone(), |p| p.mean = p.mean.rows(0, 2).into_owned());
        assert!(msg.contains("the mean: 2 entries, expected 3"), "{msg}");
        let msg = refusal(pca, |p| p.components[(0, 1)] = f64::INFINITY);
        assert!(
            msg.contains("the principal axes: the non-finite value inf"),
            "{msg}"
        );
    }

    #[test]
    fn orderings_and_regressions_are_checked() {
        assert!(super::permutation("the order", &[2, 0, 1], 3).is_ok());
        let msg = super::permutation("the order", &[2, 0, 2], 3)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("not an ordering of the 3 points (at point 2)"),
            "{msg}"
        );
        assert!(super::permutation("the order", &[0, 1], 3).is_err());
        assert!(super::permutation("the order", &[0, 1, 7], 3).is_err());
    }
}
