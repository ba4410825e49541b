//! The data and parameters of one fit and the exact block minimisations over `{W, Z, C}`
//! (Proposition 5), with the paper's objective (31).

use super::residual::{
    r_residual_term_of, residual_block, residual_blocks, residual_plan_of, residual_term_of_u,
    ResidualPlan,
};
use super::start::top_eigenvectors;
use super::tree::tree_energy;
use faer::MatRef;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use unfold_core::{Error, Result};
use unfold_linalg::gemm::{
    centred_mul, centred_tr_mul_self, mul, mul_of, tr_mul, tr_mul_self, tr_mul_self_of,
};
use unfold_linalg::soft_assign::{Assignment, DataRows, Products};
use unfold_linalg::{symmetrised, Cholesky};

/// `Yc^T Yc` for the problem's data: `Y` centred by `mean` block by block (never formed),
/// or `Y` itself for `mean` `None`.
pub(crate) fn gram(y: MatRef<'_, f64>, mean: Option<&DVector<f64>>) -> DMatrix<f64> {
    match mean {
        Some(mean) => centred_tr_mul_self(y, mean.as_slice()),
        None => tr_mul_self_of(y),
    }
}

/// The block variables `{W, Z, C}`.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) w: DMatrix<f64>,
    pub(crate) z: DMatrix<f64>,
    pub(crate) c: DMatrix<f64>,
}

/// The data and parameters of one fit. The data are `Y - 1 mu^T` for the stored `mean`
/// (the paper's centred data) or `Y` itself (`mean` `None`, the R package's); every
/// product subtracts the mean's share, so the centred N x D matrix is never formed. `Y` is
/// a view of any layout, read where it lies: a row-major view (a C-order array) gets no
/// column-major copy (below [`DENSE_PRODUCT_COLS`](unfold_linalg::soft_assign::DENSE_PRODUCT_COLS)
/// columns `R^T Y` reads the padded row copy of [`DataRows`], whatever the layout).
pub(crate) struct Problem<'a> {
    pub(crate) y: MatRef<'a, f64>,
    /// The column means `mu` subtracted from the rows of `y`, if any.
    pub(super) mean: Option<&'a DVector<f64>>,
    /// The rows of `Y` laid out for `R^T Y`.
    pub(crate) y_rows: DataRows<'a>,
    pub(crate) yty: DMatrix<f64>,
    pub(crate) lambda: f64,
    pub(crate) sigma: f64,
    pub(crate) gamma: f64,
    pub(crate) dim: usize,
}

impl<'a> Problem<'a> {
    /// The problem on `Y - 1 mean^T` (on `Y` itself for `mean` `None`) whose Gram matrix
    /// `yty` ([`gram`]) the caller has computed, e.g. to choose `sigma` and `dim` from its
    /// spectrum. The centred matrix is not formed: `Yc^T Yc` is summed over blocks of
    /// centred rows, and the linear products take the mean's rank-one share away
    /// (`Yc B = Y B - 1 (mean^T B)`, `R^T Yc = R^T Y - (R^T 1) mean^T`), which loses no
    /// more than centring each entry first.
    pub(crate) fn with_gram(
        y: MatRef<'a, f64>,
        mean: Option<&'a DVector<f64>>,
        yty: DMatrix<f64>,
        lambda: f64,
        sigma: f64,
        gamma: f64,
        dim: usize,
    ) -> Self {
        Problem {
            y,
            mean,
            y_rows: DataRows::of(y),
            yty,
            lambda,
            sigma,
            gamma,
            dim,
        }
    }

    /// The problem on `Y` itself, its Gram matrix computed here.
    #[cfg(test)]
    pub(crate) fn new(y: MatRef<'a, f64>, lambda: f64, sigma: f64, gamma: f64, dim: usize) -> Self {
        Problem::with_gram(y, None, gram(y, None), lambda, sigma, gamma, dim)
    }

    /// The problem on `Y - 1 mean^T`, its Gram matrix computed here.
    #[cfg(test)]
    pub(crate) fn centred(
        y: MatRef<'a, f64>,
        mean: &'a DVector<f64>,
        lambda: f64,
        sigma: f64,
        gamma: f64,
        dim: usize,
    ) -> Self {
        Problem::with_gram(
            y,
            Some(mean),
            gram(y, Some(mean)),
            lambda,
            sigma,
            gamma,
            dim,
        )
    }

    /// `Yc B` for the problem's data `Yc` (N x D) and `B` (D x m).
    pub(crate) fn y_mul(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        match self.mean {
            Some(mean) => centred_mul(self.y, mean, b),
            None => mul_of(self.y, b),
        }
    }

