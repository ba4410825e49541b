//! Model files across versions and under damage (`docs/model-files.md`).
//!
//! `tests/fixtures/models/` holds one small model per registered method, saved by each
//! format version from 3 on, with the numbers it must reproduce (the projection of `points.csv` for the
//! methods that project, the stored embedding otherwise). They are never rewritten when
//! the code changes: a later build must load them and give the same numbers. The
//! generator (`write_model_fixtures`, ignored) writes them for a new method or a new format
//! version; see the folder's README.
//!
//! The fuzz tests damage every fixture in many ways (byte flips, truncations,
//! extensions, random header lengths, random bytes, and payloads altered behind a valid
//! checksum so that the decoder and the model's own checks see them) and require `Ok` or a
//! typed error from the loader, never a panic or a large allocation, and no panic from a
//! projection of well-formed points by a model that loaded (one file more carries a
//! preprocessing in its transform block, which new points go through first). The bounded run is part of the
//! normal tests; `cargo test --release -- --ignored fuzz` runs many more cases.

use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use unfold::core::{
    model_file_bytes, payload_checksum, read_model_file, MODEL_FORMAT_VERSION,
    OLDEST_MODEL_FORMAT_VERSION,
};
use unfold::models::registry::{FitData, Model, Registry, Saved, Settings};

/// The system allocator, recording the largest single request: a damaged length field
/// must never make the loader ask for a huge block.
struct Recording;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Relaxed);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// No single allocation of the fuzzed loads may exceed this (the fixtures are a few KB).
const ALLOCATION_LIMIT: usize = 64 << 20;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

/// The fixture of `method` for the current format version.
fn fixture_path(method: &str, ext: &str) -> PathBuf {
    versioned_path(method, MODEL_FORMAT_VERSION, ext)
}

/// The fixture of `method` written by format version `version`.
fn versioned_path(method: &str, version: u32, ext: &str) -> PathBuf {
    dir().join(format!("{method}.v{version}.{ext}"))
}

