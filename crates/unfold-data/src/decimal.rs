//! Decimal numbers converted while they are scanned: the CSV reader's fast path.
//!
//! A number written with at most 19 significant digits is `m * 10^e` for an integer
//! mantissa `m < 10^19`. Two exact conversions cover the numbers data files hold:
//! - when `m <= 2^53` and `|e| <= 22`, both `m` and `10^|e|` are exact doubles, so the one
//!   rounding of `m * 10^e` (or `m / 10^-e`) is the correctly rounded value (Clinger 1990,
//!   "How to read floating point numbers accurately", the fast path);
//! - otherwise, for `-27 <= e <= 55`, Eisel and Lemire's algorithm (Lemire 2021, "Number
//!   parsing at a gigabyte per second"): the product of `m` with a 128-bit `5^e` gives the
//!   53 bits of the result and shows whether they are exact, a tie, or undecided.
//!
//! [`scan`] declines the rest (more digits, larger exponents, an undecided product, `inf`,
//! `nan`), which the caller hands to the standard library's parser (correctly rounded
//! everywhere). Either way the value is the same bits `str::parse::<f64>` gives.

/// `10^0 ..= 10^22`, each exact in binary64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The largest mantissa the fast path takes: every integer up to `2^53` is exact.
const MAX_EXACT: u64 = 1 << 53;

/// A decimal number scanned at the start of a field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scanned {
    /// Its value, exact by the fast path, and the bytes it takes.
    Exact(f64, usize),
    /// The bytes it takes; its value needs the full parser (`str::parse::<f64>` accepts
    /// every number of this grammar).
    Full(usize),
}

/// The decimal number at the start of `s`: `[+-]digits[.digits][(e|E)[+-]digits]`, where
/// the digits before or after the point may be absent but not both. `None` when `s` does
/// not start with one (no digits, or an exponent mark without digits); the caller decides
/// whether the byte after the number may follow it.
#[inline]
pub(crate) fn scan<const LONG: bool>(s: &[u8]) -> Option<Scanned> {
    let n = s.len();
    // Signs without branches: in data they are as often one as the other.
    let sign = s.first().copied().unwrap_or(0);
    let negative = sign == b'-';
    let mut i = usize::from(negative | (sign == b'+'));
    let start = i;
    // Up to 19 significant digits fit a u64 (leading zeros add nothing); a longer mantissa
    // wraps here and is caught below.
    let mut mantissa = 0u64;
    i = digits_into::<LONG>(s, i, &mut mantissa);
    let mut digits = i - start;
    let mut exponent = 0i64;
    if i < n && s[i] == b'.' {
        i += 1;
        let first = i;
        i = digits_into::<LONG>(s, i, &mut mantissa);
        digits += i - first;
        exponent = -((i - first) as i64);
    }
    if digits == 0 {
        return None;
    }
    if i < n && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let negative_exponent = i < n && s[i] == b'-';
        if i < n && (s[i] == b'-' || s[i] == b'+') {
            i += 1;
        }
        let first = i;
        let mut e = 0i64;
        while i < n && s[i].is_ascii_digit() {
            e = e.wrapping_mul(10).wrapping_add(i64::from(s[i] - b'0'));
            i += 1;
        }
        if i == first {
            return None;
        }
        if i - first > 8 {
            // A long exponent (it may wrap here): the full parser's.
            return Some(Scanned::Full(i));
        }
        exponent += if negative_exponent { -e } else { e };
    }
    let leading_zeros = || {
        s[start..]
            .iter()
            .take_while(|&&b| b == b'0' || b == b'.')
            .count()
    };
    if digits > 19 && digits - leading_zeros() > 19 {
        return Some(Scanned::Full(i));
    }
    // Exact conversions: `mantissa <= 2^53` fits an i64, so the conversion is one
    // instruction and exact.
    let m = mantissa as i64 as f64;
    let value = if mantissa == 0 {
        0.0
    } else if mantissa <= MAX_EXACT && (-22..=22).contains(&exponent) {
        if exponent >= 0 {
            m * POW10[exponent as usize]
        } else {
            m / POW10[(-exponent) as usize]
        }
    } else {
        match eisel_lemire(mantissa, exponent) {
            Some(v) => v,
            None => return Some(Scanned::Full(i)),
        }
    };
    // `value` is zero or positive: the sign is its top bit.
    let bits = value.to_bits() | (u64::from(negative) << 63);
    Some(Scanned::Exact(f64::from_bits(bits), i))
}

