//! A large sparse Cholesky factorisation, one call of faer's that cannot check the
//! process's interruption flag, is abandoned when the flag is set while it runs
//! (`unfold_core::interrupt::abandonable`): the caller gets `Error::Interrupted` long before
//! the factor would be done, and once the flag is cleared the same matrix factorises. This
//! file holds one test, so that no other test of this binary runs while the process-wide
//! flag is set.

use std::time::{Duration, Instant};
use unfold_core::{interrupt, Error};
use unfold_linalg::{CsrMatrix, SparseCholesky};

/// `I + L` of the 7-point grid graph on `m^3` nodes: the fill of a 3-D grid makes its
/// factor take a large multiple of the time the flag needs to be heard.
fn grid_precision(m: usize) -> CsrMatrix {
    let at = |x: usize, y: usize, z: usize| (x * m + y) * m + z;
    let mut triplets = Vec::new();
    for x in 0..m {
        for y in 0..m {
            for z in 0..m {
                let i = at(x, y, z);
                let mut degree = 0.0;
                let mut link = |j: usize| {
                    triplets.push((i, j, -1.0));
                    triplets.push((j, i, -1.0));
                };
                if x + 1 < m {
                    link(at(x + 1, y, z));
                }
                if y + 1 < m {
                    link(at(x, y + 1, z));
                }
                if z + 1 < m {
                    link(at(x, y, z + 1));
                }
                for (dx, dy, dz) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                    let (xa, ya, za) = (x + dx, y + dy, z + dz);
                    degree += f64::from(u8::from(xa < m && ya < m && za < m));
                    degree += f64::from(u8::from(x >= dx && y >= dy && z >= dz));
                }
                triplets.push((i, i, 1.0 + degree));
            }
        }
    }
    CsrMatrix::from_triplets(m * m * m, m * m * m, &triplets)
}

#[test]
fn a_large_sparse_factorisation_is_abandoned_on_the_flag() {
    let a = grid_precision(40);
    // The request comes after the ordering and symbolic analysis (tens of milliseconds),
    // while faer's numeric factorisation (about a second) runs.
    let start = Instant::now();
    let requester = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(150));
        interrupt::request();
    });
    let stopped = SparseCholesky::new(&a, "test");
    let heard_after = start.elapsed();
    requester.join().unwrap();
    interrupt::clear();
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");

    let start = Instant::now();
    let factor = SparseCholesky::new(&a, "test").unwrap();
    let full = start.elapsed();
    // The stop did not wait for the factorisation (which the abandoned copy may still be
    // running, beside this one).
    assert!(
        heard_after < full / 2,
        "stopped after {heard_after:?}; the factorisation takes {full:?}"
    );
    // The factor is right: A x = b for x = 1 (row sums of I + L are 1).
    let mut x = vec![1.0; a.nrows()];
    factor.solve_in_place(&mut x);
    for (i, v) in x.iter().enumerate() {
        assert!((v - 1.0).abs() < 1e-10, "row {i}: {v}");
    }
}