fn read_csv(path: &Path) -> DMatrix<f64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; see tests/fixtures/models/README.md",
            path.display()
        )
    });
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn write_csv(path: &Path, m: &DMatrix<f64>) {
    let mut text = String::new();
    for row in m.row_iter() {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:e}")).collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// The numbers a fixture must reproduce: the projection of the query points where the
/// method projects, otherwise its stored embedding.
fn numbers(model: &dyn Model, points: &DMatrix<f64>) -> DMatrix<f64> {
    match model.out_of_sample() {
        Some(rule) => rule.project(points).unwrap().mean,
        None => model.coords().clone(),
    }
}

/// The settings of each fixture: k = 6 where the method has k, LL-LVM in one dimension
/// (its covariances are (n dx)^2, kept to a few KB).
fn fixture_settings(registry: &Registry, method: &str) -> Settings {
    let info = registry.get(method).unwrap().info();
    let mut s = Settings::new();
    if info.has("k") {
        s = s.with("k", 6usize);
    }
    if method == "lllvm" {
        s = s.with("dim", 1usize);
    }
    s
}

/// Rewrites the fixtures of the current format version (run by hand, see the README).
#[test]
#[ignore]
fn write_model_fixtures() {
    let registry = Registry::builtin();
    let y = unfold::data::synthetic::swiss_roll(20, 0.05, 0)
        .unwrap()
        .points;
    std::fs::create_dir_all(dir()).unwrap();
    let query = dir().join("points.csv");
    if !query.exists() {
        let points = unfold::data::synthetic::swiss_roll(4, 0.05, 99)
            .unwrap()
            .points;
        write_csv(&query, &points);
    }
    let points = read_csv(&query);
    for method in registry.names() {
        let settings = fixture_settings(&registry, method);
        let fitted = registry
            .fit(
                method,
                &FitData::points(&y),
                &settings,
                &unfold::core::Silent,
            )
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let model = fitted.model;
        Registry::save(model.as_ref(), &fixture_path(method, "model")).unwrap();
        write_csv(
            &fixture_path(method, "csv"),
            &numbers(model.as_ref(), &points),
        );
    }
}

/// A model file with a transform block: MEU fitted after `scale,pca:3` on the fixtures'
/// training points.
fn preprocessed_model() -> Vec<u8> {
    use unfold::data::{Preprocessing, Step};
    let y = unfold::data::synthetic::swiss_roll(20, 0.05, 0)
        .unwrap()
        .points;
    let (pipeline, z) = Preprocessing::fit(&[Step::Scale, Step::Pca(3)], y).unwrap();
    let registry = Registry::builtin();
    let settings = fixture_settings(&registry, "meu");
    let model = registry
        .fit(
            "meu",
            &FitData::points(&z),
            &settings,
            &unfold::core::Silent,
        )
        .unwrap()
        .model;
    Registry::to_bytes_with(model.as_ref(), &pipeline).unwrap()
}

#[test]
fn a_model_keeps_its_preprocessing_and_new_points_go_through_it() {
    use unfold::data::{Preprocessing, Step};
    let registry = Registry::builtin();
    let y = unfold::data::synthetic::swiss_roll(20, 0.05, 0)
        .unwrap()
        .points;
    let (pipeline, z) = Preprocessing::fit(&[Step::Scale, Step::Pca(3)], y.clone()).unwrap();
    let bytes = preprocessed_model();
    let path = Path::new("m.bin");
    let saved = registry.saved_from_bytes(&bytes, path).unwrap();
    assert_eq!(saved.preprocessing, pipeline);
    assert_eq!(saved.preprocessing.describe(), "scale,pca:3");
    // New raw points, through the stored pipeline and the stored model, land where the
    // pipeline and the model before saving put them; without the pipeline they do not.
    let model = registry
        .fit(
            "meu",
            &FitData::points(&z),
            &fixture_settings(&registry, "meu"),
            &unfold::core::Silent,
        )
        .unwrap()
        .model;
    let y_new = read_csv(&dir().join("points.csv"));
    let want = model
        .out_of_sample()
        .unwrap()
        .project(&pipeline.apply(y_new.clone()).unwrap())
        .unwrap()
        .mean;
    let rule = saved.model.out_of_sample().unwrap();
    let got = rule
        .project(&saved.preprocessing.apply(y_new.clone()).unwrap())
        .unwrap()
        .mean;
    assert_eq!(got, want);
    assert_ne!(rule.project(&y_new).unwrap().mean, want);
    // The bare loader refuses it: new points would skip the preprocessing.
    let err = registry.from_bytes(&bytes, path).err().unwrap().to_string();
    assert!(
        err.contains("fitted after the preprocessing `scale,pca:3`"),
        "{err}"
    );
    // A file without preprocessing reads with an empty one.
    let plain = std::fs::read(fixture_path("meu", "model")).unwrap();
    assert!(registry
        .saved_from_bytes(&plain, path)
        .unwrap()
        .preprocessing
        .is_empty());
}

/// Every fixture of every registered method: `(name, file bytes)`.
fn fixtures(registry: &Registry) -> Vec<(&'static str, Vec<u8>)> {
    registry
        .names()
        .into_iter()
        .map(|m| {
            let path = fixture_path(m, "model");
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; see tests/fixtures/models/README.md",
                    path.display()
                )
            });
            (m, bytes)
        })
        .collect()
}

fn assert_close(found: &DMatrix<f64>, expected: &DMatrix<f64>, what: &str) {
    assert_eq!(found.shape(), expected.shape(), "{what}");
    let scale = expected.amax();
    for (a, b) in found.iter().zip(expected.iter()) {
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(scale),
            "{what}: {a} against the stored {b}"
        );
    }
}

/// The same model under the header of format version 2 (no length, no checksum), 3 (no
/// transform block) or 4: a model fitted on the data as given has the same payload in
/// every version from [`layout_since`] its method on.
fn as_version(bytes: &[u8], version: u32) -> Vec<u8> {
    let parts = read_model_file(bytes, Path::new("fixture")).unwrap();
    assert!(parts.transform.is_empty());
    let mut out = b"UNFOLDMD".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(parts.kind.len() as u32).to_le_bytes());
    out.extend_from_slice(parts.kind.as_bytes());
    if version >= 4 {
        out.extend_from_slice(&0u64.to_le_bytes());
    }
    if version >= 3 {
        out.extend_from_slice(&(parts.payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&payload_checksum(parts.payload).to_le_bytes());
    }
    out.extend_from_slice(parts.payload);
    out
}

/// The first format version with the current payload layout of `method`'s model: the
/// training points of Isomap and LLE became one of two layouts (dense or sparse) in
/// version 5.
fn layout_since(method: &str) -> u32 {
    match method {
        "isomap" | "lle" => 5,
        _ => OLDEST_MODEL_FORMAT_VERSION,
    }
}

