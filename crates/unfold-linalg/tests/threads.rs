//! The faer-backed kernels give the same bits on any number of threads, at sizes where
//! they run in parallel (from `PAR_MIN_DIM` on): faer splits its work by the `Par` it is
//! given, which `unfold_linalg::view::par` fixes independently of rayon's pool.

use nalgebra::DMatrix;
use unfold_linalg::gemm::{mul, mul_with, tr_mul};
use unfold_linalg::view::{as_faer, par, PAR_MIN_DIM};
use unfold_linalg::{
    largest_eigenpairs, sym_eigen, Cholesky, CsrMatrix, SparseCholesky, SparseSymbolic, SymMatrix,
};

fn bits(m: &DMatrix<f64>) -> Vec<u64> {
    m.iter().map(|v| v.to_bits()).collect()
}

/// Every kernel's output, in one list of bits.
fn kernels(n: usize) -> Vec<Vec<u64>> {
    let a = DMatrix::from_fn(n, n, |i, j| (((i * 31 + j * 17) % 97) as f64 / 9.7).sin());
    let mut s = &a + a.transpose();
    s += DMatrix::identity(n, n) * (2 * n) as f64;
    let thin = DMatrix::from_fn(n, 3, |i, j| ((i + 5 * j) as f64).cos());
    // A path graph Laplacian plus a shift: sparse, positive definite.
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, 3.0));
        if i + 1 < n {
            t.extend([(i, i + 1, -1.0), (i + 1, i, -1.0)]);
        }
    }
    let sparse = CsrMatrix::from_triplets(n, n, &t);
    let factor = SparseSymbolic::analyse(&sparse, "test")
        .unwrap()
        .factorise(&sparse, "test")
        .unwrap();
    let mut rhs = thin.clone();
    SparseCholesky::new(&sparse, "test")
        .unwrap()
        .solve_block_in_place(&mut rhs);
    vec![
        bits(&mul(&a, &a)),
        bits(&tr_mul(&a, &thin)),
        bits(&mul_with(as_faer(&s), as_faer(&thin), par())),
        bits(&Cholesky::new(&s, "test").unwrap().inverse().unwrap()),
        bits(&sym_eigen(&s).unwrap().vectors),
        bits(&largest_eigenpairs(SymMatrix::Dense(&s), 3).unwrap().vectors),
        bits(&rhs),
        factor
            .selected_inverse()
            .unwrap()
            .diagonal()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    ]
}

#[test]
fn faer_kernels_give_the_same_bits_on_1_2_and_3_threads() {
    for n in [100, PAR_MIN_DIM + 88] {
        let runs: Vec<Vec<Vec<u64>>> = [1, 2, 3]
            .iter()
            .map(|&t| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap();
                pool.install(|| kernels(n))
            })
            .collect();
        for (t, run) in runs.iter().enumerate().skip(1) {
            for (kernel, (a, b)) in run.iter().zip(&runs[0]).enumerate() {
                assert!(
                    a == b,
                    "kernel {kernel} at n = {n}: {} threads differ from 1",
                    t + 1
                );
            }
        }
    }
}
