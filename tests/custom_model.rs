//! The custom-model example (a new Gaussian random field in under a hundred lines) runs
//! end to end: fit, selection over k, save, load and projection.

// Formatted as an example, with examples/custom_model/rustfmt.toml.
#[rustfmt::skip]
#[path = "../examples/custom_model/main.rs"]
mod custom_model;

#[test]
fn custom_model_example_runs() {
    custom_model::main().expect("the custom-model example runs");
    let lines = include_str!("../examples/custom_model/main.rs")
        .lines()
        .count();
    assert!(lines < 100, "the example has grown to {lines} lines");
}
