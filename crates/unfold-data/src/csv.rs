//! CSV input and output (DESIGN.md's contract).
//!
//! Input: comma-separated, an optional header row, every numeric column a feature unless
//! [`CsvOptions::label_column`] names a label column. The first row is a header when all its
//! fields are non-numeric, or when one of its fields is non-numeric where the second row
//! has a number. Fields may be quoted with `"` and surrounded by spaces; CRLF line ends and
//! blank lines are accepted. NaN, Inf, empty and unparsable cells are errors naming the
//! line (1-based) and the column.

use crate::decimal::{self, Scanned};
use crate::Dataset;
use faer::MatMut;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use unfold_core::{Error, Result};
use unfold_linalg::view::as_faer_mut;

/// How to read a CSV file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsvOptions {
    /// A column holding class labels rather than a feature: a header name, or a 0-based
    /// column index.
    pub label_column: Option<String>,
}

/// Reads a data set from a CSV file.
pub fn read_csv(path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut data = parse_csv(&text, &path.display().to_string(), opts)?;
    data.name = path
        .file_stem()
        .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(data)
}

/// Splits one line into trimmed fields, honouring simple double quotes. Lines without
/// quotes (nearly all numeric data) are split without copying.
fn split_fields(line: &str) -> Vec<Cow<'_, str>> {
    if !line.contains('"') {
        return line.split(',').map(|f| Cow::Borrowed(f.trim())).collect();
    }
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => {
                fields.push(Cow::Owned(std::mem::take(&mut field).trim().to_string()))
            }
            _ => field.push(c),
        }
    }
    fields.push(Cow::Owned(field.trim().to_string()));
    fields
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok()
}

/// The non-blank lines of `text` with their 1-based line numbers, starting at `first`.
fn numbered_lines(text: &str, first: usize) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(move |(i, l)| (first + i, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty())
}

/// The columns of the body and how to read them.
struct Layout<'a> {
    width: usize,
    names: &'a [String],
    features: &'a [usize],
    label: Option<usize>,
    source: &'a str,
}

/// One slice of the body, parsed: its values (row-major), its label cells and its rows.
struct Part<'t> {
    values: Vec<f64>,
    labels: Vec<Cow<'t, str>>,
    rows: usize,
}

