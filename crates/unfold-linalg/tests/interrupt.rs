//! The dense inverse of a large factor checks the process's interruption flag between its
//! blocks (`unfold_core::interrupt`, which Python sets on Ctrl-C): with the flag set it
//! returns `Error::Interrupted`, and once the flag is cleared the same factor inverts. This
//! file holds one test, so that no other test of this binary runs while the process-wide
//! flag is set.

use nalgebra::DMatrix;
use unfold_core::{interrupt, Error};
use unfold_linalg::Cholesky;

#[test]
fn a_large_inverse_stops_on_the_flag_and_runs_once_it_is_cleared() {
    // Above the order from which factor and inverse run by blocks (4096): a diagonally
    // dominant matrix, whose inverse is checked on one column below.
    let n = 4200;
    let a = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => 4.0,
        1 => -1.0,
        _ => 0.0,
    });
    let c = Cholesky::new(&a, "test").unwrap();
    interrupt::request();
    let stopped = c.inverse();
    let stopped_owned = c.clone().into_inverse();
    interrupt::clear();
    assert!(matches!(stopped, Err(Error::Interrupted)));
    assert!(matches!(stopped_owned, Err(Error::Interrupted)));
    let inv = c.inverse().unwrap();
    assert_eq!(inv, inv.transpose());
    let e = &a * inv.column(n / 2);
    for (i, v) in e.iter().enumerate() {
        let want = if i == n / 2 { 1.0 } else { 0.0 };
        assert!((v - want).abs() < 1e-12, "row {i}: {v}");
    }
}
