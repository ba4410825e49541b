//! The one SIMD layer of unfold: runtime dispatch to the widest vector instructions the
//! processor has (through `pulp`), the vectorisable [`exp`], the [`lane_sum`] and a cache
//! [`prefetch`] hint. Every kernel of the workspace that wants wider vectors than the
//! compile-time baseline goes through [`vectorize`] (or [`Level::run`]); no other code
//! detects processor features or enables target features.
//!
//! # How a kernel is written
//!
//! As plain, safe Rust: loops over slices or fixed-width arrays (`[f64; LANES]`) that the
//! compiler vectorises, in an `#[inline(always)]` function called from a closure that is
//! itself marked `#[inline(always)]`:
//!
//! ```
//! use unfold_linalg::simd::{exp, vectorize};
//!
//! #[inline(always)]
//! fn softplus_sum(x: &[f64]) -> f64 {
//!     x.iter().map(|&v| (1.0 + exp(v)).ln()).sum()
//! }
//!
//! let x = vec![0.5; 100];
//! let s = vectorize(#[inline(always)] || softplus_sum(&x));
//! assert!((s - 100.0 * (1.0 + 0.5f64.exp()).ln()).abs() < 1e-12);
//! ```
//!
//! [`vectorize`] runs the closure inside a function compiled for the widest instruction set
//! found at run time (detected once), so the same source becomes AVX-512, AVX2 or baseline
//! code. Both attributes matter: without them the compiler may keep the kernel out of line,
//! compiled for the baseline only (the results stay the same; the speed does not). A
//! kernel that writes into a buffer should take it through [`Level::run_out`], which hands
//! the buffer to the dispatched function as an argument: captured by the closure, the
//! compiler cannot tell that nothing else aliases it (`PackedSym`'s 8-column product ran
//! three times slower that way).
//!
//! - x86-64-v4 (AVX-512 F/BW/CD/DQ/VL over x86-64-v3): the one piece not expressed through
//!   pulp. pulp's `V4` and its AVX-512 feature tokens exist only with pulp's `x86-v4`
//!   feature, and pulp is shared with faer: enabling the feature would move faer's own
//!   kernels (triangular solves, Householder, tridiagonalisation, ...) onto AVX-512 as
//!   well, changing the order of their sums and so every number downstream. So the
//!   token is kept here ([`Level`]'s x86-64-v4 case): detected with
//!   `is_x86_feature_detected!`, run through one `#[target_feature]` function, the same
//!   thing pulp's `V4::vectorize` does.
//! - otherwise pulp's [`pulp::Arch`]: x86-64-v3 (AVX2, FMA) or NEON, else the baseline.
//!   [`Level::run_out`] on x86-64-v3 uses its own `#[target_feature]` function (pulp's
//!   dispatch takes no argument to pass the output through), on pulp's detection.
//!
//! The prefetch hint is pulp's safe `_mm_prefetch`.
//!
//! # The same bits on every path
//!
//! A kernel performs the same IEEE operations in the same order whichever path runs; only
//! the number of lanes processed per instruction changes. Rust never contracts `a * b + c`
//! into a fused multiply-add (even where FMA is enabled), so enabling wider instruction sets
//! changes no rounding, and reductions are split into a fixed number of partial sums
//! ([`LANES`], [`lane_sum`]) that does not depend on the register width. Results are
//! therefore bitwise identical on every path; the tests of each kernel (here, in
//! `packed.rs`, in `soft_assign`) run it on every level of [`Level::available`] and
//! compare the bits. DDRTree relies on this: its fits are the same on every processor.
//!
//! # Safety
//!
//! The crate denies `unsafe` code outside this module, whose `unsafe` blocks each carry
//! their argument: the calls into the functions compiled for x86-64-v4 and -v3 (sound
//! because the token that leads there exists only after the processor reported those
//! features), and the `sysconf` and `madvise` calls that ask Linux for
//! huge pages under large buffers (`advise_huge_pages`, used by [`crate::PackedSym`]; an
//! operating-system hint rather than SIMD, kept here so that all of unfold-linalg's contact
//! with the platform below safe Rust is in one file).

use std::sync::OnceLock;

/// Partial sums of a reduction, and the doubles of one 512-bit register.
pub const LANES: usize = 8;

/// x86-64-v4: AVX-512 (F, BW, CD, DQ, VL) with everything of x86-64-v3. A value exists
/// only once the processor reported all of these features ([`V4::try_new`]).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct V4(());