    /// `R^T Yc`, `R^T R` and `R^T 1` ([`Assignment::products`] on the problem's data).
    fn products(&self, r: &Assignment) -> Products {
        let mut products = r.products(&self.y_rows);
        if let Some(mean) = self.mean {
            let mass = DVector::from_column_slice(&products.col_sums);
            for (mut col, &m) in products.tr_mul.column_iter_mut().zip(mean.iter()) {
                col.axpy(-m, &mass, 1.0);
            }
        }
        products
    }

    /// `||Yc - Z W^T||_F^2`, summed over fixed blocks of rows in order (the N x D
    /// residual is never formed).
    fn reconstruction_error(&self, z: &DMatrix<f64>, w: &DMatrix<f64>) -> f64 {
        let parts: Vec<f64> = residual_blocks(self.y.nrows())
            .par_iter()
            .map(|rows| residual_block(self.y, self.mean, z, w, rows).norm_squared())
            .collect();
        parts.iter().sum()
    }

    /// Proposition 5: the exact minimiser of (31) over `{W, Z, C}` for fixed `L` and `R`;
    /// with `r_objective`, also the R package's residual term at the new state.
    ///
    /// `Y^T Z`, `R^T Z` and `Z^T Z` come from the K x D and K x K products of the update
    /// (`Z = (Y W + R G) / (1 + gamma)`, `G = A^{-1} B W`), so `E^T E` and its eigenvectors
    /// `V` are known before `Z` is formed, and `Y V` comes from the same pass over `Y` as
    /// `Y W`.
    pub(crate) fn update_wzc(
        &self,
        lap: &DMatrix<f64>,
        r: &Assignment,
        r_objective: bool,
    ) -> Result<(State, Option<f64>)> {
        let g = self.gamma;
        let products = self.products(r);
        let m = self.centre_system(lap, &products.col_sums);
        let gram = products.gram;
        let mut a = gram.clone();
        a.zip_apply(&m, |aij, mij| *aij = (1.0 + g) / g * mij - *aij);
        let a_chol = Cholesky::new(&symmetrised(a), "DDRTree: the K x K Woodbury system")
            .map_err(|e| singular_advice(e, "((1+gamma)/gamma) M - R^T R"))?;
        let b = products.tr_mul;
        let ainv_b = a_chol.solve(&b);
        let mut yqy = tr_mul(&b, &ainv_b);
        yqy += &self.yty;
        yqy /= 1.0 + g;
        let w = top_eigenvectors(&symmetrised(yqy), self.dim)?;
        let gw = ainv_b * &w;
        let s = 1.0 / (1.0 + g);
        let ytz = (&self.yty * &w + b.tr_mul(&gw)) * s;
        let rtz = (&b * &w + &gram * &gw) * s;
        let c = self.centres_for(&m, &rtz)?;
        let plan = if r_objective {
            let ztz = (ytz.tr_mul(&w) + rtz.tr_mul(&gw)) * s;
            Some(self.residual_plan(&w, &ytz, &symmetrised(ztz))?)
        } else {
            None
        };
        // Y W, and Y V when the plan needs it, in one product.
        let (yw, yv) = match &plan {
            Some(Some(ResidualPlan::Directions(eig))) => {
                let (d, q) = (w.ncols(), eig.vectors.ncols());
                let mut wv = DMatrix::zeros(w.nrows(), d + q);
                wv.columns_mut(0, d).copy_from(&w);
                wv.columns_mut(d, q).copy_from(&eig.vectors);
                let ywv = self.y_mul(&wv);
                (
                    ywv.columns(0, d).into_owned(),
                    Some(ywv.columns(d, q).into_owned()),
                )
            }
            _ => (self.y_mul(&w), None),
        };
        let mut z = yw + r.mul(&gw);
        z *= s;
        let residual = match plan {
            Some(plan) => Some(self.residual_finish(plan, &z, &w, yv)?),
            None => None,
        };
        Ok((State { w, z, c }, residual))
    }

    /// `M = (lambda/gamma) L + Gamma`, `Gamma = diag(1^T R)` from the column sums of `R`.
    pub(super) fn centre_system(&self, lap: &DMatrix<f64>, col_sums: &[f64]) -> DMatrix<f64> {
        let mut m = lap * (self.lambda / self.gamma);
        for (k, &v) in col_sums.iter().enumerate() {
            m[(k, k)] += v;
        }
        m
    }

