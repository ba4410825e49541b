//! Decimal numbers read from CSV text have the bits `str::parse::<f64>` gives: short and
//! long mantissas, every exponent the exact conversions cover and those past them, ties
//! between two doubles, runs of eight digits; and a field that is not a finite number gives
//! the error the general reader gives, on the same line.

use std::path::Path;
use unfold_core::{Error, Result};
use unfold_data::{parse_points, CsvOptions, Dataset};

include!("common/decimal_cases.rs");

/// Marsaglia's xorshift generator (13, 7, 17) from a nonzero seed: cheap seeded random
/// words for the tests.
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// CSV bytes read as `unfold fit --input` reads a file.
fn read(bytes: &[u8]) -> Result<Dataset> {
    parse_points(
        bytes.to_vec(),
        Path::new("t.csv"),
        None,
        &CsvOptions::default(),
    )
}

/// Reads `texts` as the cells of a CSV file with a header and `width` fields per line (the
/// last line filled up with `0`) and checks each value against the standard parser's bits.
fn assert_read_as_parsed(texts: &[String], width: usize) {
    let mut csv: String = (1..=width).map(|j| format!("c{j},")).collect();
    csv.pop();
    csv.push('\n');
    let mut cells: Vec<&str> = texts.iter().map(String::as_str).collect();
    while cells.len() % width != 0 {
        cells.push("0");
    }
    for line in cells.chunks(width) {
        csv.push_str(&line.join(","));
        csv.push('\n');
    }
    let d = read(csv.as_bytes()).unwrap();
    assert_eq!(d.n() * width, cells.len());
    for (k, text) in cells.iter().enumerate() {
        let want: f64 = text.trim().parse().unwrap();
        let got = d.points[(k / width, k % width)];
        assert_eq!(got.to_bits(), want.to_bits(), "{text}: read as {got:e}");
    }
}

/// `text` (lines of numbers, scanned straight into the matrix) reads as the general reader
/// reads it (forced by a quoted field in an added last line): the same values, or an
/// error on the same line.
fn assert_read_as_general(text: &[u8]) {
    let mut scanned = text.to_vec();
    let mut general = text.to_vec();
    scanned.extend_from_slice(b"\n1,1\n");
    general.extend_from_slice(b"\n\"1\",1\n");
    match (read(&scanned), read(&general)) {
        (Ok(a), Ok(b)) => {
            let bits = |d: &Dataset| d.points.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "{:?}", String::from_utf8_lossy(text));
        }
        (Err(Error::Parse { line: a, .. }), Err(Error::Parse { line: b, .. })) => {
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(text))
        }
        (a, b) => panic!("{:?}: {a:?} against {b:?}", String::from_utf8_lossy(text)),
    }
}

#[test]
fn converts_as_the_standard_parser_does() {
    // The shared cases, and past them: subnormals, long exponents, padding.
    let more = [
        "2.2250738585072014e-308",
        "4.9406564584124654e-324",
        "1e-400",
        "1e00000003",
        "1e000000003",
        "1e-99999999999999999999",
        "0.000000000000000000000000000000000000000001234567890123456789012345",
        " 2 ",
        "\t-3.5",
    ];
    // (The shared cases past the double range are refused as non-finite by the reader.)
    let texts: Vec<String> = [EXACT, LONG, FULL, &more]
        .concat()
        .iter()
        .filter(|t| t.trim().parse::<f64>().is_ok_and(f64::is_finite))
        .map(|t| t.to_string())
        .collect();
    for width in [1, 3, 7] {
        assert_read_as_parsed(&texts, width);
    }
}

/// Random decimals of 1 to 20 digits with and without a point and an exponent.
#[test]
fn random_decimals_match_the_standard_parser() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut texts = Vec::with_capacity(200_000);
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
        texts.push(text);
    }
    assert_read_as_parsed(&texts, 8);
}

/// Random mantissas of up to 19 digits with every exponent from -27 to 55 (the range of
/// the 128-bit products), and the ties between two doubles (an odd multiple of half the
/// spacing), which round to the even one.
#[test]
fn mantissas_and_exponents_match_the_standard_parser() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut texts = Vec::with_capacity(400_100);
    for k in 0..400_000u64 {
        let digits = 1 + (k % 19) as u32;
        let w = (next() % 10u64.pow(digits)).max(1);
        let q = -27 + (next() % 83) as i64;
        texts.push(format!("{w}e{q}"));
    }
    for shift in 0..11 {
        for odd in [1u64, 3, 5, 7, 1023, 2047] {
            texts.push((((1u64 << 53) + odd) << shift).to_string());
        }
    }
    assert_read_as_parsed(&texts, 10);
}

/// Fields that are not numbers, or a number followed by more than spaces: the error the
/// general reader gives. Numbers that end at the separator or the line's end read as
/// they do there.
#[test]
fn non_numbers_read_as_the_general_reader() {
    for text in [
        "", "-", ".", "-.", "+", "e5", "1e", "1e+", "inf", "-inf", "nan", "NaN", "x1", "1.5.2",
        "1e56x", "12 3", "0x10", "1_000", "1e400", "-1e400", "infinity",
    ] {
        assert_read_as_general(format!("7,{text}").as_bytes());
        assert_read_as_general(format!("{text},7").as_bytes());
    }
    let e = read(b"a,b\n1,1e\n").unwrap_err().to_string();
    assert!(e.contains("\"1e\", which is not a number"), "{e}");
    let e = read(b"a,b\n1,-1e400\n").unwrap_err().to_string();
    assert!(e.contains("non-finite"), "{e}");
}

/// Runs of eight digits (which a parser may read a word at a time) read as eight digits,
/// and a run with any other byte at any of its places reads as the general reader reads
/// it.
#[test]
fn runs_of_eight_digits() {
    let mut next = xorshift(0x1234_5678_9abc_def1);
    let texts: Vec<String> = (0..100_000)
        .map(|k| {
            let v = next() % 100_000_000;
            match k % 3 {
                0 => format!("{v:08}"),
                1 => format!("{v:08}.{:08}", next() % 100_000_000),
                _ => format!("0.{v:08}{:08}", next() % 100_000_000),
            }
        })
        .collect();
    assert_read_as_parsed(&texts, 5);
    for place in 0..8 {
        for byte in (0..=255u8).filter(|b| !b.is_ascii_digit()) {
            let mut text = b"1,98765432".to_vec();
            text[2 + place] = byte;
            assert_read_as_general(&text);
        }
    }
}
