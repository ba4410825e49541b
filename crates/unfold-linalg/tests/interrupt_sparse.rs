//! A large sparse Cholesky factorisation, one call of faer's that cannot check the
//! process's interruption flag, is abandoned when the flag is set while it runs
//! (`unfold_core::interrupt::abandonable`): the caller gets `Error::Interrupted` long before
//! the factor would be done, and once the flag is cleared the same matrix factorises. The
//! same holds on the threads of a rayon pool whose every thread is factorising, as a
//! parallel `select` sweep's candidates are. This file holds one test, so that no other
//! test of this binary runs while the process-wide flag is set.

use rayon::prelude::*;
use std::time::{Duration, Instant};
use unfold_core::{interrupt, Error};
use unfold_linalg::{CsrMatrix, SparseCholesky};

/// `I + L` of the 7-point grid graph on `m^3` nodes: the fill of a 3-D grid makes its
/// factor take a large multiple of the time the flag needs to be heard.
fn grid_precision(m: usize) -> CsrMatrix {
    let at = |x: usize, y: usize, z: usize| (x * m + y) * m + z;
    // Repeated positions are summed: each edge adds 1 to both degrees.
    let mut triplets = Vec::new();
    let mut link = |i: usize, j: usize| {
        triplets.extend([(i, j, -1.0), (j, i, -1.0), (i, i, 1.0), (j, j, 1.0)]);
    };
    for x in 0..m {
        for y in 0..m {
            for z in 0..m {
                let i = at(x, y, z);
                if x + 1 < m {
                    link(i, at(x + 1, y, z));
                }
                if y + 1 < m {
                    link(i, at(x, y + 1, z));
                }
                if z + 1 < m {
                    link(i, at(x, y, z + 1));
                }
            }
        }
    }
    let n = m * m * m;
    triplets.extend((0..n).map(|i| (i, i, 1.0)));
    CsrMatrix::from_triplets(n, n, &triplets)
}

#[test]
fn a_large_sparse_factorisation_is_abandoned_on_the_flag() {
    let a = grid_precision(40);
    let sweep = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for on_sweep in [false, true] {
        // The request comes after the ordering and symbolic analysis (tens of
        // milliseconds), while faer's numeric factorisation (about a second) runs.
        let start = Instant::now();
        let requester = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(150));
            interrupt::request();
        });
        let stopped = if on_sweep {
            // Two candidates, one on each of the pool's threads.
            sweep.install(|| {
                (0..2)
                    .into_par_iter()
                    .map(|_| SparseCholesky::new(&a, "test"))
                    .collect()
            })
        } else {
            vec![SparseCholesky::new(&a, "test")]
        };
        let heard_after = start.elapsed();
        requester.join().unwrap();
        interrupt::clear();
        for s in &stopped {
            // (A factor's `Debug` would print all of it.)
            let outcome = s.as_ref().map(|_| "a factor");
            assert!(
                matches!(outcome, Err(Error::Interrupted)),
                "on a sweep: {on_sweep}: {outcome:?}"
            );
        }

        let start = Instant::now();
        let factor = SparseCholesky::new(&a, "test").unwrap();
        let full = start.elapsed();
        // The stop did not wait for the factorisation (which the abandoned copies may
        // still be running, beside this one).
        assert!(
            heard_after < full / 2,
            "on a sweep: {on_sweep}: stopped after {heard_after:?}; the factorisation \
             takes {full:?}"
        );
        // The factor is right: A x = b for x = 1 (row sums of I + L are 1).
        let mut x = vec![1.0; a.nrows()];
        factor.solve_in_place(&mut x);
        for (i, v) in x.iter().enumerate() {
            assert!((v - 1.0).abs() < 1e-10, "row {i}: {v}");
        }
    }
}