#[cfg(target_arch = "x86_64")]
impl V4 {
    /// The token, when the processor has every feature of x86-64-v4.
    #[inline]
    fn try_new() -> Option<V4> {
        use std::arch::is_x86_feature_detected as has;
        let v3 = pulp::x86::V3::is_available();
        let v4 = has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl");
        (v3 && v4).then_some(V4(()))
    }

    /// Runs `f` inside a function compiled with the features of x86-64-v4.
    #[inline(always)]
    fn vectorize<F: pulp::NullaryFnOnce>(self, f: F) -> F::Output {
        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
        #[inline]
        fn imp<F: pulp::NullaryFnOnce>(f: F) -> F::Output {
            f.call()
        }
        // SAFETY: `self` exists only when `V4::try_new` found every feature that `imp`
        // enables on this processor, so `imp`'s instructions are all supported.
        #[allow(unsafe_code)]
        unsafe {
            imp(f)
        }
    }
    /// [`V4::vectorize`] for a kernel writing to `out`, passed as an argument of the
    /// dispatched function.
    #[inline(always)]
    fn vectorize_out<Y: ?Sized, R, F: FnMut(&mut Y) -> R>(self, out: &mut Y, f: F) -> R {
        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
        #[inline]
        fn imp<Y: ?Sized, R, F: FnMut(&mut Y) -> R>(mut f: F, out: &mut Y) -> R {
            f(out)
        }
        // SAFETY: as in `vectorize`.
        #[allow(unsafe_code)]
        unsafe {
            imp(f, out)
        }
    }
}

/// An instruction set a kernel can run on (detected at run time).
#[derive(Clone, Copy, Debug)]
pub struct Level(Isa);

#[derive(Clone, Copy, Debug)]
enum Isa {
    #[cfg(target_arch = "x86_64")]
    V4(V4),
    Pulp(pulp::Arch),
}

impl Level {
    /// The widest instruction set of this processor (detected once).
    #[inline]
    pub fn widest() -> Level {
        static WIDEST: OnceLock<Level> = OnceLock::new();
        *WIDEST.get_or_init(|| Level::available()[0])
    }

    /// The widest instruction set with vectors of at most 256 bits (pulp's choice: x86-64-v3
    /// on an AVX-512 processor). For loops over short vectors, where 512-bit remainders cost
    /// more than the wider body saves: the graphical lasso's columns ran 4% slower at
    /// p = 200 on AVX-512.
    #[inline]
    pub fn narrow() -> Level {
        static NARROW: OnceLock<Level> = OnceLock::new();
        *NARROW.get_or_init(|| Level(Isa::Pulp(pulp::Arch::new())))
    }

    /// The compile-time baseline (SSE2 on x86-64).
    pub fn baseline() -> Level {
        Level(Isa::Pulp(pulp::Arch::Scalar))
    }

    /// Every instruction set this processor runs, widest first, ending with the
    /// baseline: the paths whose results must agree to the bit.
    pub fn available() -> Vec<Level> {
        let mut levels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        if let Some(v4) = V4::try_new() {
            levels.push(Level(Isa::V4(v4)));
        }
        let arch = pulp::Arch::new();
        if !matches!(arch, pulp::Arch::Scalar) {
            levels.push(Level(Isa::Pulp(arch)));
        }
        levels.push(Level::baseline());
        levels
    }

    /// Runs `f` compiled for this instruction set. `f` should be a closure marked
    /// `#[inline(always)]` calling `#[inline(always)]` functions, so that all of it is
    /// compiled into the dispatched function (see the module documentation).
    #[inline(always)]
    pub fn run<R, F: FnMut() -> R>(self, f: F) -> R {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            Isa::V4(v4) => v4.vectorize(Call(f)),
            Isa::Pulp(arch) => arch.dispatch(Call(f)),
        }
    }
}

