//! A symmetric sparsity pattern analysed for factorisation, shared by the sparse Cholesky
//! with selected inversion ([`crate::SparseSymbolic`]) and the quasi-definite `L D L^T`
//! ([`crate::QuasiDefiniteSymbolic`]): the fill-reducing ordering, faer's symbolic
//! factorisation, and the layout of the lower triangle's values that a factorisation
//! takes.

use crate::check::check_sparse_symmetric;
use crate::dissection::nested_dissection;
use crate::selected_inverse::FillOrdering;
use crate::sparse::CsrMatrix;
use crate::sparse_cholesky::{index_overflow, lower_triangle, try_symbolic_cholesky};
use faer::sparse::linalg::cholesky::SymbolicCholesky;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use std::sync::Arc;
use unfold_core::{Error, Result};

/// An analysed symmetric pattern.
#[derive(Debug)]
pub(crate) struct AnalysedPattern {
    pub n: usize,
    /// Shared with the thread a large numeric factorisation runs on.
    pub symbolic: Arc<SymbolicCholesky<u32>>,
    /// The analysed pattern (CSR), to check that a factorised matrix has it.
    indptr: Vec<usize>,
    indices: Vec<usize>,
    /// The lower triangle's pattern in compressed columns, handed to faer.
    pub lower_col_ptr: Vec<u32>,
    pub lower_row_idx: Vec<u32>,
}

impl AnalysedPattern {
    /// Analyses the pattern of `a` (square, symmetric) under `ordering`.
    pub fn new(a: &CsrMatrix, ordering: FillOrdering<'_>, context: &str) -> Result<Self> {
        Self::try_new(a, ordering, context)?.ok_or_else(|| index_overflow(context))
    }

    /// [`AnalysedPattern::new`], with `None` where the factor would hold more than 2^32
    /// entries (32-bit indices).
    pub fn try_new(
        a: &CsrMatrix,
        ordering: FillOrdering<'_>,
        context: &str,
    ) -> Result<Option<Self>> {
        check_sparse_symmetric(a, context)?;
        let n = a.nrows();
        let (lower_col_ptr, lower_row_idx, _) = lower_triangle(a, 0.0, context)?;
        let (indptr, indices, _) = a.parts();
        let forward = match ordering {
            FillOrdering::Amd => None,
            FillOrdering::Dissection(points) => {
                Some(nested_dissection(indptr, indices, points, context)?)
            }
        };
        let Some(symbolic) = try_symbolic_cholesky(
            n,
            &lower_col_ptr,
            &lower_row_idx,
            forward.as_deref(),
            context,
        )?
        else {
            return Ok(None);
        };
        Ok(Some(AnalysedPattern {
            n,
            symbolic: Arc::new(symbolic),
            indptr: indptr.to_vec(),
            indices: indices.to_vec(),
            lower_col_ptr,
            lower_row_idx,
        }))
    }

    /// The lower triangle's values of `a`, which must have the analysed pattern and be
    /// symmetric.
    pub fn lower_values(&self, a: &CsrMatrix, context: &str) -> Result<Vec<f64>> {
        let (indptr, indices, _) = a.parts();
        if a.nrows() != self.n || indptr != self.indptr || indices != self.indices {
            return Err(Error::invalid(
                context,
                "the matrix's sparsity pattern differs from the one analysed; analyse the \
                 new pattern first",
            ));
        }
        check_sparse_symmetric(a, context)?;
        Ok(lower_triangle(a, 0.0, context)?.2)
    }

    /// The lower triangle with the values `lower`, checked for their number and finiteness,
    /// as faer takes it.
    pub fn lower_matrix<'a>(
        &'a self,
        lower: &'a [f64],
        context: &str,
    ) -> Result<SparseColMatRef<'a, u32, f64>> {
        if lower.len() != self.lower_row_idx.len() {
            return Err(Error::DimensionMismatch(format!(
                "{context}: {} lower-triangle values given for a pattern of {}",
                lower.len(),
                self.lower_row_idx.len()
            )));
        }
        if let Some(k) = lower.iter().position(|v| !v.is_finite()) {
            let column = self.lower_col_ptr.partition_point(|&p| p as usize <= k) - 1;
            return Err(Error::NonFinite {
                what: context.to_string(),
                row: self.lower_row_idx[k] as usize,
                col: column,
            });
        }
        let sym = SymbolicSparseColMatRef::new_checked(
            self.n,
            self.n,
            &self.lower_col_ptr,
            None,
            &self.lower_row_idx,
        );
        Ok(SparseColMatRef::new(sym, lower))
    }
}
