//! The table of a sweep, written as it runs: each finished candidate's row is appended
//! and synced to disk as soon as it completes, so that an interrupted sweep loses at most
//! the candidates that were running, and [`Table::resume`] reads the rows back to skip
//! those candidates.
//!
//! The table has the columns of [`Selection::to_csv`] and three more that say which sweep
//! wrote each row: `method`, `score`, and `sweep`, a fingerprint of everything the rows'
//! numbers depend on besides the candidate itself (the method's resolved options, the
//! score, the training and held-out points, the given graphs). Rows are appended in the
//! order the candidates finish, with `best` empty; [`Table::finish`] replaces the file
//! with the complete table in the plan's order, the best setting marked.

use crate::search::{candidate_key, row, Candidate, Selection, Trial, CSV_COLUMNS};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use unfold_core::{Error, Evidence, EvidenceKind, Result};

/// The header line of a sweep's table (without the line end).
pub fn table_columns() -> String {
    format!("{CSV_COLUMNS},method,score,sweep")
}

/// What identifies a sweep's rows: the method, the score, the fingerprint of its inputs,
/// and its candidates in the plan's order. Made by [`crate::Sweep::table_spec`].
#[derive(Clone, Debug)]
pub struct TableSpec {
    pub(crate) method: String,
    pub(crate) score: String,
    pub(crate) fingerprint: String,
    pub(crate) candidates: Vec<Candidate>,
}

impl TableSpec {
    /// The sweep's fingerprint (16 hexadecimal digits), the `sweep` column.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The sweep's candidates, in the plan's order.
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// The complete table of a ranked sweep: the header, then one row per trial in the
    /// plan's order, the best setting marked.
    pub fn csv(&self, selection: &Selection) -> String {
        let mut out = table_columns();
        out.push('\n');
        for t in &selection.trials {
            out.push_str(&selection.row(t));
            out.push_str(&self.identity());
            out.push('\n');
        }
        out
    }

    /// The row of a finished trial before the sweep is ranked: its own evidence kind
    /// (empty if it failed) and `best` empty.
    fn partial_row(&self, t: &Trial) -> String {
        let kind = t.evidence.as_ref().map(|e| e.kind);
        format!("{}{}\n", row(t, kind, None), self.identity())
    }

    /// `,method,score,sweep`.
    fn identity(&self) -> String {
        format!(",{},{},{}", self.method, self.score, self.fingerprint)
    }

    /// The trials in the complete `lines` of a table (the header first), each matched to
    /// a candidate of this sweep; a candidate listed twice is taken once.
    fn parse(&self, lines: &[&str], source: &str) -> Result<Vec<Trial>> {
        let columns = table_columns();
        if lines.first() != Some(&columns.as_str()) {
            return Err(Error::invalid(
                "resume",
                format!(
                    "{source} is not a table of `unfold select` with these columns: its first \
                     line is `{}`, expected `{columns}`; write to another table, or start \
                     afresh without resuming",
                    lines.first().copied().unwrap_or_default()
                ),
            ));
        }
        let keys: Vec<String> = self.candidates.iter().map(candidate_key).collect();
        let mut seen = vec![false; keys.len()];
        let mut trials = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(1) {
            let bad = |message: String| Error::Parse {
                source_name: source.to_string(),
                line: i + 1,
                message,
            };
            let f = split_row(line).ok_or_else(|| {
                bad(format!(
                    "not a row of `{columns}`; the table was changed by hand or by another \
                     program: restore it, or start afresh without resuming"
                ))
            })?;
            if f.method != self.method {
                return Err(bad(format!(
                    "the table holds a sweep of `{}`, this sweep is of `{}`; resume only the \
                     same sweep, or write to another table",
                    f.method, self.method
                )));
            }
            if f.score != self.score {
                return Err(bad(format!(
                    "the table's candidates are ranked by `{}`, this sweep's by `{}`; resume \
                     only the same sweep, or write to another table",
                    f.score, self.score
                )));
            }
            if f.sweep != self.fingerprint {
                return Err(bad(format!(
                    "the row was computed for other data, method options or held-out points \
                     (sweep {} in the table, {} here); resume with the same input and \
                     options, or write to another table",
                    f.sweep, self.fingerprint
                )));
            }
            let index = keys.iter().position(|k| *k == f.key).ok_or_else(|| {
                bad(format!(
                    "the candidate `{}` (k,graph,dim,restart,seed) is not one of this sweep's; \
                     resume with the same neighbourhood sizes, graphs, dimensions, restarts \
                     and seed",
                    f.key
                ))
            })?;
            if std::mem::replace(&mut seen[index], true) {
                continue;
            }
            let number = |what: &str, text: &str| {
                text.parse::<f64>()
                    .map_err(|_| bad(format!("the {what} `{text}` is not a number")))
            };
            let evidence = if f.value.is_empty() {
                None
            } else {
                let kind = EvidenceKind::parse(f.kind)
                    .ok_or_else(|| bad(format!("unknown evidence kind `{}`", f.kind)))?;
                Some(Evidence::new(kind, number("value", f.value)?))
            };
            let error = (!f.error.is_empty()).then(|| f.error.to_string());
            if evidence.is_none() && error.is_none() {
                return Err(bad("a row with neither a value nor an error".to_string()));
            }
            trials.push(Trial {
                candidate: self.candidates[index],
                evidence,
                error,
                seconds: number("time", f.seconds)?,
            });
        }
        Ok(trials)
    }
}

