//! Decimal numbers converted while they are scanned: the CSV reader's fast path.
//!
//! A number written with at most 19 significant digits is `m * 10^e` for an integer
//! mantissa `m`. When `m <= 2^53` and `|e| <= 22`, both `m` and `10^|e|` are exact doubles,
//! so the one rounding of `m * 10^e` (or `m / 10^-e`) is the correctly rounded value of the
//! decimal (Clinger 1990, "How to read floating point numbers accurately", the fast path).
//! [`scan`] converts those and declines the rest (longer mantissas, larger exponents,
//! `inf`, `nan`), which the caller hands to the standard library's parser (correctly
//! rounded everywhere). Either way the value is the same bits `str::parse::<f64>` gives.

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
pub(crate) fn scan(s: &[u8]) -> Option<Scanned> {
    let n = s.len();
    let (negative, mut i) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let start = i;
    // Up to 19 significant digits fit a u64 (leading zeros add nothing); a longer mantissa
    // wraps here and is caught below.
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
            e = (e * 10 + i64::from(s[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if i == first {
            return None;
        }
        exponent += if negative_exponent { -e } else { e };
    }
    let leading_zeros = || {
        s[start..]
            .iter()
            .take_while(|&&b| b == b'0' || b == b'.')
            .count()
    };
    let long = digits > 19 && digits - leading_zeros() > 19;
    if long || mantissa > MAX_EXACT {
        return Some(Scanned::Full(i));
    }
    // Exact conversions: `mantissa <= 2^53` fits an i64, so the conversion is one
    // instruction and exact.
    let m = mantissa as i64 as f64;
    let value = if mantissa == 0 {
        0.0
    } else if (0..=22).contains(&exponent) {
        m * POW10[exponent as usize]
    } else if (-22..0).contains(&exponent) {
        m / POW10[(-exponent) as usize]
    } else {
        return Some(Scanned::Full(i));
    };
    Some(Scanned::Exact(if negative { -value } else { value }, i))
}

/// Appends the run of ASCII digits of `s` from `i` to `mantissa` (wrapping, which the
/// caller detects by counting digits) and returns where the run ends.
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

    /// `scan` against the standard parser on one text that is a whole number: an exact
    /// value has the parser's bits, and either way the whole text is taken.
    fn agrees(text: &str) -> bool {
        let want: f64 = text.parse().unwrap();
        match scan(text.as_bytes()) {
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

    #[test]
    fn converts_as_the_standard_parser_does() {
        let exact = [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "12",
            "0.5",
            ".5",
            "5.",
            "-.25",
            "+.5",
            "3.14159",
            "0.1",
            "0.2",
            "0.3",
            "1e5",
            "1E-5",
            "2.5e+3",
            "-7.25e-2",
            "9007199254740992",
            "0.000123",
            "4.9e-10",
            "0e999",
            "1234567.890123",
            "007",
            "1.5e022",
        ];
        for text in exact {
            assert!(agrees(text), "{text} should convert here");
        }
        let full = [
            "9007199254740993",
            "0.30000000000000004",
            "123456789012345678",
            "1.7976931348623157e308",
            "1e23",
            "1e-23",
            "5e-324",
            "1e400",
            "12345678901234567890123",
            "100000000000000000000e-2",
        ];
        for text in full {
            assert!(!agrees(text), "{text} should go to the full parser");
        }
    }

    /// Random decimals of 1 to 20 digits with and without a point and an exponent: each
    /// one converts to the standard parser's bits or goes to it, and most of those of up
    /// to 15 digits convert here.
    #[test]
    fn random_decimals_match_the_standard_parser() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
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

    /// Not a number at the start: no digits, or an exponent mark without digits. A number
    /// ends at the first byte outside the grammar.
    #[test]
    fn declines_and_stops() {
        for text in ["", "-", ".", "-.", "e5", "1e", "1e+", "inf", "nan", "x1"] {
            assert_eq!(scan(text.as_bytes()), None, "{text}");
        }
        assert_eq!(scan(b"12,3"), Some(Scanned::Exact(12.0, 2)));
        assert_eq!(scan(b"1.5.2"), Some(Scanned::Exact(1.5, 3)));
        assert_eq!(scan(b"2 "), Some(Scanned::Exact(2.0, 1)));
        assert_eq!(scan(b"1e23,"), Some(Scanned::Full(4)));
    }
}