impl Layout<'_> {
    fn error(&self, line: usize, message: String) -> Error {
        Error::Parse {
            source_name: self.source.to_string(),
            line,
            message,
        }
    }

    /// Parses the lines of `text`, the first of which is line `first` of the input.
    fn parse<'t>(&self, text: &'t str, first: usize) -> Result<Part<'t>> {
        let mut part = Part {
            values: Vec::new(),
            labels: Vec::new(),
            rows: 0,
        };
        // One search of the whole slice instead of one per line: most files have no quotes.
        let quoted = text.as_bytes().contains(&b'"');
        for (line, raw) in numbered_lines(text, first) {
            if self.label.is_none() && !(quoted && raw.contains('"')) {
                self.numeric_line(raw, line, &mut part.values)?;
                part.rows += 1;
                continue;
            }
            let fields = split_fields(raw);
            if fields.len() != self.width {
                return Err(self.error(
                    line,
                    format!(
                        "expected {} fields (as in the first row) but found {}",
                        self.width,
                        fields.len()
                    ),
                ));
            }
            for &j in self.features {
                part.values
                    .push(self.cell(&fields[j], &self.names[j], line)?);
            }
            if let Some(j) = self.label {
                part.labels.push(fields[j].clone());
            }
            part.rows += 1;
        }
        Ok(part)
    }

    /// A line of numbers only (no label column, no quotes; nearly every data file): its
    /// fields are scanned and parsed in place, without collecting them first. Errors are
    /// those of the general path.
    fn numeric_line(&self, raw: &str, line: usize, values: &mut Vec<f64>) -> Result<()> {
        let count_error = |found: usize| {
            self.error(
                line,
                format!(
                    "expected {} fields (as in the first row) but found {found}",
                    self.width
                ),
            )
        };
        let mut found = 0;
        for field in raw.split(',') {
            if found < self.width {
                match self.cell(field.trim(), &self.names[found], line) {
                    Ok(v) => values.push(v),
                    // The general path checks the count first: so does this one.
                    Err(e) => {
                        let found = raw.split(',').count();
                        return Err(if found == self.width {
                            e
                        } else {
                            count_error(found)
                        });
                    }
                }
            }
            found += 1;
        }
        if found != self.width {
            return Err(count_error(found));
        }
        Ok(())
    }

    /// Reads the lines of numbers of `text` (its first line numbered `first`) into the
    /// rows of `block`, one per non-blank line: each line by [`scan_line`], which finds the
    /// line's end as it goes, or where that declines, by [`Layout::numeric_line`] on the
    /// line as [`numbered_lines`] cuts it (which gives the same values or the error, and
    /// skips blank lines). Fields of [`LONG_FIELD`] bytes or more on average
    /// (full-precision numbers) are scanned eight digits at a time.
    fn fill(&self, text: &str, first: usize, block: MatMut<'_, f64>) -> Result<()> {
        if text.len() >= LONG_FIELD * self.width * block.nrows() {
            self.fill_scanned::<true>(text, first, block)
        } else {
            self.fill_scanned::<false>(text, first, block)
        }
    }

    fn fill_scanned<const LONG: bool>(
        &self,
        text: &str,
        first: usize,
        mut block: MatMut<'_, f64>,
    ) -> Result<()> {
        let mut row = vec![0.0; self.width];
        let (mut at, mut line, mut r) = (0, first, 0);
        while at < text.len() {
            let rest = &text[at..];
            let next = match scan_line::<LONG>(rest, &mut row) {
                Some(used) => at + used,
                None => {
                    let end = rest.find('\n').map_or(text.len(), |i| at + i);
                    let raw = text[at..end].trim_end_matches('\r');
                    let next = (end + 1).min(text.len());
                    if raw.trim().is_empty() {
                        line += 1;
                        at = next;
                        continue;
                    }
                    row.clear();
                    self.numeric_line(raw, line, &mut row)?;
                    next
                }
            };
            for (j, &v) in row.iter().enumerate() {
                block[(r, j)] = v;
            }
            r += 1;
            line += 1;
            at = next;
        }
        Ok(())
    }

    fn cell(&self, cell: &str, column: &str, line: usize) -> Result<f64> {
        if cell.is_empty() {
            return Err(self.error(
                line,
                format!("column {column:?} is empty; fill in or remove the row"),
            ));
        }
        let v: f64 = cell.parse().map_err(|_| {
            self.error(
                line,
                format!("column {column:?} holds {cell:?}, which is not a number"),
            )
        })?;
        if !v.is_finite() {
            return Err(self.error(
                line,
                format!("column {column:?} holds a non-finite value ({cell}); remove or impute it"),
            ));
        }
        Ok(v)
    }
}

/// Fills `row` with the fields of the line of numbers that starts `text`, each converted as
/// it is scanned ([`decimal::scan`]: exactly by its fast path, or by the standard parser on
/// the number's bytes), and gives the bytes of the line with its end (`\n`, or the end of
/// `text`; `\r`s before it are part of the end). `None` when the line needs the general
/// reader: a field count other than `row.len()`, or a field that is empty, not a finite
/// number, or padded with whitespace other than spaces and tabs.
#[inline(always)]
fn scan_line<const LONG: bool>(text: &str, row: &mut [f64]) -> Option<usize> {
    let bytes = text.as_bytes();
    let skip = |mut i: usize, what: &[u8]| {
        while bytes.get(i).is_some_and(|b| what.contains(b)) {
            i += 1;
        }
        i
    };
    let last = row.len() - 1;
    let mut i = 0;
    for (j, slot) in row.iter_mut().enumerate() {
        i = skip(i, b" \t");
        let value = match decimal::scan::<LONG>(&bytes[i..])? {
            Scanned::Exact(v, used) => {
                i += used;
                v
            }
            Scanned::Full(used) => match text[i..i + used].parse::<f64>() {
                Ok(v) if v.is_finite() => {
                    i += used;
                    v
                }
                _ => return None,
            },
        };
        i = skip(i, b" \t");
        *slot = value;
        if j < last {
            if bytes.get(i) != Some(&b',') {
                return None;
            }
            i += 1;
        }
    }
    i = skip(i, b"\r");
    match bytes.get(i) {
        Some(b'\n') => Some(i + 1),
        None => Some(i),
        _ => None,
    }
}

