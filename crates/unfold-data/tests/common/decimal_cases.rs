// Decimal texts shared by the conversion's unit tests (`src/decimal.rs`) and the reader's
// tests (`tests/decimal_values.rs`), included by both.

/// Short: exact by one multiplication or division.
const EXACT: &[&str] = &[
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

/// Long mantissas, exponents 23 to 55 and -23 to -27, ties between two doubles: exact by Eisel-Lemire.
const LONG: &[&str] = &[
    "9007199254740993",
    "9007199254740995",
    "18014398509481986",
    "0.30000000000000004",
    "123456789012345678",
    "1e23",
    "1e-23",
    "8.98846567431158e55",
    "1.2345678901234567e-10",
    "-0.12345678901234567",
    "9999999999999999999",
    "1.7976931348623157e30",
    "1.234567890123456789e-01",
    "-9.999999999999999999e+02",
];

/// Past those (the extremes, more than 19 digits, long exponents): left to the full parser.
const FULL: &[&str] = &[
    "1.7976931348623157e308",
    "5e-324",
    "1e400",
    "1.2345678901234567e-30",
    "1e56",
    "12345678901234567890123",
    "100000000000000000000e-2",
];