/// The smallest and largest decimal exponents [`eisel_lemire`] takes: over this range its
/// table holds `5^q` exactly (q >= 0) or closely enough (q < 0) that one or two products
/// always decide the rounding (Lemire 2021, section 5).
const EL_MIN_Q: i64 = -27;
const EL_MAX_Q: i64 = 55;

/// `5^q` normalised to 128 bits (the top bit set) for `q` in `EL_MIN_Q..=EL_MAX_Q`, as
/// (high, low) words: exact for `q >= 0`, and `floor(2^b / 5^-q) + 1` with the `b` that
/// gives 128 bits for `q < 0`.
const FIVES: [(u64, u64); (EL_MAX_Q - EL_MIN_Q + 1) as usize] = fives();

const fn fives() -> [(u64, u64); (EL_MAX_Q - EL_MIN_Q + 1) as usize] {
    let mut table = [(0u64, 0u64); (EL_MAX_Q - EL_MIN_Q + 1) as usize];
    let mut q = EL_MIN_Q;
    while q <= EL_MAX_Q {
        let value: u128 = if q >= 0 {
            let mut v: u128 = 1;
            let mut k = 0;
            while k < q {
                v *= 5;
                k += 1;
            }
            v << v.leading_zeros()
        } else {
            let mut d: u128 = 1;
            let mut k = 0;
            while k < -q {
                d *= 5;
                k += 1;
            }
            // z: the least with 2^z >= d; then 2^(z + 127) / d lies in [2^127, 2^128).
            let z = 128 - (d - 1).leading_zeros();
            let b = z + 127;
            // Long division of 2^b by d, one bit at a time (the remainder stays below 2d).
            let (mut quotient, mut rest): (u128, u128) = (0, 0);
            let mut bit = b as i64;
            while bit >= 0 {
                rest = (rest << 1) | (bit == b as i64) as u128;
                if rest >= d {
                    rest -= d;
                    quotient |= 1u128 << bit;
                }
                bit -= 1;
            }
            quotient + 1
        };
        table[(q - EL_MIN_Q) as usize] = ((value >> 64) as u64, value as u64);
        q += 1;
    }
    table
}

