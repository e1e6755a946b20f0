//! No crate's files import each other in a circle of more than three (issue 29's measure):
//! every crate under `crates/`, its `src/` only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[path = "support/imports.rs"]
mod imports;

/// The most files one circle of imports may hold.
const MAX_CIRCLE: usize = 3;

#[test]
fn no_crate_has_a_circle_of_more_than_three_files() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = Vec::new();
    let mut too_big = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = entry.file_name().to_string_lossy().into_owned();
        let graph = imports::Graph::of(&src);
        let edges = graph.edges();
        for set in imports::circles(&edges) {
            if set.len() > MAX_CIRCLE {
                let mut names: Vec<String> = set.iter().map(|m| graph.name(m)).collect();
                names.sort();
                // The imports inside the circle, so a reader sees which one to break.
                let mut inside: Vec<String> = set
                    .iter()
                    .flat_map(|a| {
                        edges[a]
                            .iter()
                            .filter(|b| set.contains(b))
                            .map(|b| format!("{} → {}", graph.name(a), graph.name(b)))
                    })
                    .collect();
                inside.sort();
                too_big.push(format!(
                    "{krate}: {} files: {names:?}\n    {}",
                    names.len(),
                    inside.join("\n    ")
                ));
            }
        }
        checked.push(krate);
    }
    // The walk sees the workspace: a crate that wires others and one with rooms.
    assert!(
        checked.iter().any(|c| c == "jobwire") && checked.iter().any(|c| c == "bot"),
        "crates found: {checked:?}"
    );
    assert!(
        too_big.is_empty(),
        "circles of imports:\n{}",
        too_big.join("\n")
    );
}
