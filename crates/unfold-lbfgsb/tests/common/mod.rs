//! Shared test helpers: objectives and the KKT check.

use unfold_lbfgsb::LbfgsbReport;

/// Chained Rosenbrock `sum 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2` and its gradient.
pub fn rosenbrock(x: &[f64], g: &mut [f64]) -> f64 {
    g.iter_mut().for_each(|v| *v = 0.0);
    let mut f = 0.0;
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        f += 100.0 * a * a + b * b;
        g[i] += -400.0 * x[i] * a - 2.0 * b;
        g[i + 1] += 200.0 * a;
    }
    f
}

/// Asserts the first-order (KKT) conditions for the box: free variables have `|g_i| <= tol`,
/// variables at their lower bound `g_i >= -tol`, at their upper bound `g_i <= tol`
/// (fixed variables, `l = u`, have no condition).
#[allow(dead_code)]
pub fn assert_kkt(r: &LbfgsbReport, bounds: &[(f64, f64)], tol: f64) {
    for (i, (&xi, &gi)) in r.x.iter().zip(&r.g).enumerate() {
        let (l, u) = bounds[i];
        assert!(l <= xi && xi <= u, "x[{i}] = {xi} outside [{l}, {u}]");
        if l == u {
            // A fixed variable has no sign condition.
        } else if xi == l {
            assert!(gi >= -tol, "x[{i}] at lower bound with g = {gi}");
        } else if xi == u {
            assert!(gi <= tol, "x[{i}] at upper bound with g = {gi}");
        } else {
            assert!(gi.abs() <= tol, "free x[{i}] = {xi} with g = {gi}");
        }
    }
}

/// Deterministic pseudo-random numbers in [-1, 1) (64-bit LCG), for building test problems.
#[allow(dead_code)]
pub struct Lcg(pub u64);

#[allow(dead_code)]
impl Lcg {
    /// Next value in [-1, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}
