//! The memory of the exact LL-LVM fit and its refusal when that does not fit.

use super::LlLvmParams;
use unfold_core::{Footprint, MemoryLimit, Result};

/// What to use when LL-LVM's dense (n dx) x (n dx) covariances do not fit.
const ALTERNATIVE: &str =
    "LL-LVM's per-point family (posterior=factorised, --posterior factorised), sparse at any size; meu; or the full family on a smaller subsample of the points";

impl LlLvmParams {
    /// The peak memory in bytes of a fit on `n` points of dimension `dy`, with
    /// `N = n dx`, `R` restarts of which `c = min(R, threads)` run at once:
    ///
    /// ```text
    /// bytes = 8 (4 n^2 + c (4 N^2 + 3 n^2 + 3 dy N) + (R - c) (2 N^2 + dy N))
    /// ```
    ///
    /// The problem holds `L^+` and its products with the graph (4 n^2). A running restart
    /// peaks in the q(C) update with four N x N matrices: the covariance of q(x) it keeps,
    /// `Gamma_hat` (in the storage of the previous covariance of q(C)), the precision made
    /// from it (factorised in place, then the new covariance) and the inverse's scratch;
    /// the last two are kept between iterations in the problem's pool, which also keeps the
    /// three n x n buffers of the expected forms; `<x x^T>` and `<C^T C>` are never formed
    /// as N x N matrices; the maps' mean, `<H>` and its transpose are dy x N each. A
    /// finished restart keeps its two covariances and mean of the maps until the best is
    /// chosen (its two spare N x N buffers stay in the pool for the next restart). Against a
    /// counting allocator at n = 200 this is within 15% of the real peak (0.97x to 1.13x,
    /// `tests/memory_footprint.rs`).
    pub fn footprint(&self, n: usize, dy: usize) -> u64 {
        let restarts = self.restarts.max(1) as u128;
        let running = restarts.min(rayon::current_num_threads().max(1) as u128);
        let (n, dy) = (n as u128, dy as u128);
        let big = n * self.dim as u128;
        let words = 4 * n * n
            + running * (4 * big * big + 3 * n * n + 3 * dy * big)
            + (restarts - running) * (2 * big * big + dy * big);
        u64::try_from(8 * words).unwrap_or(u64::MAX)
    }

    /// Refuses a fit on `n` points of dimension `dy` whose [`LlLvmParams::footprint`]
    /// exceeds the memory limit.
    pub(super) fn check_memory(&self, n: usize, dy: usize) -> Result<()> {
        MemoryLimit::resolve(self.memory_limit.as_ref())?.check(&Footprint {
            method: "LL-LVM",
            n,
            bytes: &|m| self.footprint(m, dy),
            holds: format!(
                "dense (n dx) x (n dx) covariances with dx = {}, for {} restart(s)",
                self.dim, self.restarts
            ),
            alternative: ALTERNATIVE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lvm::lllvm::Posterior;
    use nalgebra::DMatrix;
    use unfold_core::Error;

    /// Above the memory limit every entry of the full family (kNN fit, given graphs) is
    /// refused, naming the limit and the alternatives; `auto` fits the per-point family
    /// where only that one fits, and refuses it, by name, below both.
    #[test]
    fn refuses_n_above_the_memory_limit() {
        let y: DMatrix<f64> = unfold_data::synthetic::swiss_roll(200, 0.05, 1)
            .unwrap()
            .points;
        let auto = LlLvmParams::new(2, 6).max_iter(3);
        let full_bytes = auto.footprint(200, 3);
        let between = auto
            .clone()
            .memory_limit(Some(MemoryLimit::given(full_bytes - 1, "the test's limit")));
        assert_eq!(between.fit(&y).unwrap().posterior(), Posterior::Factorised);
        let limit = Some(MemoryLimit::given(1 << 20, "the test's limit"));
        let auto = auto.memory_limit(limit);
        let text = auto.fit(&y).unwrap_err().to_string();
        assert!(
            text.contains("LL-LVM (per-point family) on 200 points"),
            "{text}"
        );
        let params = auto.posterior(Posterior::Full);
        let text = params.fit(&y).unwrap_err().to_string();
        for part in [
            "LL-LVM on 200 points",
            "dx = 2",
            "limit of 1.0 MiB (the test's limit)",
            "posterior=factorised",
            "meu",
            "smaller subsample",
        ] {
            assert!(text.contains(part), "{part:?} missing: {text}");
        }
        let (_, graph) = params
            .graph
            .build(
                &y,
                unfold_graph::Weighting::Binary,
                "t",
                &unfold_core::Silent,
            )
            .unwrap();
        let e = params.compare_graphs(&y, &[graph]).unwrap_err();
        assert!(matches!(&e, Error::OverMemoryLimit(r) if r.n == 200), "{e}");
        // One restart, dx = 2, dy = 3: 4 n^2 + 4 (2n)^2 + 3 n^2 + 3 * 3 * 2n words.
        let n = 200u64;
        assert_eq!(
            params.footprint(200, 3),
            8 * (4 * n * n + 16 * n * n + 3 * n * n + 18 * n)
        );
    }
}