/// The fields of one row.
struct Fields<'a> {
    key: String,
    kind: &'a str,
    value: &'a str,
    seconds: &'a str,
    error: &'a str,
    method: &'a str,
    score: &'a str,
    sweep: &'a str,
}

/// Splits a row `k,graph,dim,restart,seed,kind,value,seconds,best,"error",method,score,
/// sweep`: nine plain fields, the quoted error (which holds no quote), three plain fields.
fn split_row(line: &str) -> Option<Fields<'_>> {
    let mut head = line.splitn(10, ',');
    let plain: Vec<&str> = head.by_ref().take(9).collect();
    let rest = head.next()?;
    let rest = rest.strip_prefix('"')?;
    let (error, tail) = rest.split_once('"')?;
    let tail: Vec<&str> = tail.strip_prefix(',')?.split(',').collect();
    if plain.len() != 9 || tail.len() != 3 {
        return None;
    }
    Some(Fields {
        key: plain[..5].join(","),
        kind: plain[5],
        value: plain[6],
        seconds: plain[7],
        error,
        method: tail[0],
        score: tail[1],
        sweep: tail[2],
    })
}

/// A sweep's table on disk, open for appending rows as candidates finish.
pub struct Table {
    path: PathBuf,
    /// `None` once a write failed.
    file: Mutex<Option<File>>,
    spec: TableSpec,
}

/// A table opened by [`Table::resume`].
pub struct Resumed {
    pub table: Table,
    /// The trials already in the table, in the order of its rows.
    pub finished: Vec<Trial>,
    /// Whether a half-written last line (the process killed while writing it) was
    /// dropped.
    pub dropped_partial_line: bool,
}

impl Table {
    /// Starts the table at `path` afresh: the header alone replaces any file there.
    pub fn create(path: &Path, spec: TableSpec) -> Result<Table> {
        Table::open(path, spec, &format!("{}\n", table_columns()))
    }

