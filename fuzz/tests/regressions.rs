//! Every fuzz target's seed corpus and every input kept in
//! `fuzz/regressions/<target>/` (inputs that once broke an invariant),
//! replayed through the target in a plain `cargo test`: no fuzzing tool
//! needed.

use std::path::Path;

fn replay(target: &str) {
    let check = hyperdb_api_fuzz::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, check)| *check)
        .expect("a target");
    let seeds = hyperdb_api_fuzz::seeds::seeds(target);
    assert!(!seeds.is_empty(), "{target} has no seeds");
    for seed in &seeds {
        check(seed);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let mut kept = 0;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let input = std::fs::read(&path).expect("a kept input");
            eprintln!("{target}: {}", path.display());
            check(&input);
            kept += 1;
        }
    }
    eprintln!(
        "{target}: {} seeds and {kept} kept inputs pass",
        seeds.len()
    );
}

#[test]
fn backend() {
    replay("backend");
}

#[test]
fn session() {
    replay("session");
}

#[test]
fn hyperbinary() {
    replay("hyperbinary");
}

#[test]
fn arrow() {
    replay("arrow");
}

#[test]
fn scram() {
    replay("scram");
}

#[test]
fn escape() {
    replay("escape");
}

/// Every target has a regression test above and a libFuzzer binary.
#[test]
fn every_target_is_replayed_and_built() {
    let tests = include_str!("regressions.rs");
    let manifest = include_str!("../Cargo.toml");
    for (name, _) in hyperdb_api_fuzz::TARGETS {
        assert!(tests.contains(&format!("replay(\"{name}\")")), "{name}");
        assert!(
            manifest.contains(&format!("path = \"fuzz_targets/{name}.rs\"")),
            "{name}"
        );
    }
}