#[test]
fn every_method_has_a_fixture_and_every_fixture_loads_with_its_numbers() {
    let registry = Registry::builtin();
    let points = read_csv(&dir().join("points.csv"));
    // Every method has a fixture of the current version ([`fixtures`] fails otherwise).
    for (method, bytes) in fixtures(&registry) {
        assert!(bytes.len() < 16 << 10, "{method}: keep fixtures small");
    }
    let mut checked = 0;
    for version in OLDEST_MODEL_FORMAT_VERSION..=MODEL_FORMAT_VERSION {
        for method in registry.names() {
            let path = versioned_path(method, version, "model");
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let expected = read_csv(&versioned_path(method, version, "csv"));
            let mut files = vec![(version, bytes.clone())];
            // The same payload under the older headers of its layout.
            for older in layout_since(method).min(version)..version {
                files.push((older, as_version(&bytes, older)));
            }
            for (v, file) in files {
                let model = registry
                    .from_bytes(&file, &path)
                    .unwrap_or_else(|e| panic!("{method} v{v}: {e}"));
                assert_eq!(model.method(), method);
                let found = numbers(model.as_ref(), &points);
                assert_close(&found, &expected, &format!("{method} v{v}"));
                checked += 1;
            }
        }
    }
    eprintln!("model-file fixtures: {checked} files loaded with their numbers");
}

#[test]
fn future_versions_and_other_kinds_are_refused_naming_both() {
    let registry = Registry::builtin();
    let bytes = std::fs::read(fixture_path("meu", "model")).unwrap();
    let mut future = bytes.clone();
    future[8..12].copy_from_slice(&9u32.to_le_bytes());
    let err = registry
        .from_bytes(&future, Path::new("m.bin"))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains(
            "written by format version 9; this build reads versions 2 to 5: update unfold"
        ),
        "{err}"
    );
    let err = registry
        .from_bytes_expecting("pca", &bytes, Path::new("m.bin"))
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("it holds a `meu` model where a `pca` model is expected"),
        "{err}"
    );
    assert!(registry
        .from_bytes_expecting("meu", &bytes, Path::new("m.bin"))
        .is_ok());
    let mut damaged = bytes.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let err = registry
        .from_bytes(&damaged, Path::new("m.bin"))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("corrupt (checksum mismatch)"),
        "{err}"
    );
}

/// A payload behind a valid header and checksum, as a hand-made file would be.
fn rewrap(kind: &str, payload: &[u8]) -> Vec<u8> {
    model_file_bytes(kind, &[], payload)
}

/// Flips 1 to 8 random bits of `b` at or after `from`.
fn flip(b: &mut [u8], from: usize, rng: &mut ChaCha8Rng) {
    if b.len() > from {
        for _ in 0..rng.random_range(1..=8) {
            let at = rng.random_range(from..b.len());
            b[at] ^= 1 << rng.random_range(0..8);
        }
    }
}

/// One damaged file, described for the failure message.
fn damage(bytes: &[u8], rng: &mut ChaCha8Rng) -> (&'static str, Vec<u8>) {
    let parts = read_model_file(bytes, Path::new("fixture")).unwrap();
    let (kind, payload) = (parts.kind, parts.payload);
    let header = bytes.len() - payload.len();
    match rng.random_range(0..10) {
        0 => {
            let mut out = bytes.to_vec();
            flip(&mut out, 0, rng);
            ("byte flips in the file", out)
        }
        1 => {
            let mut p = payload.to_vec();
            flip(&mut p, 0, rng);
            (
                "byte flips in the payload, checksum fixed",
                rewrap(kind, &p),
            )
        }
        choice => damage_more(choice, bytes, kind, payload, header, rng),
    }
}

