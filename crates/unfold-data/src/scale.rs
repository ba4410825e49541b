//! Centring and standardisation of feature columns.

use nalgebra::{DMatrix, DVector};

/// Column-standardised data: `points = (y - mean) / scale` column by column.
#[derive(Clone, Debug, PartialEq)]
pub struct Standardised {
    pub points: DMatrix<f64>,
    pub mean: DVector<f64>,
    /// Standard deviation (divisor n - 1) of each column; 1 for a constant column, which
    /// is then only centred.
    pub scale: DVector<f64>,
}

/// Subtracts each column's mean.
pub fn centre(y: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let mean = DVector::from_fn(y.ncols(), |j, _| y.column(j).mean());
    let c = DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j]);
    (c, mean)
}

/// z-scores every column (mean 0, standard deviation 1 with divisor n - 1).
pub fn standardise(y: &DMatrix<f64>) -> Standardised {
    let (mut points, mean) = centre(y);
    let denom = (y.nrows().max(2) - 1) as f64;
    let scale = DVector::from_fn(y.ncols(), |j, _| {
        let sd = (points.column(j).norm_squared() / denom).sqrt();
        if sd > 0.0 {
            sd
        } else {
            1.0
        }
    });
    for (j, mut col) in points.column_iter_mut().enumerate() {
        col /= scale[j];
    }
    Standardised {
        points,
        mean,
        scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_mean_unit_sd_and_constant_columns() {
        let y = DMatrix::from_row_slice(4, 2, &[1.0, 5.0, 2.0, 5.0, 3.0, 5.0, 6.0, 5.0]);
        let s = standardise(&y);
        assert!((s.mean[0] - 3.0).abs() < 1e-15);
        assert!(s.points.column(0).sum().abs() < 1e-14);
        assert!((s.points.column(0).norm_squared() / 3.0 - 1.0).abs() < 1e-14);
        assert_eq!(s.scale[1], 1.0);
        assert!(s.points.column(1).iter().all(|&v| v == 0.0));
    }
}