/// The mean bytes per field (separator included) from which [`Layout::fill`] scans eight
/// digits at a time: full-precision numbers (`%.17g`, `%.18e`) have 18 to 26.
const LONG_FIELD: usize = 16;

/// Bytes of body text per parallel slice: large enough that the split costs nothing, small
/// enough that both cores get work on a file of a few MB.
const SLICE_BYTES: usize = 1 << 20;

/// Cuts `bytes` into slices of about [`SLICE_BYTES`] that end at line ends (or the end).
fn slices(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + SLICE_BYTES).min(bytes.len());
        if end < bytes.len() {
            end = bytes[end..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| end + i + 1);
        }
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// A slice of the body with the number of its first line and of its first data row.
struct Slice<'t> {
    text: &'t str,
    line: usize,
    row: usize,
    rows: usize,
}

/// The slices of `body` ([`slices`]) as text, with their first line numbers (counting from
/// `first`) and data rows (non-blank lines), each checked as UTF-8 and counted in parallel
/// (`offset`: the body's first byte in the input, for the error). The error is that of the
/// first slice that is not UTF-8.
fn numbered_slices<'t>(
    body: &'t [u8],
    first: usize,
    offset: usize,
    source_name: &str,
) -> Result<Vec<Slice<'t>>> {
    let pieces = slices(body);
    let counts: Vec<std::result::Result<(&str, usize, usize), usize>> = pieces
        .par_iter()
        .map(|&piece| {
            let start = piece.as_ptr() as usize - body.as_ptr() as usize;
            let text = std::str::from_utf8(piece).map_err(|e| start + e.valid_up_to())?;
            let (mut lines, mut rows) = (0, 0);
            for line in text.split('\n') {
                lines += 1;
                rows += usize::from(!line.trim().is_empty());
            }
            Ok((text, lines - 1, rows))
        })
        .collect();
    let (mut line, mut row) = (first, 0);
    let mut out = Vec::with_capacity(counts.len());
    for count in counts {
        let (text, lines, rows) = count.map_err(|at| not_utf8(source_name, offset + at))?;
        out.push(Slice {
            text,
            line,
            row,
            rows,
        });
        line += lines;
        row += rows;
    }
    Ok(out)
}

/// The error for input that is not UTF-8 text at byte `at`.
fn not_utf8(source_name: &str, at: usize) -> Error {
    Error::Parse {
        source_name: source_name.to_string(),
        line: 1,
        message: format!(
            "neither CSV text (invalid UTF-8 at byte {at}) nor a NumPy .npy/.npz file"
        ),
    }
}

/// The text of `bytes` up to the end of its second non-blank line (the lines that decide
/// the header), checked line by line.
fn head_text<'t>(bytes: &'t [u8], source_name: &str) -> Result<&'t str> {
    let (mut end, mut found) = (0, 0);
    while end < bytes.len() && found < 2 {
        let next = bytes[end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| end + i + 1);
        let line = std::str::from_utf8(&bytes[end..next])
            .map_err(|e| not_utf8(source_name, end + e.valid_up_to()))?;
        found += usize::from(!line.trim().is_empty());
        end = next;
    }
    std::str::from_utf8(&bytes[..end]).map_err(|e| not_utf8(source_name, e.valid_up_to()))
}

/// Parses CSV text; `source_name` names the input in error messages. The body is parsed in
/// slices in parallel; the values, the labels' numbering (by first appearance) and the
/// error reported (the first in the file) are those of a sequential read.
pub fn parse_csv(text: &str, source_name: &str, opts: &CsvOptions) -> Result<Dataset> {
    parse_csv_bytes(text.as_bytes(), source_name, opts)
}