impl Level {
    /// [`Level::run`] for a kernel whose output is `out`: `out` is handed to the dispatched
    /// function as an argument, so that the compiler knows that nothing else aliases it.
    /// Through a closure's captures it does not, and may then keep fewer values in
    /// registers: `PackedSym`'s 8-column product ran three times slower.
    #[inline(always)]
    pub fn run_out<Y: ?Sized, R, F: FnMut(&mut Y) -> R>(self, out: &mut Y, mut f: F) -> R {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            Isa::V4(v4) => v4.vectorize_out(out, f),
            #[cfg(target_arch = "x86_64")]
            Isa::Pulp(pulp::Arch::V3(_)) => {
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                #[inline]
                fn imp<Y: ?Sized, R, F: FnMut(&mut Y) -> R>(mut f: F, out: &mut Y) -> R {
                    f(out)
                }
                // SAFETY: pulp's `Arch::V3` holds a `V3` token, which exists only when the
                // processor has every feature of x86-64-v3 (a superset of those `imp`
                // enables).
                #[allow(unsafe_code)]
                unsafe {
                    imp(f, out)
                }
            }
            Isa::Pulp(arch) => arch.dispatch(Call(
                #[inline(always)]
                || f(&mut *out),
            )),
        }
    }
}

/// Runs `f` compiled for the widest instruction set of this processor ([`Level::widest`]);
/// see [`Level::run`].
#[inline(always)]
pub fn vectorize<R, F: FnMut() -> R>(f: F) -> R {
    Level::widest().run(f)
}

/// A kernel closure as pulp's `NullaryFnOnce`, called through `FnMut`: a closure's body is
/// then called directly, where `FnOnce` would go through a shim that the compiler may leave
/// out of line (and so compiled without the dispatched instruction set).
struct Call<F>(F);

impl<R, F: FnMut() -> R> pulp::NullaryFnOnce for Call<F> {
    type Output = R;

    #[inline(always)]
    fn call(mut self) -> R {
        (self.0)()
    }
}

/// `e^x` to within one unit in the last place, without branches or table look-ups, so that
/// loops applying it over slices or lanes vectorise (an RBF kernel and DDRTree's soft
/// assignments spend most of their time here). The one `exp` of unfold's kernels.
///
/// Range reduction `x = k ln 2 + r`, `|r| <= ln 2 / 2`, with `ln 2` split in two parts
/// (Cody & Waite) so that `k ln 2` is exact; `e^r = 1 + r (1 + r p(r))` with `p` the Taylor
/// polynomial `sum_{m=0}^{11} r^m / (m + 2)!` (truncation below `r^14 / 14! < 5e-18`),
/// evaluated by Estrin's scheme (short dependency chains); `2^k` built from the exponent
/// bits in two halves, so that results in the subnormal range are rounded once. Overflows
/// to infinity above about 709.78, underflows to zero below about -745.13; NaN in, NaN
/// out. No fused multiply-adds: the result is the same on every machine and every path of
/// [`vectorize`].
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    /// `ln 2` to 32 significant bits: `k LN2_HI` is exact for `|k| < 2^21`.
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    /// `ln 2 - LN2_HI`.
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    /// `1.5 * 2^52`: adding it rounds to an integer held in the low bits.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    /// Taylor coefficients `1 / (m + 2)!`, `m = 0..=11`.
    const C: [f64; 12] = [
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362880.0,
        1.0 / 3628800.0,
        1.0 / 39916800.0,
        1.0 / 479001600.0,
        1.0 / 6227020800.0,
    ];
    // Beyond these bounds the result is 0 or infinity anyway; they keep `k` in range.
    let x = x.clamp(-746.0, 710.0);
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let k = t - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let (r2, r4) = (r * r, r * r * (r * r));
    let pair = |m: usize| C[m] + C[m + 1] * r;
    let quad = |m: usize| pair(m) + pair(m + 2) * r2;
    let p = (quad(0) + quad(4) * r4) + quad(8) * (r4 * r4);
    let e_r = 1.0 + r * (1.0 + r * p);
    let ki = (t.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let k1 = ki >> 1;
    let pow2 = |m: i64| f64::from_bits(((m + 1023) as u64) << 52);
    e_r * pow2(k1) * pow2(ki - k1)
}

/// `sum_{j < len} value(j)` in [`LANES`] interleaved partial sums (value `j` into sum
/// `j mod 8`, which vectorises), added up at the end in a fixed pairwise order. The order
/// depends only on `len`, never on the instruction set. The one lane sum of unfold's
/// kernels.
#[inline(always)]
pub fn lane_sum(len: usize, value: impl Fn(usize) -> f64) -> f64 {
    let mut lanes = [0.0; LANES];
    let full = len / LANES * LANES;
    for c in (0..full).step_by(LANES) {
        for (l, s) in lanes.iter_mut().enumerate() {
            *s += value(c + l);
        }
    }
    for (s, j) in lanes.iter_mut().zip(full..len) {
        *s += value(j);
    }
    ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
        + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
}

