//! Short decimal numbers converted while they are scanned: the CSV reader's fast path for
//! slices of short fields (`%.6f`, `%.8g`, integers).
//!
//! A number written with at most 19 significant digits is `m * 10^e` for an integer
//! mantissa `m < 10^19`. When `m <= 2^53` and `|e| <= 22`, both `m` and `10^|e|` are exact
//! doubles, so the one rounding of `m * 10^e` (or `m / 10^-e`) is the correctly rounded
//! value (Clinger 1990, "How to read floating point numbers accurately", the fast path):
//! the bits `str::parse::<f64>` gives. [`short`] declines every other number, and whatever
//! is not a number, which the caller hands to `fast_float2` (correctly rounded
//! everywhere). Kept because it reads files of short numbers in 0.74x to 0.90x the time of
//! `fast_float2` alone (`bench/results/formats.md`).

/// `10^0 ..= 10^22`, each exact in binary64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The largest mantissa the fast path takes: every integer up to `2^53` is exact.
const MAX_EXACT: u64 = 1 << 53;

/// The value of the decimal number `[+-]digits[.digits][(e|E)[+-]digits]` at the start of
/// `s` (the digits before or after the point may be absent but not both) and the bytes it
/// takes, when the fast path converts it exactly: at most 19 digits, a mantissa of at most
/// `2^53` and a decimal exponent within 22 of zero. `None` otherwise, and when `s` does not
/// start with such a number; the caller decides whether the byte after it may follow.
#[inline]
pub(crate) fn short(s: &[u8]) -> Option<(f64, usize)> {
    let n = s.len();
    // Signs without branches: in data a number is as often negative as not, so a branch on
    // the sign is mispredicted half the time.
    let sign = s.first().copied().unwrap_or(0);
    let negative = sign == b'-';
    let mut i = usize::from(negative | (sign == b'+'));
    let start = i;
    let mut mantissa = 0u64;
    i = digits_into(s, i, &mut mantissa);
    let mut digits = i - start;
    let mut exponent = 0i64;
    if i < n && s[i] == b'.' {
        i += 1;
        let first = i;
        i = digits_into(s, i, &mut mantissa);
        digits += i - first;
        exponent = -((i - first) as i64);
    }
    // More than 19 digits may have wrapped the mantissa.
    if digits == 0 || digits > 19 {
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
        while i < n && s[i].is_ascii_digit() && i - first < 8 {
            e = e * 10 + i64::from(s[i] - b'0');
            i += 1;
        }
        // No exponent digits, or more than eight.
        if i == first || (i < n && s[i].is_ascii_digit()) {
            return None;
        }
        exponent += if negative_exponent { -e } else { e };
    }
    if mantissa > MAX_EXACT || !(-22..=22).contains(&exponent) {
        return None;
    }
    // `mantissa <= 2^53` fits an i64, so the conversion is one instruction and exact.
    let m = mantissa as i64 as f64;
    let magnitude = if exponent >= 0 {
        m * POW10[exponent as usize]
    } else {
        m / POW10[(-exponent) as usize]
    };
    // `magnitude` is zero or positive: the sign is its top bit.
    let bits = magnitude.to_bits() | (u64::from(negative) << 63);
    Some((f64::from_bits(bits), i))
}

/// Appends the run of ASCII digits of `s` from `i` to `mantissa` (wrapping past 19 digits,
/// which the caller detects by counting them) and returns where the run ends.
#[inline(always)]
fn digits_into(s: &[u8], mut i: usize, mantissa: &mut u64) -> usize {
    while i < s.len() && s[i].is_ascii_digit() {
        *mantissa = mantissa
            .wrapping_mul(10)
            .wrapping_add(u64::from(s[i] - b'0'));
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `short` on a text that is a whole number: the standard parser's bits over the whole
    /// text, or declined.
    fn converted(text: &str) -> bool {
        let want: f64 = text.parse().unwrap();
        match short(text.as_bytes()) {
            Some((v, used)) => {
                assert_eq!(v.to_bits(), want.to_bits(), "{text}");
                assert_eq!(used, text.len(), "{text}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn converts_short_numbers_and_declines_the_rest() {
        for text in [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "0.5",
            ".5",
            "5.",
            "-.25",
            "+.5",
            "3.14159",
            "0.1",
            "0.3",
            "1e5",
            "1E-5",
            "2.5e+3",
            "-7.25e-2",
            "9007199254740992",
            "4.9e-10",
            "1234567.890123",
            "007",
            "1.5e022",
            "1e00000003",
            "-123456.789e-16",
        ] {
            assert!(converted(text), "{text} should convert here");
        }
        for text in [
            "9007199254740993",
            "0.30000000000000004",
            "1e23",
            "1e-23",
            "0e999",
            "1e000000003",
            "12345678901234567890",
            "5e-324",
        ] {
            assert!(!converted(text), "{text} should be declined");
        }
        for text in [
            "", "-", ".", "-.", "+-1", "e5", "1e", "1e+", "inf", "nan", "x1",
        ] {
            assert_eq!(short(text.as_bytes()), None, "{text}");
        }
        assert_eq!(short(b"12,3"), Some((12.0, 2)));
        assert_eq!(short(b"1.5.2"), Some((1.5, 3)));
        assert_eq!(short(b"-2 "), Some((-2.0, 2)));
    }

    /// Random decimals of up to 15 digits, with and without a point and a small exponent:
    /// every one converts here, to the standard parser's bits.
    #[test]
    fn random_short_decimals_convert_exactly() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let digits = 1 + (next() % 15) as u32;
            let mut text = format!(
                "{:0width$}",
                next() % 10u64.pow(digits),
                width = digits as usize
            );
            let point = (next() % (u64::from(digits) + 1)) as usize;
            if point < text.len() {
                text.insert(point, '.');
            }
            if next() % 3 == 0 {
                text.push_str(&format!("e{}", (next() % 15) as i64 - 7));
            }
            if next() % 2 == 0 {
                text.insert(0, '-');
            }
            assert!(converted(&text), "{text}");
        }
    }
}