/// [`parse_csv`] of bytes, which are checked to be UTF-8 text slice by slice as the lines
/// are counted (rather than in a pass of their own on one core); bytes that are not are an
/// error naming the first bad byte.
pub(crate) fn parse_csv_bytes(
    bytes: &[u8],
    source_name: &str,
    opts: &CsvOptions,
) -> Result<Dataset> {
    let text = head_text(bytes, source_name)?;
    let mut head = numbered_lines(text, 1);
    let Some((first_line, first_raw)) = head.next() else {
        return Err(Error::Empty(format!("{source_name} (no rows)")));
    };
    let first = split_fields(first_raw);
    let second = head.next().map(|(_, l)| split_fields(l));
    let has_header = first.iter().all(|f| !is_number(f))
        || second.as_ref().is_some_and(|second| {
            first
                .iter()
                .zip(second)
                .any(|(a, b)| !is_number(a) && is_number(b))
        });
    let width = first.len();
    let names: Vec<String> = if has_header {
        first.iter().map(|f| f.to_string()).collect()
    } else {
        (1..=width).map(|j| format!("y{j}")).collect()
    };
    // The body starts at the first line, or after the header's line.
    let (body_start, body_line) = if has_header {
        let offset = first_raw.as_ptr() as usize - text.as_ptr() as usize + first_raw.len();
        let rest = &text[offset..];
        let skip = rest.find('\n').map_or(rest.len(), |i| i + 1);
        (offset + skip, first_line + 1)
    } else {
        (0, 1)
    };
    let label = match &opts.label_column {
        None => None,
        Some(name) => Some(
            names
                .iter()
                .position(|h| h == name)
                .or_else(|| name.parse::<usize>().ok().filter(|&j| j < width))
                .ok_or_else(|| {
                    Error::invalid(
                        "label column",
                        format!("{name:?} is neither a column name ({}) nor a column index below {width}", names.join(", ")),
                    )
                })?,
        ),
    };
    let features: Vec<usize> = (0..width).filter(|&j| Some(j) != label).collect();
    if features.is_empty() {
        return Err(Error::Empty(format!("{source_name} (no feature columns)")));
    }
    let layout = Layout {
        width,
        names: &names,
        features: &features,
        label,
        source: source_name,
    };
    let slices = numbered_slices(&bytes[body_start..], body_line, body_start, source_name)?;
    let rows: usize = slices.iter().map(|s| s.rows).sum();
    if rows == 0 {
        return Err(Error::Empty(format!(
            "{source_name} (a header row but no data)"
        )));
    }
    if label.is_none() && !slices.par_iter().any(|s| s.text.as_bytes().contains(&b'"')) {
        // Numbers only: each slice scans its lines straight into its own rows of the matrix.
        let mut points = unfold_linalg::zeroed(rows, width);
        let mut rest = as_faer_mut(&mut points);
        let mut blocks = Vec::with_capacity(slices.len());
        for slice in &slices {
            let (block, below) = rest.split_at_row_mut(slice.rows);
            blocks.push(block);
            rest = below;
        }
        let filled: Vec<Result<()>> = slices
            .par_iter()
            .zip(blocks)
            .map(|(slice, block)| layout.fill(slice.text, slice.line, block))
            .collect();
        filled.into_iter().collect::<Result<()>>()?;
        return Ok(Dataset {
            name: source_name.to_string(),
            points,
            feature_names: names,
            labels: None,
            label_names: Vec::new(),
            latent: None,
            row_names: Vec::new(),
        });
    }
    let parts: Vec<Result<Part<'_>>> = slices
        .par_iter()
        .map(|slice| layout.parse(slice.text, slice.line))
        .collect();
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    let p = features.len();
    let starts: Vec<usize> = slices.iter().map(|s| s.row).collect();
    let points = unfold_linalg::from_rows(rows, p, |i| {
        let k = starts.partition_point(|&s| s <= i) - 1;
        let local = i - starts[k];
        &parts[k].values[local * p..(local + 1) * p]
    });
    let mut label_names: Vec<String> = Vec::new();
    let mut label_ids: HashMap<String, usize> = HashMap::new();
    let mut labels = Vec::with_capacity(if label.is_some() { rows } else { 0 });
    for part in parts {
        for name in part.labels {
            let next = label_names.len();
            let id = *label_ids.entry(name.to_string()).or_insert(next);
            if id == next {
                label_names.push(name.into_owned());
            }
            labels.push(id);
        }
    }
    Ok(Dataset {
        name: source_name.to_string(),
        points,
        feature_names: features.iter().map(|&j| names[j].clone()).collect(),
        labels: label.map(|_| labels),
        label_names,
        latent: None,
        row_names: Vec::new(),
    })
}