fn damage_more(
    choice: u32,
    bytes: &[u8],
    kind: &str,
    payload: &[u8],
    header: usize,
    rng: &mut ChaCha8Rng,
) -> (&'static str, Vec<u8>) {
    match choice {
        2 => {
            let cut = rng.random_range(0..bytes.len());
            ("file truncated", bytes[..cut].to_vec())
        }
        3 => {
            let cut = rng.random_range(0..payload.len());
            (
                "payload truncated, checksum fixed",
                rewrap(kind, &payload[..cut]),
            )
        }
        4 => {
            let mut out = bytes.to_vec();
            let extra = rng.random_range(1..64);
            out.extend((0..extra).map(|_| rng.random::<u8>()));
            ("file extended", out)
        }
        5 => {
            // A random kind length or payload length in the header.
            let mut out = bytes.to_vec();
            if rng.random_bool(0.5) {
                out[12..16].copy_from_slice(&rng.random::<u32>().to_le_bytes());
            } else {
                let at = header - 16;
                out[at..at + 8].copy_from_slice(&rng.random::<u64>().to_le_bytes());
            }
            ("random length in the header", out)
        }
        6 => {
            let len = rng.random_range(0..2 * bytes.len());
            let mut out: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            if rng.random_bool(0.5) {
                let keep = header.min(out.len());
                out[..keep].copy_from_slice(&bytes[..keep]);
            }
            ("random bytes", out)
        }
        7 => {
            // A huge length (varint 0xfd + u64) written over the payload.
            let mut p = payload.to_vec();
            let at = rng.random_range(0..p.len().saturating_sub(9).max(1));
            let huge: u64 = rng.random_range(1u64 << 32..u64::MAX);
            let mut v = vec![0xfd];
            v.extend_from_slice(&huge.to_le_bytes());
            for (o, b) in p[at..].iter_mut().zip(v) {
                *o = b;
            }
            (
                "huge length in the payload, checksum fixed",
                rewrap(kind, &p),
            )
        }
        8 => {
            // A special float written over 8 payload bytes.
            let mut p = payload.to_vec();
            let value =
                [f64::NAN, f64::INFINITY, -1.0, 0.0, 1e308, -1e-300][rng.random_range(0..6)];
            let at = rng.random_range(0..p.len().saturating_sub(8).max(1));
            for (o, b) in p[at..].iter_mut().zip(value.to_le_bytes()) {
                *o = b;
            }
            (
                "special float in the payload, checksum fixed",
                rewrap(kind, &p),
            )
        }
        _ => {
            // Bytes inserted into or removed from the payload.
            let mut p = payload.to_vec();
            let at = rng.random_range(0..=p.len());
            if rng.random_bool(0.5) && at < p.len() {
                let n = rng.random_range(1..=8).min(p.len() - at);
                p.drain(at..at + n);
            } else {
                let n = rng.random_range(1..=8);
                let new: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                p.splice(at..at, new);
            }
            (
                "bytes inserted or removed in the payload, checksum fixed",
                rewrap(kind, &p),
            )
        }
    }
}

/// Well-formed new points near the training data: random sizes, scales and duplicates of
/// the query points.
fn new_points(points: &DMatrix<f64>, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    let m = rng.random_range(1..=3);
    let spread = [0.0, 1e-3, 0.1, 1.0, 10.0][rng.random_range(0..5)];
    DMatrix::from_fn(m, points.ncols(), |i, j| {
        points[(i % points.nrows(), j)] + spread * (rng.random::<f64>() - 0.5)
    })
}

/// Counts of one fuzz run over one fixture.
#[derive(Default)]
struct Counts {
    cases: usize,
    refused: usize,
    loaded: usize,
    projected: usize,
}

/// Loads `cases` damaged versions of each fixture (case `c` of fixture `f` from the seed
/// `seed0 + c`, so any failure can be replayed and kept as a regression case) and projects
/// new points with every model that loads. Panics after the run, naming every failing
/// seed.
fn fuzz_model_files(seed0: u64, cases: usize) {
    let registry = Registry::builtin();
    let points = read_csv(&dir().join("points.csv"));
    let mut failures = Vec::new();
    let mut total = 0;
    let mut files = fixtures(&registry);
    files.push(("meu after scale,pca:3", preprocessed_model()));
    for (method, bytes) in files {
        let mut counts = Counts::default();
        for c in 0..cases as u64 {
            let seed = seed0 + c;
            let outcome = fuzz_case(&registry, &bytes, &points, seed, &mut counts);
            if let Err(what) = outcome {
                failures.push(format!("{method}, seed {seed}: {what}"));
            }
        }
        // Well-formed new points projected by the undamaged model.
        let saved = registry
            .saved_from_bytes(&bytes, Path::new("fixture"))
            .unwrap();
        for c in 0..(cases / 10) as u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed0 + c);
            if let Err(what) = use_model(&saved, &points, &mut rng, &mut counts) {
                failures.push(format!("{method}, undamaged, seed {}: {what}", seed0 + c));
            }
        }
        eprintln!(
            "fuzz model files: {method:>7}: {} cases, {} refused, {} loaded, {} projections",
            counts.cases, counts.refused, counts.loaded, counts.projected
        );
        total += counts.cases;
    }
    eprintln!(
        "fuzz model files: {total} cases in all, {} failed",
        failures.len()
    );
    let largest = LARGEST.load(Relaxed);
    assert!(
        largest <= ALLOCATION_LIMIT,
        "an allocation of {largest} bytes"
    );
    assert!(
        failures.is_empty(),
        "failing cases:\n{}",
        failures.join("\n")
    );
}