    /// Opens the table at `path` to continue the sweep: checks that its header and every
    /// row belong to this sweep (same method, score, inputs and candidates; an error says
    /// which differs), drops a half-written last line, and returns the finished trials. A
    /// missing or empty file starts afresh.
    pub fn resume(path: &Path, spec: TableSpec) -> Result<Resumed> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(path, e)),
        };
        let source = path.display().to_string();
        // Everything up to the last line end was written whole; a tail without one is the
        // line being written when the process stopped.
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let dropped_partial_line = complete < bytes.len();
        if complete == 0 {
            return Ok(Resumed {
                table: Table::create(path, spec)?,
                finished: Vec::new(),
                dropped_partial_line,
            });
        }
        let text = std::str::from_utf8(&bytes[..complete]).map_err(|_| {
            Error::invalid(
                "resume",
                format!(
                    "{source} is not a table of `unfold select` (not UTF-8 text); write to \
                     another table, or start afresh without resuming"
                ),
            )
        })?;
        let lines: Vec<&str> = text.lines().collect();
        let finished = spec.parse(&lines, &source)?;
        let table = if dropped_partial_line {
            Table::open(path, spec, text)?
        } else {
            let file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            Table {
                path: path.to_path_buf(),
                file: Mutex::new(Some(file)),
                spec,
            }
        };
        Ok(Resumed {
            table,
            finished,
            dropped_partial_line,
        })
    }

    /// Replaces the file at `path` with `content` (atomically) and opens it for appending.
    fn open(path: &Path, spec: TableSpec, content: &str) -> Result<Table> {
        unfold_core::write_atomic(path, content.as_bytes())?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(Table {
            path: path.to_path_buf(),
            file: Mutex::new(Some(file)),
            spec,
        })
    }

    /// The table's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sweep the table belongs to.
    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// Appends the row of a finished trial in one write and syncs it to disk. A write that
    /// fails (a full disk) is cut back off the file where possible, and every later
    /// append fails too, so that no row is ever written after a partial one.
    pub fn append(&self, trial: &Trial) -> Result<()> {
        let line = self.spec.partial_row(trial);
        let mut guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = guard.as_mut() else {
            return Err(Error::invalid(
                "out",
                format!(
                    "{}: an earlier row could not be written; the rows before it are kept",
                    self.path.display()
                ),
            ));
        };
        let written = file.metadata().map(|m| m.len());
        let result = file
            .write_all(line.as_bytes())
            .and_then(|()| file.sync_data());
        if let Err(e) = result {
            if let Ok(len) = written {
                let _ = file.set_len(len).and_then(|()| file.sync_data());
            }
            *guard = None;
            return Err(Error::io(&self.path, e));
        }
        Ok(())
    }

    /// Replaces the file with the complete table of the ranked sweep (atomically) and
    /// returns its text.
    pub fn finish(&self, selection: &Selection) -> Result<String> {
        let csv = self.spec.csv(selection);
        let _file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        unfold_core::write_atomic(&self.path, csv.as_bytes())?;
        Ok(csv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{grid, grid_graphs, GraphSource};
    use unfold_graph::Symmetrisation;

    fn spec(candidates: Vec<Candidate>) -> TableSpec {
        TableSpec {
            method: "meu".to_string(),
            score: "evidence".to_string(),
            fingerprint: "0123456789abcdef".to_string(),
            candidates,
        }
    }

    /// A trial per candidate: values that print with many digits, and a failure with an
    /// error holding commas, quotes and a line end.
    fn trials(candidates: &[Candidate]) -> Vec<Trial> {
        candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (evidence, error) = if i == 1 {
                    (None, Some("5 components, \"sizes\" 3,\n4".to_string()))
                } else {
                    let v = -(i as f64 + 1.0) / 3.0 * 1e5;
                    (Some(Evidence::new(EvidenceKind::LogLikelihood, v)), None)
                };
                Trial {
                    candidate: *c,
                    evidence,
                    error,
                    seconds: 0.25 * i as f64,
                }
            })
            .collect()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("unfold-table-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("table.csv")
    }

    fn bits(t: &Trial) -> (Candidate, Option<(EvidenceKind, u64)>, Option<String>) {
        let e = t.evidence.as_ref().map(|e| (e.kind, e.value.to_bits()));
        (t.candidate, e, t.error.clone())
    }

    #[test]
    fn rows_appended_out_of_order_resume_to_the_same_complete_table() {
        let mut cands = grid(&[5, 8], &[Symmetrisation::Union], &[2], 2, 7);
        cands.extend(grid_graphs(&[GraphSource::Radius(0.3)], &[2], 1, 7));
        let all = trials(&cands);
        let path = scratch("resume");
        let table = Table::create(&path, spec(cands.clone())).unwrap();
        for i in [3, 1, 4] {
            table.append(&all[i]).unwrap();
        }
        drop(table);
        let resumed = Table::resume(&path, spec(cands.clone())).unwrap();
        assert!(!resumed.dropped_partial_line);
        let back: Vec<_> = resumed.finished.iter().map(bits).collect();
        let mut want: Vec<_> = [3, 1, 4].iter().map(|&i| bits(&all[i])).collect();
        // The error is stored on one line, without quotes.
        want[1].2 = Some("5 components,  sizes  3, 4".to_string());
        assert_eq!(back, want);
        for i in [0, 2] {
            resumed.table.append(&all[i]).unwrap();
        }
        let mut merged = resumed.finished.clone();
        merged.extend([all[0].clone(), all[2].clone()]);
        merged.sort_by_key(|t| cands.iter().position(|c| *c == t.candidate));
        let selection = Selection::from_trials(merged).unwrap();
        let csv = resumed.table.finish(&selection).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), csv);
        assert_eq!(csv.lines().count(), 1 + cands.len());
        assert!(csv
            .lines()
            .nth(5)
            .unwrap()
            .starts_with(",radius=0.3,2,0,7,log_likelihood,"));
        // A finished table resumes with nothing left to run, and rewrites to itself.
        let again = Table::resume(&path, spec(cands.clone())).unwrap();
        assert_eq!(again.finished.len(), cands.len());
        let selection = Selection::from_trials(again.finished.clone()).unwrap();
        assert_eq!(again.table.finish(&selection).unwrap(), csv);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn a_half_written_last_line_is_dropped() {
        let cands = grid(&[5, 6, 7], &[Symmetrisation::Union], &[2], 1, 0);
        let all = trials(&cands);
        let path = scratch("half");
        let table = Table::create(&path, spec(cands.clone())).unwrap();
        table.append(&all[0]).unwrap();
        table.append(&all[2]).unwrap();
        drop(table);
        // The process was killed while writing the third row: cut it at every length.
        let whole = std::fs::read(&path).unwrap();
        let row = spec(cands.clone()).partial_row(&all[1]);
        for cut in 1..row.len() {
            let mut bytes = whole.clone();
            bytes.extend_from_slice(&row.as_bytes()[..cut]);
            std::fs::write(&path, &bytes).unwrap();
            let resumed = Table::resume(&path, spec(cands.clone())).unwrap();
            assert!(resumed.dropped_partial_line);
            assert_eq!(resumed.finished.len(), 2);
            assert_eq!(std::fs::read(&path).unwrap(), whole, "cut at {cut}");
        }
        // Killed while writing the header: the table starts afresh.
        std::fs::write(&path, "k,graph,di").unwrap();
        let resumed = Table::resume(&path, spec(cands.clone())).unwrap();
        assert!(resumed.finished.is_empty() && resumed.dropped_partial_line);
        let header = format!("{}\n", table_columns());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), header);
        // No file yet: a fresh table.
        std::fs::remove_file(&path).unwrap();
        let resumed = Table::resume(&path, spec(cands)).unwrap();
        assert!(resumed.finished.is_empty() && !resumed.dropped_partial_line);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn after_a_failed_write_no_row_is_appended() {
        let cands = grid(&[5, 6], &[Symmetrisation::Union], &[2], 1, 0);
        let all = trials(&cands);
        let path = scratch("failed");
        drop(Table::create(&path, spec(cands.clone())).unwrap());
        // A handle that cannot write stands in for a full disk.
        let table = Table {
            path: path.clone(),
            file: Mutex::new(Some(File::open(&path).unwrap())),
            spec: spec(cands),
        };
        assert!(table.append(&all[0]).is_err());
        let again = table.append(&all[1]).unwrap_err().to_string();
        assert!(
            again.contains("an earlier row could not be written"),
            "{again}"
        );
        let header = format!("{}\n", table_columns());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), header);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn a_table_of_another_sweep_is_refused_with_what_differs() {
        let cands = grid(&[5, 6], &[Symmetrisation::Union], &[2], 1, 0);
        let all = trials(&cands);
        let path = scratch("other");
        let table = Table::create(&path, spec(cands.clone())).unwrap();
        table.append(&all[0]).unwrap();
        drop(table);
        let refused = |other: TableSpec| Table::resume(&path, other).err().unwrap().to_string();
        let mut lllvm = spec(cands.clone());
        lllvm.method = "lllvm".to_string();
        assert!(refused(lllvm).contains("a sweep of `meu`, this sweep is of `lllvm`"));
        let mut gplvm = spec(cands.clone());
        gplvm.score = "gplvm".to_string();
        assert!(refused(gplvm).contains("ranked by `evidence`, this sweep's by `gplvm`"));
        let mut data = spec(cands.clone());
        data.fingerprint = "fedcba9876543210".to_string();
        assert!(refused(data).contains("other data, method options"));
        let fewer = spec(grid(&[6], &[Symmetrisation::Union], &[2], 1, 0));
        assert!(refused(fewer).contains("`5,union,2,0,0` (k,graph,dim,restart,seed) is not one"));
        // A table with other columns (an older table, or another program's CSV).
        std::fs::write(
            &path,
            "k,graph,dim,restart,seed,kind,value,seconds,best,error\n",
        )
        .unwrap();
        assert!(refused(spec(cands.clone())).contains("not a table of `unfold select`"));
        std::fs::write(&path, format!("{}\n5,union,2\n", table_columns())).unwrap();
        assert!(refused(spec(cands.clone())).contains("line 2: not a row"));
        std::fs::write(&path, [0xff, 0xfe, b'\n']).unwrap();
        assert!(refused(spec(cands)).contains("not UTF-8"));
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }
}