/// The CSV text of a matrix with a header row. Numbers are written in the shortest form
/// that reads back to the same `f64`.
pub fn to_csv_string(m: &DMatrix<f64>, header: &[String]) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for row in m.row_iter() {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// Writes a matrix as CSV with a header row, atomically (temporary file, then rename).
pub fn write_csv(path: &Path, m: &DMatrix<f64>, header: &[String]) -> Result<()> {
    if header.len() != m.ncols() {
        return Err(Error::DimensionMismatch(format!(
            "{} header names for {} columns",
            header.len(),
            m.ncols()
        )));
    }
    unfold_core::write_atomic(path, to_csv_string(m, header).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, label: Option<&str>) -> Result<Dataset> {
        parse_csv(
            text,
            "t.csv",
            &CsvOptions {
                label_column: label.map(String::from),
            },
        )
    }

    #[test]
    fn header_detection() {
        let d = parse("a,b\n1,2\n3,4\n", None).unwrap();
        assert_eq!(d.feature_names, ["a", "b"]);
        assert_eq!(
            d.points,
            DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])
        );
        let d = parse("1,2\r\n3,4\r\n", None).unwrap();
        assert_eq!(d.n(), 2);
        assert_eq!(d.feature_names, ["y1", "y2"]);
        // String labels in the first data row do not make it a header.
        let d = parse("1,2,setosa\n3,4,virginica\n", Some("2")).unwrap();
        assert_eq!(d.n(), 2);
        assert_eq!(d.labels, Some(vec![0, 1]));
    }

    #[test]
    fn label_column_by_name_and_index() {
        let text = "x, \"y\" ,class\n1,2,b\n3,4,a\n5,6,b\n";
        let d = parse(text, Some("class")).unwrap();
        assert_eq!(d.feature_names, ["x", "y"]);
        assert_eq!(d.labels, Some(vec![0, 1, 0]));
        assert_eq!(d.label_names, ["b", "a"]);
        let e = parse(text, Some("missing")).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("x, y, class"), "{e}");
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("a,b\n1,2\n3\n", None).unwrap_err();
        assert!(matches!(e, Error::Parse { line: 3, .. }), "{e}");
        assert!(e.to_string().contains("expected 2 fields") && e.to_string().contains("found 1"));
        let e = parse("a,b\n1,2\n\n3,NaN\n", None).unwrap_err();
        assert!(matches!(e, Error::Parse { line: 4, .. }), "{e}");
        assert!(e.to_string().contains("non-finite") && e.to_string().contains("\"b\""));
        let e = parse("a,b\n1,inf\n", None).unwrap_err();
        assert!(e.to_string().contains("non-finite"), "{e}");
        let e = parse("a,b\n1,\n", None).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let e = parse("a,b\n1,x2\n2,3\n", None).unwrap_err();
        assert!(matches!(e, Error::Parse { line: 2, .. }), "{e}");
        // Lines of numbers only take the in-place scan, the others (a label column,
        // quotes) the general split: both give the same errors, the field count first.
        for (text, label) in [
            ("a,b\n1,2\n3,x,5\n", None),
            ("a,b,c\n1,2,u\n3,x,5,v\n", Some("c")),
            ("a,b\n1,2\n3,\"x\",5\n", None),
        ] {
            let e = parse(text, label).unwrap_err();
            assert!(matches!(e, Error::Parse { line: 3, .. }), "{e}");
            assert!(e.to_string().contains("found 3") || e.to_string().contains("found 4"));
        }
        for (text, label) in [
            ("a,b\n1,2\n3,x\n", None),
            ("a,b,c\n1,2,u\n3,x,v\n", Some("c")),
        ] {
            let e = parse(text, label).unwrap_err();
            assert!(
                e.to_string().contains("\"x\", which is not a number"),
                "{e}"
            );
        }
        assert!(matches!(parse("", None), Err(Error::Empty(_))));
        assert!(matches!(parse("\n \n", None), Err(Error::Empty(_))));
        assert!(matches!(parse("a,b\n", None), Err(Error::Empty(_))));
    }

    /// A body of several parallel slices reads as the sequential parse would: the same
    /// values, labels numbered by first appearance over the whole file, and an error in a
    /// late slice reported with its own line number.
    #[test]
    fn slices_join_as_one_sequential_read() {
        let n = 60_000;
        let mut text = String::from("a,b,class\n");
        for i in 0..n {
            let class = ["z", "y", "x"][(i / 25_000) % 3];
            text.push_str(&format!("{},{},{class}\n", i, (i as f64) / 7.0));
            if i % 1000 == 0 {
                text.push_str("\r\n");
            }
        }
        assert!(slices(text.as_bytes()).len() > 1);
        let d = parse(&text, Some("class")).unwrap();
        assert_eq!(d.n(), n);
        for i in [0, 1, 24_999, 25_000, n - 1] {
            assert_eq!(d.points[(i, 0)], i as f64);
            assert_eq!(d.points[(i, 1)], (i as f64) / 7.0);
        }
        assert_eq!(d.label_names, ["z", "y", "x"]);
        let labels = d.labels.unwrap();
        assert_eq!((labels[24_999], labels[25_000], labels[n - 1]), (0, 1, 2));
        let bad_line = text.lines().count() - 3;
        let mut lines: Vec<&str> = text.lines().collect();
        lines[bad_line - 1] = "1,oops,x";
        let e = parse(&lines.join("\n"), Some("class")).unwrap_err();
        assert!(
            matches!(e, Error::Parse { line, .. } if line == bad_line),
            "{e}"
        );
    }

    /// A body of numbers only (scanned straight into the matrix) over several slices:
    /// every value has the bits of the standard parser whatever its form, blank and CRLF
    /// lines are skipped, a line with other whitespace takes the general reader and reads
    /// the same, and an error in a late slice names its own line.
    #[test]
    fn numeric_slices_read_as_the_standard_parser() {
        let n = 40_000;
        let forms = |i: usize| {
            let x = (i as f64 * 0.618_033_988_749_895).sin() * 10f64.powi((i % 13) as i32 - 6);
            [
                format!("{x}"),
                format!("{x:.17e}"),
                format!("{:.3}", x),
                format!(" {} ", i % 97),
                format!("{:E}", -x),
            ]
        };
        let mut text = String::from("a,b,c,d,e\n");
        let mut want = Vec::new();
        for i in 0..n {
            let cells = forms(i);
            want.push(
                cells
                    .iter()
                    .map(|c| c.trim().parse::<f64>().unwrap())
                    .collect::<Vec<_>>(),
            );
            text.push_str(&cells.join(","));
            text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
            if i % 5000 == 7 {
                text.push_str("  \n\n");
            }
            if i == 20_000 {
                // A no-break space around a field: the general reader trims it.
                text.push_str("1,2,3,4,\u{a0}5\n");
                want.push(vec![1.0, 2.0, 3.0, 4.0, 5.0]);
            }
        }
        assert!(slices(text.as_bytes()).len() > 1);
        let d = parse(&text, None).unwrap();
        assert_bits(&d, &want);
        let lines: Vec<&str> = text.split('\n').collect();
        let bad_line = lines.len() - 10;
        for bad in [
            "1,2,3,4,inf",
            "1,2,3,4",
            "1,2,3,4,5,6",
            "1,2,,4,5",
            "1,2,3e,4,5",
        ] {
            let mut lines = lines.clone();
            lines[bad_line - 1] = bad;
            let e = parse(&lines.join("\n"), None).unwrap_err();
            assert!(
                matches!(e, Error::Parse { line, .. } if line == bad_line),
                "{bad}: {e}"
            );
        }
    }

    /// Full-precision numbers (fields of [`LONG_FIELD`] bytes or more, scanned eight
    /// digits at a time) in several slices: the bits of the standard parser, with the
    /// short ones and a line for the general reader among them.
    #[test]
    fn full_precision_slices_read_as_the_standard_parser() {
        let n = 30_000;
        let mut text = String::new();
        let mut want = Vec::new();
        for i in 0..n {
            let x = (i as f64 * 0.618_033_988_749_895).sin() * 10f64.powi((i % 9) as i32 - 4);
            let cells = if i % 1000 == 5 {
                vec![
                    format!("{}", i % 7),
                    format!(" {x:.3} "),
                    format!("{x:.17e}"),
                ]
            } else {
                vec![
                    format!("{x:.18e}"),
                    format!("{:.17}", x / 3.0),
                    format!("{:.20e}", -x),
                ]
            };
            want.push(
                cells
                    .iter()
                    .map(|c| c.trim().parse::<f64>().unwrap())
                    .collect::<Vec<_>>(),
            );
            text.push_str(&cells.join(","));
            text.push_str(if i == 12_345 { "\u{a0}\n" } else { "\n" });
        }
        assert!(text.len() >= LONG_FIELD * 3 * n && slices(text.as_bytes()).len() > 1);
        assert_bits(&parse(&text, None).unwrap(), &want);
    }

    /// The data have `want`'s rows, value for value to the bit.
    fn assert_bits(d: &Dataset, want: &[Vec<f64>]) {
        assert_eq!(d.n(), want.len());
        for (i, row) in want.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                assert_eq!(
                    d.points[(i, j)].to_bits(),
                    v.to_bits(),
                    "row {i} column {j}"
                );
            }
        }
    }

    /// Bytes that are not UTF-8, in the header's lines or in a late slice of the body, are
    /// an error naming the first bad byte of the whole input.
    #[test]
    fn bytes_not_utf8_are_named_by_their_offset() {
        let mut text = String::from("a,b\n");
        for i in 0..300_000 {
            text.push_str(&format!("{i},{}\n", i % 7));
        }
        let late = text.len() - 100;
        let mut bytes = text.clone().into_bytes();
        bytes[late] = 0xff;
        bytes[late + 40] = 0xfe;
        assert!(slices(&bytes).len() > 2);
        let opts = CsvOptions::default();
        let e = parse_csv_bytes(&bytes, "t.csv", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("invalid UTF-8 at byte {late})")), "{e}");
        let mut bytes = text.into_bytes();
        bytes[5] = 0xc3;
        let e = parse_csv_bytes(&bytes, "t.csv", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid UTF-8 at byte 5)"), "{e}");
    }

    /// Lines pieced together from numbers, separators, spaces, tabs, carriage returns,
    /// no-break spaces and text: the scan straight into the matrix (which finds line ends
    /// as it goes) reads each text as the general reader does (forced by a
    /// quoted last line): the same values, or an error on the same line.
    #[test]
    fn scanned_lines_read_as_the_general_reader() {
        use rand::{Rng, SeedableRng};
        let pieces = [
            "1", "-2.5", "3e2", ",", ",", ",", " ", "\t", "\r", "\n", "\n", "\u{a0}", "x",
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for case in 0..20_000 {
            let mut text = String::from("7,8\n");
            for _ in 0..rng.random_range(0..24) {
                text.push_str(pieces[rng.random_range(0..pieces.len())]);
            }
            let join = if text.ends_with('\n') { "" } else { "\n" };
            let scanned = parse(&format!("{text}{join}1,1\n"), None);
            let general = parse(&format!("{text}{join}\"1\",1\n"), None);
            match (scanned, general) {
                (Ok(a), Ok(b)) => assert_eq!(a.points, b.points, "case {case}: {text:?}"),
                (Err(Error::Parse { line: a, .. }), Err(Error::Parse { line: b, .. })) => {
                    assert_eq!(a, b, "case {case}: {text:?}")
                }
                (a, b) => panic!("case {case}: {text:?}: {a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn write_then_read_is_bit_exact() {
        let m = DMatrix::from_fn(5, 3, |i, j| ((i * 3 + j) as f64).sin() * 1e-7 + 1.0 / 3.0);
        let header = ["a".to_string(), "b".into(), "c".into()];
        let dir = std::env::temp_dir().join(format!("unfold-data-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.csv");
        write_csv(&path, &m, &header).unwrap();
        let back = read_csv(&path, &CsvOptions::default()).unwrap();
        assert_eq!(back.points, m);
        assert_eq!(back.feature_names, header);
        assert_eq!(back.name, "m");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