/// One case: damage the fixture with `seed`, load it, and project with the result if it
/// loads (and with the undamaged model). A panic is returned as an error naming the kind
/// of damage.
fn fuzz_case(
    registry: &Registry,
    bytes: &[u8],
    points: &DMatrix<f64>,
    seed: u64,
    counts: &mut Counts,
) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (what, file) = damage(bytes, &mut rng);
    counts.cases += 1;
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        registry.saved_from_bytes(&file, Path::new("fuzzed"))
    }))
    .map_err(|_| format!("loading panicked ({what})"))?;
    let saved = match loaded {
        Ok(saved) => {
            counts.loaded += 1;
            saved
        }
        Err(unfold::Error::ModelFile { .. }) => {
            counts.refused += 1;
            return Ok(());
        }
        Err(other) => return Err(format!("not a model-file error ({what}): {other}")),
    };
    use_model(&saved, points, &mut rng, counts)
        .map_err(|e| format!("{e} with the loaded model ({what})"))
}

/// What a program does with a loaded model: reads its outputs and, where it projects,
/// projects well-formed new points. A panic is returned as an error.
fn use_model(
    saved: &Saved,
    points: &DMatrix<f64>,
    rng: &mut ChaCha8Rng,
    counts: &mut Counts,
) -> Result<(), String> {
    let model = saved.model.as_ref();
    catch_unwind(AssertUnwindSafe(|| {
        let _ = (
            model.coords().shape(),
            model.evidence(),
            model.convergence(),
        );
        let _ = (
            model.learned_edges(),
            model.tables(),
            model.overlay(),
            model.notes(),
        );
    }))
    .map_err(|_| "reading the outputs panicked".to_string())?;
    if let Some(rule) = model.out_of_sample() {
        let y_new = new_points(points, rng);
        catch_unwind(AssertUnwindSafe(|| {
            if let Ok(y_new) = saved.preprocessing.apply(y_new.clone()) {
                let _ = rule.project(&y_new);
            }
        }))
        .map_err(|_| format!("projecting {} new points panicked", y_new.nrows()))?;
        counts.projected += 1;
    }
    Ok(())
}

/// Damaged files that once crashed a program using the loaded model: `(method, seed)` of
/// [`fuzz_case`] on the current fixtures. Before models were validated these panicked: MEU
/// projecting with a NaN or negative multiplier or a broken edge list ("Matrix slicing out
/// of bounds"), DDRTree drawing its tree with an edge to a centre that does not exist.
const REGRESSIONS: &[(&str, u64)] = &[
    ("meu", 206),
    ("meu", 268),
    ("meu", 359),
    ("ddrtree", 53),
    ("ddrtree", 90),
    ("ddrtree", 107),
];

#[test]
fn damaged_model_files_are_refused_without_panics_or_large_allocations() {
    let registry = Registry::builtin();
    let points = read_csv(&dir().join("points.csv"));
    for &(method, seed) in REGRESSIONS {
        let bytes = std::fs::read(fixture_path(method, "model")).unwrap();
        fuzz_case(&registry, &bytes, &points, seed, &mut Counts::default())
            .unwrap_or_else(|e| panic!("{method}, seed {seed}: {e}"));
    }
    fuzz_model_files(0, 3000);
}

#[test]
fn a_huge_length_field_is_refused_without_allocating_it() {
    let registry = Registry::builtin();
    let bytes = std::fs::read(fixture_path("meu", "model")).unwrap();
    let parts = read_model_file(&bytes, Path::new("fixture")).unwrap();
    let (kind, payload) = (parts.kind, parts.payload);
    // 10^12 written over every position of the payload, so over every length field.
    for at in 0..payload.len() {
        let mut p = payload.to_vec();
        let mut v = vec![0xfd];
        v.extend_from_slice(&1_000_000_000_000u64.to_le_bytes());
        for (o, b) in p[at..].iter_mut().zip(v) {
            *o = b;
        }
        let _ = registry.from_bytes(&rewrap(kind, &p), Path::new("m.bin"));
    }
    let largest = LARGEST.load(Relaxed);
    assert!(
        largest <= ALLOCATION_LIMIT,
        "an allocation of {largest} bytes"
    );
}

/// The long run: `cargo test --release -- --ignored fuzz --nocapture`.
#[test]
#[ignore]
fn fuzz_model_files_long() {
    fuzz_model_files(1_000_000, 100_000);
}
