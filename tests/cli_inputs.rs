//! End-to-end tests of the input formats (`.npy`, gzip, `.npz`) and the preprocessing
//! before the method.

mod common;

use common::*;
use std::path::Path;

#[test]
fn npy_input_fits_as_the_same_points_in_csv() {
    let (dir, input) = sheet_input("npy", 60);
    let points = unfold::data::read_csv(&input, &Default::default())
        .unwrap()
        .points;
    let npy = dir.join("data.npy");
    unfold::data::write_npy(&npy, &points).unwrap();
    let fit = |data: &Path, out: &Path| {
        succeeds(&[
            "fit",
            "--method",
            "meu",
            "--k",
            "8",
            "--input",
            s(data),
            "--out",
            s(out),
        ]);
        std::fs::read_to_string(out).unwrap()
    };
    let from_csv = fit(&input, &dir.join("a.csv"));
    let from_npy = fit(&npy, &dir.join("b.csv"));
    assert_eq!(from_csv, from_npy);
    let truncated = dir.join("cut.npy");
    let bytes = std::fs::read(&npy).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    fails_with(
        &["fit", "--method", "meu", "--input", s(&truncated)],
        "not a readable .npy file",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gzip_and_npz_inputs_and_preprocessing_before_the_method() {
    use std::io::Write;
    let (dir, input) = sheet_input("preprocess", 60);
    let fit_with = |method: &str, data: &Path, out: &Path, extra: &[&str]| {
        let mut args = vec![
            "fit",
            "--method",
            method,
            "--input",
            s(data),
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        succeeds(&args);
        std::fs::read_to_string(out).unwrap()
    };
    let fit = |data: &Path, out: &Path, extra: &[&str]| fit_with("pca", data, out, extra);
    let plain = fit(&input, &dir.join("plain.csv"), &[]);
    let gz = dir.join("data.csv.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(&input).unwrap()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    assert_eq!(fit(&gz, &dir.join("gz.csv"), &[]), plain);
    // `--preprocess scale` gives the fit to the z-scored points.
    let points = unfold::data::read_csv(&input, &Default::default())
        .unwrap()
        .points;
    let z = dir.join("z.csv");
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    unfold::data::write_csv(&z, &unfold::data::standardise(&points).points, &names).unwrap();
    let scaled = fit(&input, &dir.join("s.csv"), &["--preprocess", "scale"]);
    assert_eq!(scaled, fit(&z, &dir.join("zfit.csv"), &[]));
    assert_ne!(scaled, plain);
    // A step list is checked.
    fails_with(
        &[
            "fit",
            "--method",
            "pca",
            "--input",
            s(&input),
            "--preprocess",
            "log2",
        ],
        "\"log2\" is not a step",
    );
    // A preprocessed fit is saved with its pipeline, which `project` applies to new
    // points: projecting the raw input gives the saved model's projection of the z-scored
    // points (those of a model fitted on them directly).
    let meu = |data: &Path, out: &Path, extra: &[&str]| fit_with("meu", data, out, extra);
    let model = dir.join("m.bin");
    let fitted = meu(
        &input,
        &dir.join("sm.csv"),
        &["--preprocess", "scale", "--save", s(&model)],
    );
    let direct = dir.join("direct.bin");
    assert_eq!(
        meu(&z, &dir.join("dm.csv"), &["--save", s(&direct)]),
        fitted
    );
    let project = |m: &Path, data: &Path, out: &Path| {
        let o = unfold(&[
            "project",
            "--model",
            s(m),
            "--input",
            s(data),
            "--out",
            s(out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        (std::fs::read_to_string(out).unwrap(), stderr(&o))
    };
    let (through, said) = project(&model, &input, &dir.join("p1.csv"));
    assert!(said.contains("after its preprocessing (scale)"), "{said}");
    let (on_z, _) = project(&direct, &z, &dir.join("p2.csv"));
    assert_eq!(through, on_z);
    // `select` fits every candidate to the preprocessed points.
    let table = |extra: &[&str]| {
        let mut args = vec![
            "select",
            "--method",
            "meu",
            "--k",
            "6..7",
            "--input",
            s(&input),
        ];
        args.extend_from_slice(extra);
        let o = unfold(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    assert_ne!(table(&["--preprocess", "scale"]), table(&[]));
    fails_with(
        &[
            "select",
            "--method",
            "meu",
            "--input",
            s(&input),
            "--preprocess",
            "pca:0",
        ],
        "pca:0",
    );
    // A gzip name on plain text is refused as such.
    let fake = dir.join("fake.csv.gz");
    std::fs::copy(&input, &fake).unwrap();
    fails_with(
        &["fit", "--method", "pca", "--input", s(&fake)],
        "not a gzip file",
    );
    std::fs::remove_dir_all(&dir).ok();
}