/// `w 10^q` correctly rounded to the nearest double (ties to even), by Eisel and Lemire's
/// algorithm (Lemire 2021, "Number parsing at a gigabyte per second", algorithm 1): the
/// leading 64 bits of `w` times a 128-bit `5^q` give the 53 bits of the result and tell
/// whether they are exact or a tie. `None` outside `EL_MIN_Q..=EL_MAX_Q`, for `w = 0`, and
/// where the product cannot decide (then the full parser does). Kept out of line, so that
/// the scan of short numbers stays small.
#[inline(never)]
fn eisel_lemire(w: u64, q: i64) -> Option<f64> {
    if w == 0 || !(EL_MIN_Q..=EL_MAX_Q).contains(&q) {
        return None;
    }
    let shift = w.leading_zeros();
    let w = w << shift;
    let (five_hi, five_lo) = FIVES[(q - EL_MIN_Q) as usize];
    let first = u128::from(w) * u128::from(five_hi);
    let (mut hi, mut lo) = ((first >> 64) as u64, first as u64);
    // 52 explicit mantissa bits, one implicit, one for rounding and one for the top bit's
    // place: the 9 bits below them decide the rounding unless they are all ones.
    const UNDECIDED: u64 = u64::MAX >> 55;
    if hi & UNDECIDED == UNDECIDED {
        let second_hi = ((u128::from(w) * u128::from(five_lo)) >> 64) as u64;
        lo = lo.wrapping_add(second_hi);
        hi += u64::from(lo < second_hi);
        if hi & UNDECIDED == UNDECIDED && lo == u64::MAX {
            return None;
        }
    }
    let upper = (hi >> 63) as u32;
    let mut mantissa = hi >> (upper + 9);
    // floor(q log2 10) + 63 is the binary exponent of the product's top bit.
    let mut power2 =
        ((((152_170 + 65_536) * q) >> 16) + 63) as i32 + upper as i32 - shift as i32 + 1023;
    if power2 <= 0 || power2 >= 0x7FF {
        return None;
    }
    // An exact product halfway between two doubles rounds to the even one.
    if lo <= 1 && (-4..=23).contains(&q) && mantissa & 3 == 1 && mantissa << (upper + 9) == hi {
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= 2 << 52 {
        mantissa = 1 << 52;
        power2 += 1;
    }
    mantissa &= !(1u64 << 52);
    Some(f64::from_bits(mantissa | (power2 as u64) << 52))
}

/// Appends the run of ASCII digits of `s` from `i` to `mantissa` (wrapping, which the
/// caller detects by counting digits) and returns where the run ends. With `LONG` (for
/// fields of many digits), eight at a time while eight follow: one multiply-add per eight
/// digits instead of a chain of eight.
fn digits_into<const LONG: bool>(s: &[u8], mut i: usize, mantissa: &mut u64) -> usize {
    if LONG {
        while let Some(eight) = s.get(i..i + 8).and_then(eight_digits) {
            *mantissa = mantissa.wrapping_mul(100_000_000).wrapping_add(eight);
            i += 8;
        }
    }
    while i < s.len() && s[i].is_ascii_digit() {
        *mantissa = mantissa
            .wrapping_mul(10)
            .wrapping_add(u64::from(s[i] - b'0'));
        i += 1;
    }
    i
}

/// The value of eight ASCII digits (most significant first), or `None` if a byte is not a
/// digit, in a few word operations (Lemire 2021, section 6). As one little-endian word:
/// every byte has high nibble 3 and stays so when 6 is added (its low nibble is at most
/// 9); less `'0'` each byte is its digit `d_k`; `w * 10 + (w >> 8)` puts the two-digit
/// numbers `10 d_k + d_(k+1)` in the even bytes, which two multiplications weight by
/// `10^6, 10^4, 10^2, 1` and sum in the upper half.
#[inline(always)]
fn eight_digits(bytes: &[u8]) -> Option<u64> {
    const NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let word = u64::from_le_bytes(bytes.try_into().ok()?);
    let high = word & NIBBLES;
    let carried = word.wrapping_add(0x0606_0606_0606_0606) & NIBBLES;
    if high | (carried >> 4) != 0x3333_3333_3333_3333 {
        return None;
    }
    let d = word - 0x3030_3030_3030_3030;
    let pairs = d.wrapping_mul(10).wrapping_add(d >> 8);
    let outer = (pairs & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let inner = ((pairs >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    Some(outer.wrapping_add(inner) >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marsaglia's xorshift generator (13, 7, 17) from a nonzero seed: cheap seeded
    /// random words for the tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `scan` against the standard parser on one text that is a whole number: an exact
    /// value has the parser's bits, and either way the whole text is taken; scanning eight
    /// digits at a time gives the same.
    fn agrees(text: &str) -> bool {
        let want: f64 = text.parse().unwrap();
        let scanned = scan::<false>(text.as_bytes());
        assert_eq!(
            scanned,
            scan::<true>(text.as_bytes()),
            "{text}: eight at a time"
        );
        match scanned {
            Some(Scanned::Exact(v, used)) => {
                assert_eq!(v.to_bits(), want.to_bits(), "{text}");
                assert_eq!(used, text.len(), "{text}");
                true
            }
            Some(Scanned::Full(used)) => {
                assert_eq!(used, text.len(), "{text}");
                false
            }
            None => panic!("{text} was not scanned"),
        }
    }

    include!("../tests/common/decimal_cases.rs");

    #[test]
    fn converts_as_the_standard_parser_does() {
        for text in EXACT {
            assert!(agrees(text), "{text} should convert here");
        }
        // Past the fast path, by Eisel-Lemire: long mantissas, exponents 23 to 55 and -23
        // to -27, ties between two doubles.
        for text in LONG {
            assert!(agrees(text), "{text} should convert here");
        }
        for text in FULL {
            assert!(!agrees(text), "{text} should go to the full parser");
        }
    }

    /// Random decimals of 1 to 20 digits with and without a point and an exponent: each
    /// one converts to the standard parser's bits or goes to it, and most of those of up
    /// to 15 digits convert here.
    #[test]
    fn random_decimals_match_the_standard_parser() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let (mut short, mut fast) = (0, 0);
        for _ in 0..200_000 {
            let digits = 1 + (next() % 20) as u32;
            let m = next() % 10u64.pow(digits.min(19)) * if digits > 19 { 10 } else { 1 };
            let mut text = format!("{m:0width$}", width = digits as usize);
            let point = (next() % (u64::from(digits) + 1)) as usize;
            if point < text.len() {
                text.insert(point, '.');
            }
            if next() % 3 == 0 {
                text.push_str(&format!("e{}", (next() % 61) as i64 - 30));
            }
            if next() % 2 == 0 {
                text.insert(0, '-');
            }
            let exact = agrees(&text);
            if digits <= 15 && !text.contains('e') {
                short += 1;
                fast += usize::from(exact);
            }
        }
        assert_eq!(
            fast, short,
            "every short decimal without exponent converts here"
        );
    }

    /// Eisel-Lemire over its whole range against the standard parser: random mantissas of
    /// up to 19 digits with every exponent, and the ties between two doubles (an odd
    /// multiple of half the spacing), which round to the even one.
    #[test]
    fn eisel_lemire_matches_the_standard_parser() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let mut undecided = 0;
        for k in 0..400_000u64 {
            let digits = 1 + (k % 19) as u32;
            let w = (next() % 10u64.pow(digits)).max(1);
            let q = EL_MIN_Q + (next() % (EL_MAX_Q - EL_MIN_Q + 1) as u64) as i64;
            let want: f64 = format!("{w}e{q}").parse().unwrap();
            match eisel_lemire(w, q) {
                Some(v) => assert_eq!(v.to_bits(), want.to_bits(), "{w}e{q}"),
                None => undecided += 1,
            }
        }
        assert!(
            undecided < 40,
            "{undecided} of 400000 left to the full parser"
        );
        for shift in 0..11 {
            for odd in [1u64, 3, 5, 7, 1023, 2047] {
                let w = ((1u64 << 53) + odd) << shift;
                let want: f64 = w.to_string().parse().unwrap();
                assert_eq!(
                    eisel_lemire(w, 0).map(f64::to_bits),
                    Some(want.to_bits()),
                    "{w}"
                );
            }
        }
    }

    /// Not a number at the start: no digits, or an exponent mark without digits. A number
    /// ends at the first byte outside the grammar.
    #[test]
    fn declines_and_stops() {
        for text in ["", "-", ".", "-.", "e5", "1e", "1e+", "inf", "nan", "x1"] {
            assert_eq!(scan::<false>(text.as_bytes()), None, "{text}");
        }
        assert_eq!(scan::<false>(b"12,3"), Some(Scanned::Exact(12.0, 2)));
        assert_eq!(scan::<false>(b"1.5.2"), Some(Scanned::Exact(1.5, 3)));
        assert_eq!(scan::<false>(b"2 "), Some(Scanned::Exact(2.0, 1)));
        assert_eq!(scan::<false>(b"1e56,"), Some(Scanned::Full(4)));
        assert_eq!(scan::<false>(b"1e00000003"), Some(Scanned::Exact(1e3, 10)));
        assert_eq!(scan::<false>(b"1e000000003,"), Some(Scanned::Full(11)));
        assert_eq!(
            scan::<false>(b"1e-99999999999999999999"),
            Some(Scanned::Full(23))
        );
        assert_eq!(
            scan::<true>(b"12345678,9"),
            Some(Scanned::Exact(12345678.0, 8))
        );
        assert_eq!(
            scan::<true>(b"0.1234567890123456789e3"),
            scan::<false>(b"0.1234567890123456789e3")
        );
    }

    /// Eight digits at a time: the value of every run of eight digits tried, and `None`
    /// for a run with any other byte (all 256 values, at each of the eight places).
    #[test]
    fn eight_digits_read_as_eight_digits() {
        let mut next = xorshift(0x1234_5678_9abc_def1);
        for _ in 0..100_000 {
            let v = next() % 100_000_000;
            let text = format!("{v:08}");
            assert_eq!(eight_digits(text.as_bytes()), Some(v), "{text}");
        }
        for place in 0..8 {
            for byte in (0..=255u8).filter(|b| !b.is_ascii_digit()) {
                let mut text = *b"98765432";
                text[place] = byte;
                assert_eq!(eight_digits(&text), None, "{byte:#x} at {place}");
            }
        }
        assert_eq!(eight_digits(b"1234567"), None, "seven bytes");
    }
}