    /// `C = M^{-1} R^T Z`, the stationary point of (31) in `C`, from `rtz = R^T Z`.
    fn centres_for(&self, m: &DMatrix<f64>, rtz: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        let chol = Cholesky::new(m, "DDRTree: the centre system (lambda/gamma) L + Gamma")
            .map_err(|e| singular_advice(e, "(lambda/gamma) L + Gamma"))?;
        Ok(chol.solve(rtz))
    }

    /// The terms of the paper's objective (31) at `state`, tree `edges` and assignments
    /// `assign`, with `d_ik = ||z_i - c_k||^2`: `reconstruction` `||Y - Z W^T||^2`, `tree`
    /// `lambda sum_(a,b) ||c_a - c_b||^2` and `assignment` `gamma (sum r_ik d_ik + sigma
    /// sum r_ik log r_ik)`; the objective is their sum in this order ([`sum_terms`]).
    pub(crate) fn objective_terms(
        &self,
        state: &State,
        edges: &[(usize, usize, f64)],
        assign: &Assignment,
    ) -> Vec<(String, f64)> {
        let fit = self.reconstruction_error(&state.z, &state.w);
        let cluster = assign.dot_to(&state.z, &state.c) + assign.neg_entropy();
        vec![
            ("reconstruction".into(), fit),
            ("tree".into(), self.lambda * tree_energy(&state.c, edges)),
            ("assignment".into(), self.gamma * cluster),
        ]
    }
}

fn singular_advice(e: Error, what: &str) -> Error {
    match e {
        Error::NotPositiveDefinite { context, pivot, .. } => Error::NotPositiveDefinite {
            context,
            pivot,
            advice: format!(
                "{what} lost definiteness (a centre received no assignment weight); increase \
                 sigma or use fewer centres"
            ),
        },
        other => other,
    }
}

impl Problem<'_> {
    /// [`r_residual_term`] of `E = Y - Z W^T` without forming `E`, given `ytz = Y^T Z`
    /// ([`Problem::residual_plan`], then `Y V` by its own pass over `Y`).
    pub(super) fn r_residual_term(
        &self,
        z: &DMatrix<f64>,
        w: &DMatrix<f64>,
        ytz: &DMatrix<f64>,
    ) -> Result<f64> {
        let plan = self.residual_plan(w, ytz, &tr_mul_self(z))?;
        self.residual_finish(plan, z, w, None)
    }

    /// The first step of [`r_residual_term`] for `E = Y - Z W^T`, from `ytz = Y^T Z` and
    /// `ztz = Z^T Z`: `E^T E = Y^T Y - G - G^T + W (Z^T Z) W^T` with `G = (Y^T Z) W^T`, and
    /// its top eigenpairs. The second step needs `E V = Y V - Z (W^T V)`, so the whole
    /// term costs `O(N D d)` instead of `O(N D^2)`. When the residual holds less than
    /// `1e-6` of the data's sum of squares, the subtraction would lose more than six
    /// digits: `None`, and `E` is formed block by block instead ([`r_residual_term_of`]).
    pub(super) fn residual_plan(
        &self,
        w: &DMatrix<f64>,
        ytz: &DMatrix<f64>,
        ztz: &DMatrix<f64>,
    ) -> Result<Option<ResidualPlan>> {
        let g = mul(ytz, &w.transpose());
        let wzzw = mul(&mul(w, ztz), &w.transpose());
        let ete = symmetrised(&self.yty - &g - g.transpose() + wzzw);
        if ete.trace() < 1e-6 * self.yty.trace() {
            return Ok(None);
        }
        let (n, p) = (self.y.nrows(), self.y.ncols());
        residual_plan_of(n.min(p), self.dim, &ete).map(Some)
    }

    /// The second step of [`r_residual_term`]; for [`ResidualPlan::Directions`], `yv` is
    /// `Y V` when the caller has it (otherwise it is computed here).
    pub(super) fn residual_finish(
        &self,
        plan: Option<ResidualPlan>,
        z: &DMatrix<f64>,
        w: &DMatrix<f64>,
        yv: Option<DMatrix<f64>>,
    ) -> Result<f64> {
        match plan {
            Some(ResidualPlan::Value(v)) => Ok(v),
            Some(ResidualPlan::Directions(eig)) => {
                let yv = yv.unwrap_or_else(|| self.y_mul(&eig.vectors));
                let ev = yv - mul(z, &tr_mul(w, &eig.vectors));
                Ok(residual_term_of_u(&ev, &eig.values))
            }
            None => r_residual_term_of(self.y, self.mean, z, w, self.dim),
        }
    }
}
