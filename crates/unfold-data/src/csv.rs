//! CSV input and output (DESIGN.md's contract).
//!
//! Input: comma-separated, an optional header row, every numeric column a feature unless
//! [`CsvOptions::label_column`] names a label column. The first row is a header when all its
//! fields are non-numeric, or when one of its fields is non-numeric where the second row
//! has a number. Fields may be quoted with `"` and surrounded by spaces; CRLF line ends and
//! blank lines are accepted. NaN, Inf, empty and unparsable cells are errors naming the
//! line (1-based) and the column.

use crate::Dataset;
use nalgebra::DMatrix;
use std::path::Path;
use unfold_core::{Error, Result};

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

/// Splits one line into trimmed fields, honouring simple double quotes.
fn split_fields(line: &str) -> Vec<String> {
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
            ',' if !quoted => fields.push(std::mem::take(&mut field).trim().to_string()),
            _ => field.push(c),
        }
    }
    fields.push(field.trim().to_string());
    fields
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok()
}

/// Parses CSV text; `source_name` names the input in error messages.
pub fn parse_csv(text: &str, source_name: &str, opts: &CsvOptions) -> Result<Dataset> {
    let rows: Vec<(usize, Vec<String>)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, split_fields(l.trim_end_matches('\r'))))
        .collect();
    let parse_err = |line: usize, message: String| Error::Parse {
        source_name: source_name.to_string(),
        line,
        message,
    };
    let Some((_, first)) = rows.first() else {
        return Err(Error::Empty(format!("{source_name} (no rows)")));
    };
    let has_header = match rows.get(1) {
        None => first.iter().all(|f| !is_number(f)),
        Some((_, second)) => {
            first.iter().all(|f| !is_number(f))
                || first
                    .iter()
                    .zip(second)
                    .any(|(a, b)| !is_number(a) && is_number(b))
        }
    };
    let width = first.len();
    let names: Vec<String> = if has_header {
        first.clone()
    } else {
        (1..=width).map(|j| format!("y{j}")).collect()
    };
    let body = &rows[usize::from(has_header)..];
    if body.is_empty() {
        return Err(Error::Empty(format!(
            "{source_name} (a header row but no data)"
        )));
    }
    let label_col = match &opts.label_column {
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
    let feature_cols: Vec<usize> = (0..width).filter(|&j| Some(j) != label_col).collect();
    if feature_cols.is_empty() {
        return Err(Error::Empty(format!("{source_name} (no feature columns)")));
    }
    let mut values = Vec::with_capacity(body.len() * feature_cols.len());
    let mut label_names: Vec<String> = Vec::new();
    let mut labels = Vec::new();
    for (line, fields) in body {
        if fields.len() != width {
            return Err(parse_err(
                *line,
                format!(
                    "expected {width} fields (as in the first row) but found {}",
                    fields.len()
                ),
            ));
        }
        for &j in &feature_cols {
            let cell = &fields[j];
            let column = &names[j];
            if cell.is_empty() {
                return Err(parse_err(
                    *line,
                    format!("column {column:?} is empty; fill in or remove the row"),
                ));
            }
            let v: f64 = cell.parse().map_err(|_| {
                parse_err(
                    *line,
                    format!("column {column:?} holds {cell:?}, which is not a number"),
                )
            })?;
            if !v.is_finite() {
                return Err(parse_err(
                    *line,
                    format!(
                        "column {column:?} holds a non-finite value ({cell}); remove or impute it"
                    ),
                ));
            }
            values.push(v);
        }
        if let Some(j) = label_col {
            let name = &fields[j];
            let id = match label_names.iter().position(|l| l == name) {
                Some(id) => id,
                None => {
                    label_names.push(name.clone());
                    label_names.len() - 1
                }
            };
            labels.push(id);
        }
    }
    let points = DMatrix::from_row_slice(body.len(), feature_cols.len(), &values);
    Ok(Dataset {
        name: source_name.to_string(),
        points,
        feature_names: feature_cols.iter().map(|&j| names[j].clone()).collect(),
        labels: label_col.map(|_| labels),
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
        assert!(matches!(parse("", None), Err(Error::Empty(_))));
        assert!(matches!(parse("\n \n", None), Err(Error::Empty(_))));
        assert!(matches!(parse("a,b\n", None), Err(Error::Empty(_))));
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
