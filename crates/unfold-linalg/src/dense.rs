//! Small dense-matrix helpers.

use nalgebra::DMatrix;

/// Replaces a square matrix by its symmetric part `(A + A^T) / 2`, in place, so that the
/// round-off asymmetry of a product such as `B^T A B` does not fail the symmetry checks
/// of the eigensolvers and factorisations. The diagonal is unchanged, and each mirrored
/// pair gets the same bits, `0.5 (a_ij + a_ji)`.
///
/// # Panics
/// If `m` is not square.
pub fn symmetrise(m: &mut DMatrix<f64>) {
    assert!(m.is_square(), "symmetrise: the matrix is not square");
    let n = m.nrows();
    for j in 0..n {
        for i in 0..j {
            let v = 0.5 * (m[(i, j)] + m[(j, i)]);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
}

/// [`symmetrise`] of an owned matrix, returned.
pub fn symmetrised(mut m: DMatrix<f64>) -> DMatrix<f64> {
    symmetrise(&mut m);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_part_to_the_bit() {
        let a = DMatrix::from_fn(5, 5, |i, j| ((i * 5 + j) as f64 * 0.731).sin());
        let s = symmetrised(a.clone());
        assert_eq!(s, s.transpose());
        assert_eq!(s, (&a + a.transpose()) * 0.5);
    }
}
