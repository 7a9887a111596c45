//! refrain's own training and evaluation families are written as TOML (`training/data/families/`)
//! and built into the JSONL sets the benchmarks read by one generator; the committed sets must be
//! exactly what the families build, or an evaluation would judge data nobody wrote.

use std::process::Command;

#[test]
fn the_committed_family_sets_are_what_the_family_files_build() {
    let out = Command::new("python3")
        .arg(crate::support::repo().join("training/data/build.py"))
        .arg("--check")
        .output()
        .expect("python3 runs the family generator");
    assert!(
        out.status.success(),
        "training/data/build.py --check: {}{}\nrun python3 training/data/build.py and commit what it writes",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
