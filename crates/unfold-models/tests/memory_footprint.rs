//! The footprints of the dense methods against their real peak memory, measured by a
//! counting allocator (std's `GlobalAlloc` around the system allocator, no dependency).
//!
//! One test function: the counter is global, so nothing else may allocate while a fit is
//! measured (a second test in this binary would run in parallel).

use nalgebra::DMatrix;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use unfold_core::{Error, MemoryLimit};
use unfold_models::grf::drill::mean_second_moment;
use unfold_models::{DrillParams, Embedding, LlLvmParams, MvuParams};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(size: usize) {
    let now = IN_USE.fetch_add(size, SeqCst) + size;
    PEAK.fetch_max(now, SeqCst);
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The value of `f` and the peak bytes allocated while it ran, above what was in use before.
fn peak<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let base = IN_USE.load(SeqCst);
    PEAK.store(base, SeqCst);
    let value = f();
    (value, (PEAK.load(SeqCst) - base) as u64)
}

/// Asserts that the estimate is within a factor of 2 of the measured peak.
fn within_two(what: &str, estimate: u64, measured: u64) {
    let ratio = estimate as f64 / measured as f64;
    println!("{what}: footprint {estimate} B, measured peak {measured} B, ratio {ratio:.2}");
    assert!((0.5..=2.0).contains(&ratio), "{what}: ratio {ratio}");
}

/// A Swiss roll in 3-D, and the same points in 6-D (DRILL needs p > dim for a useful S).
fn data(n: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    let y = unfold_data::synthetic::swiss_roll(n, 0.05, 1)
        .unwrap()
        .points;
    let y6 = DMatrix::from_fn(n, 6, |i, j| {
        y[(i, j % 3)] * (1.0 + j as f64) + 0.01 * ((i * 7 + j) % 5) as f64
    });
    (y, y6)
}

/// Measured on one worker thread: with two, the parallel kernels' per-thread temporaries
/// overlap or not depending on scheduling (MVU's exact SDP once peaked at 82 MB against its
/// usual 15 MB), which no footprint formula can promise; the refusal decides before any of
/// them run.
#[test]
fn footprints_match_the_measured_peak_and_refusals_allocate_nothing_large() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool")
        .install(measure_footprints);
}

fn measure_footprints() {
    // Warm up: the first fits initialise thread pools and other process-wide state, which
    // is not part of any fit's footprint.
    let (y, y6) = data(40);
    let rho = 0.1 * mean_second_moment(&y6);
    DrillParams::new(2, 6, rho).fit(&y6).unwrap();
    DrillParams::new(2, 6, rho)
        .all_pairs(true)
        .fit_best(&y6, &[2.0 * rho, rho], |_| Ok(0.0))
        .unwrap();
    MvuParams::new(2, 6).fit(&y).unwrap();
    MvuParams::new(2, 6).mvu_basis(Some(10)).fit(&y).unwrap();
    LlLvmParams::new(2, 6)
        .max_iter(2)
        .restarts(3)
        .fit(&y)
        .unwrap();

    let n = 200;
    let (y, y6) = data(n);
    let rho = 0.1 * mean_second_moment(&y6);

    // DRILL: one penalty on a kNN graph and on all pairs, and a grid of two.
    let knn = DrillParams::new(2, 6, rho);
    let (_, measured) = peak(|| knn.fit(&y6).unwrap());
    within_two("DRILL, kNN graph", knn.footprint(n, 1), measured);
    let all = DrillParams::new(2, 6, rho).all_pairs(true);
    let (_, measured) = peak(|| all.fit(&y6).unwrap());
    within_two("DRILL, all pairs", all.footprint(n, 1), measured);
    let (_, measured) = peak(|| all.fit_best(&y6, &[2.0 * rho, rho], |_| Ok(0.0)).unwrap());
    within_two("DRILL, two penalties", all.footprint(n, 2), measured);

    // MVU: the exact SDP (dominated by the m x m Schur complement) and the basis variant.
    let exact = MvuParams::new(2, 6);
    let (fit, measured) = peak(|| exact.fit(&y).unwrap());
    let m = fit.graph().unwrap().n_edges();
    within_two("MVU exact", exact.footprint(n, m), measured);
    let basis = MvuParams::new(2, 6).mvu_basis(Some(10));
    let (_, measured) = peak(|| basis.fit(&y).unwrap());
    within_two("MVU basis", basis.footprint(n, m), measured);

    // LL-LVM: dx = 1 and 2 (n^2 and N^2 terms), and three restarts (finished ones kept).
    for (dx, restarts) in [(1, 1), (2, 1), (2, 3)] {
        let params = LlLvmParams::new(dx, 6).max_iter(2).restarts(restarts);
        let (_, measured) = peak(|| params.fit(&y).unwrap());
        within_two(
            &format!("LL-LVM, dx = {dx}, {restarts} restart(s)"),
            params.footprint(n, 3),
            measured,
        );
    }

    // Refused before anything large: at n = 2000 a refusal allocates less than one n x n
    // matrix (32 MB; building the kNN graph first, as MVU must to count its edges, takes
    // O(n k) and a bounded block of distances).
    let n = 2000;
    let (y, y6) = data(n);
    let limit = MemoryLimit::given(1 << 20, "the test's limit");
    let one_matrix = (8 * n * n) as u64;
    let refused = |r: Result<(), Error>, what: &str, allocated: u64| {
        assert!(matches!(r, Err(Error::OverMemoryLimit(_))), "{what}: {r:?}");
        println!("{what} allocated {allocated} B before refusing");
        assert!(allocated < one_matrix, "{what}: {allocated} B");
    };
    let (r, allocated) = peak(|| {
        knn.clone()
            .memory_limit(Some(limit.clone()))
            .fit(&y6)
            .map(drop)
    });
    refused(r, "DRILL", allocated);
    let (r, allocated) = peak(|| {
        MvuParams {
            max_points: n,
            ..exact.clone()
        }
        .memory_limit(Some(limit.clone()))
        .fit(&y)
        .map(drop)
    });
    refused(r, "MVU", allocated);
    let (r, allocated) = peak(|| {
        LlLvmParams::new(2, 6)
            .memory_limit(Some(limit.clone()))
            .fit(&y)
            .map(drop)
    });
    refused(r, "LL-LVM", allocated);
}