/// Asks the processor to bring the cache line holding `*value` into its caches: a hint for
/// data needed soon, without effect on any result (pulp's safe `_mm_prefetch` on x86-64;
/// nothing elsewhere).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    if let Some(sse) = pulp::core_arch::x86::Sse::try_new() {
        use std::arch::x86_64::_MM_HINT_T0;
        sse._mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Asks Linux to back a large, not yet written buffer with transparent huge pages (2 MiB):
/// writing it then takes one page fault per 2 MiB instead of one per 4 KiB, which
/// otherwise costs as much as computing the entries. Advisory only (NumPy does the same
/// for its large arrays): an error leaves the buffer as it was; other systems skip it.
#[allow(unsafe_code)]
pub fn advise_huge_pages<T>(data: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf only reads a system constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let Ok(page) = usize::try_from(page) else {
            return;
        };
        let start = data.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(data);
        let aligned = start.next_multiple_of(page.max(1));
        if end > aligned + (4 << 20) {
            // SAFETY: the page-aligned range lies inside `data`, which we borrow mutably;
            // MADV_HUGEPAGE changes how the kernel backs the pages, never their contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = data;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_within_one_ulp_of_std() {
        // Distance in units in the last place between two positive floats.
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        let m = 400_000;
        // The whole range with normal results, and the range an RBF kernel uses, finely.
        let wide = (0..=m).map(|i| -708.0 + 1417.0 * i as f64 / m as f64);
        let kernel = (0..=m).map(|i| -40.0 * i as f64 / m as f64);
        let worst = wide.chain(kernel).map(|x| ulps(exp(x), x.exp())).max();
        assert_eq!(worst, Some(1));
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert!(ulps(exp(1.0), std::f64::consts::E) <= 1);
        assert!(ulps(exp(709.7), 709.7f64.exp()) <= 1);
        // Subnormal results are rounded once: within one subnormal step.
        for x in [-709.5, -720.0, -740.0, -744.5] {
            assert!(exp(x) > 0.0 && ulps(exp(x), x.exp()) <= 1, "{x}");
        }
        assert_eq!(exp(-746.0), 0.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
    }

    #[test]
    fn exp_is_exact_to_an_ulp_at_the_reduction_boundaries() {
        // Multiples of ln(2)/2 (where the range reduction switches k) and the softmax range.
        for k in 0..1400 {
            let x = -(k as f64) * 0.5 * std::f64::consts::LN_2;
            let (got, want) = (exp(x), x.exp());
            assert!((got - want).abs() <= want * f64::EPSILON, "{x}");
        }
    }

    #[test]
    fn lane_sum_adds_in_its_fixed_order() {
        let v: Vec<f64> = (0..21).map(|j| 1.0 / (j as f64 + 0.3)).collect();
        let mut lanes = [0.0; LANES];
        for (j, x) in v.iter().enumerate() {
            lanes[j % LANES] += x;
        }
        let want = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
            + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
        assert_eq!(lane_sum(v.len(), |j| v[j]), want);
        assert_eq!(lane_sum(0, |_| 1.0), 0.0);
        assert_eq!(lane_sum(3, |j| j as f64), 3.0);
    }

    /// A kernel with a division, `exp` and a lane sum.
    #[inline(always)]
    fn kernel(x: &[f64]) -> (f64, Vec<f64>) {
        let e: Vec<f64> = x.iter().map(|&v| exp(v / 1.7)).collect();
        (lane_sum(e.len(), |j| e[j] * x[j]), e)
    }

    #[test]
    fn every_level_gives_the_same_bits() {
        let x: Vec<f64> = (0..1003)
            .map(|j| -((j as f64) * 0.731).sin().abs() * 40.0)
            .collect();
        let want = Level::baseline().run(
            #[inline(always)]
            || kernel(&x),
        );
        assert_eq!(
            Level::widest().run(
                #[inline(always)]
                || kernel(&x)
            ),
            want
        );
        assert_eq!(
            vectorize(
                #[inline(always)]
                || kernel(&x)
            ),
            want
        );
        let levels = Level::available();
        assert!(matches!(
            levels.last(),
            Some(Level(Isa::Pulp(pulp::Arch::Scalar)))
        ));
        for level in levels {
            assert!(
                level.run(
                    #[inline(always)]
                    || kernel(&x)
                ) == want,
                "{level:?}"
            );
        }
    }
}
