//! A sparse Cholesky factor whose predicted fill would not fit the memory limit is refused
//! before the numeric factorisation, naming the fill per point and the fix; within the
//! limit it factorises. One test in its own binary: the limit is process-wide.

use unfold_core::{Error, MemoryLimit};
use unfold_linalg::sparse::CsrMatrix;
use unfold_linalg::sparse_cholesky::SparseCholesky;

#[test]
fn a_factor_over_the_memory_limit_is_refused_by_its_predicted_fill() {
    // A dense-ish 300 x 300 positive definite matrix (every pair within 60 of each other):
    // about 60 values per column of the factor.
    let n: usize = 300;
    let mut triplets = Vec::new();
    for i in 0..n {
        triplets.push((i, i, 200.0));
        for j in 0..n {
            if i != j && i.abs_diff(j) <= 60 {
                triplets.push((i, j, -1.0));
            }
        }
    }
    let a = CsrMatrix::from_triplets(n, n, &triplets);
    MemoryLimit::set_process(Some(MemoryLimit::given(64 << 10, "--max-memory")));
    let refused = SparseCholesky::new(&a, "the test precision");
    MemoryLimit::set_process(None);
    match refused {
        Err(Error::OverMemoryLimit(refusal)) => {
            let text = refusal.to_string();
            for part in [
                "the test precision",
                "sparse Cholesky factor",
                "values per point",
                "a smaller k",
            ] {
                assert!(text.contains(part), "{part:?} missing from {text}");
            }
        }
        other => panic!("expected a memory refusal, got {other:?}"),
    }
    assert!(SparseCholesky::new(&a, "the test precision").is_ok());
}
