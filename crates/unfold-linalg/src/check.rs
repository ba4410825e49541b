//! Input checks shared by the factorisations and eigensolvers: square, finite, symmetric.

use crate::sparse::CsrMatrix;
use crate::view::PAR_MIN_DIM;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{check_finite, Error, Result};

/// Relative asymmetry `|a_ij - a_ji| / max|a|` above which a matrix is rejected as
/// not symmetric. Products such as `X X^T` computed in floating point are symmetric to
/// about 1e-16, so this only catches genuinely non-symmetric input.
const SYMMETRY_TOL: f64 = 1e-10;

/// Side of the square tiles the symmetry check compares, so that both `a_ij` and `a_ji`
/// are read from cache rather than with a stride of n.
const TILE: usize = 64;

/// A dense matrix must be non-empty, square, finite and symmetric.
///
/// One pass over tiles of the lower triangle, each compared with its mirror tile (in
/// parallel from [`PAR_MIN_DIM`] on): a matrix of n = 5000 is checked at memory speed.
pub(crate) fn check_dense_symmetric(a: &DMatrix<f64>, context: &str) -> Result<()> {
    check_square(a.nrows(), a.ncols(), context)?;
    check_finite(a, context)?;
    let n = a.nrows();
    let tiles = n.div_ceil(TILE);
    let asymmetric_in = |tj: usize, scale: f64| {
        let (j0, j1) = (tj * TILE, ((tj + 1) * TILE).min(n));
        for ti in tj..tiles {
            let (i0, i1) = (ti * TILE, ((ti + 1) * TILE).min(n));
            for j in j0..j1 {
                for i in i0.max(j + 1)..i1 {
                    if (a[(i, j)] - a[(j, i)]).abs() > SYMMETRY_TOL * scale {
                        return Some((i, j));
                    }
                }
            }
        }
        None
    };
    let largest = |m: f64, v: &f64| m.max(v.abs());
    let bad = if n < PAR_MIN_DIM {
        let scale = a.as_slice().iter().fold(0.0, largest);
        (0..tiles).find_map(|tj| asymmetric_in(tj, scale))
    } else {
        let scale = a
            .as_slice()
            .par_iter()
            .fold(|| 0.0f64, largest)
            .reduce(|| 0.0, f64::max);
        (0..tiles)
            .into_par_iter()
            .find_map_first(|tj| asymmetric_in(tj, scale))
    };
    match bad {
        Some((i, j)) => Err(not_symmetric(context, i, j, a[(i, j)], a[(j, i)])),
        None => Ok(()),
    }
}

/// A sparse matrix must be non-empty, square, finite and symmetric (same pattern and
/// values on both sides of the diagonal, up to rounding).
///
/// One pass in row order: the entries `(j, i)` that mirror row `i`'s are met in increasing
/// `i` along each row `j`, so a cursor per row finds each mirror without a search.
pub(crate) fn check_sparse_symmetric(a: &CsrMatrix, context: &str) -> Result<()> {
    check_square(a.nrows(), a.ncols(), context)?;
    let (indptr, indices, values) = a.parts();
    if let Some(p) = values.iter().position(|v| !v.is_finite()) {
        let row = indptr.partition_point(|&start| start <= p) - 1;
        return Err(Error::NonFinite {
            what: context.to_string(),
            row,
            col: indices[p],
        });
    }
    let scale = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let bound = SYMMETRY_TOL * scale;
    // Before row i is visited, cursor[j] points past the entries of row j in columns < i.
    let mut cursor: Vec<usize> = indptr[..a.nrows()].to_vec();
    for i in 0..a.nrows() {
        for p in indptr[i]..indptr[i + 1] {
            let j = indices[p];
            // The mirror (j, i) is at cursor[j] if present; entries of row j in columns
            // below i that row i lacks are caught when their own row is visited.
            let end = indptr[j + 1];
            while cursor[j] < end && indices[cursor[j]] < i {
                let (k, w) = (indices[cursor[j]], values[cursor[j]]);
                if w.abs() > bound {
                    return Err(not_symmetric(context, j, k, w, 0.0));
                }
                cursor[j] += 1;
            }
            let mirror = if cursor[j] < end && indices[cursor[j]] == i {
                cursor[j] += 1;
                values[cursor[j] - 1]
            } else {
                0.0
            };
            if (values[p] - mirror).abs() > bound {
                return Err(not_symmetric(context, i, j, values[p], mirror));
            }
        }
    }
    Ok(())
}

pub(crate) fn check_square(nrows: usize, ncols: usize, context: &str) -> Result<()> {
    if nrows == 0 || ncols == 0 {
        return Err(Error::Empty(context.to_string()));
    }
    if nrows != ncols {
        return Err(Error::DimensionMismatch(format!(
            "{context}: the matrix must be square but is {nrows} x {ncols}"
        )));
    }
    Ok(())
}

fn not_symmetric(context: &str, i: usize, j: usize, aij: f64, aji: f64) -> Error {
    Error::invalid(
        context,
        format!(
            "the matrix must be symmetric but entry ({i}, {j}) = {aij:e} differs from \
             ({j}, {i}) = {aji:e}; symmetrise it with (A + A^T) / 2 if the asymmetry is rounding"
        ),
    )
}

/// Validates the number of wanted eigenpairs: `1 <= q <= n`.
pub(crate) fn check_q(q: usize, n: usize) -> Result<()> {
    if q == 0 {
        return Err(Error::invalid(
            "q",
            "the number of eigenpairs must be at least 1",
        ));
    }
    if q > n {
        return Err(Error::invalid(
            "q",
            format!("asked for {q} eigenpairs of a {n} x {n} matrix, which has only {n}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(n: usize, t: &[(usize, usize, f64)]) -> CsrMatrix {
        CsrMatrix::from_triplets(n, n, t)
    }

    #[test]
    fn sparse_symmetry_finds_every_kind_of_mismatch() {
        let sym: Vec<(usize, usize, f64)> = (0..6)
            .flat_map(|i| [(i, i, 2.0), (i, (i + 2) % 6, -0.5), ((i + 2) % 6, i, -0.5)])
            .collect();
        assert!(check_sparse_symmetric(&csr(6, &sym), "s").is_ok());
        let not_symmetric = |t: &[(usize, usize, f64)]| {
            matches!(
                check_sparse_symmetric(&csr(6, t), "s"),
                Err(Error::InvalidParameter { .. })
            )
        };
        // A value that differs from its mirror.
        let mut t = sym.clone();
        t.push((1, 3, 1e-3));
        assert!(not_symmetric(&t));
        // An entry without a mirror, below and above the diagonal, in the last row, and
        // in a row no later row refers to.
        for extra in [
            (4, 1, 1.0),
            (1, 4, 1.0),
            (5, 0, 1.0),
            (0, 5, 1.0),
            (3, 0, 1.0),
        ] {
            let mut t = sym.clone();
            t.push(extra);
            assert!(not_symmetric(&t), "{extra:?}");
        }
        // Rounding-level asymmetry passes.
        let mut t = sym.clone();
        t.push((1, 3, 1e-14));
        assert!(check_sparse_symmetric(&csr(6, &t), "s").is_ok());
        // A non-finite value is reported at its position.
        let mut t = sym;
        t.push((4, 0, f64::NAN));
        match check_sparse_symmetric(&csr(6, &t), "s") {
            Err(Error::NonFinite { row, col, .. }) => assert_eq!((row, col), (4, 0)),
            other => panic!("unexpected {other:?}"),
        }
    }
}
