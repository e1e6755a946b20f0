//! The crate's files import each other without circles, and its rooms do not import each
//! other (ARCHITECTURE.md, "Rooms"): a file names another through `use` or an inline path
//! (`crate::a::b`, `super::c`); a name reached through a re-export counts as the file that
//! defines it; `mod` declarations and test modules do not count. Each room is given only
//! the store traits it uses: no file but the wiring names `jobwire_store::Store`, the bundle.

use std::path::Path;

#[path = "../../../core/tests/support/imports.rs"]
mod graph;

use graph::{File, Graph, ModPath, circles, parse};

/// The rooms: files under these prefixes (of `src/`) never name a file of another room.
const ROOMS: &[&str] = &[
    "menus/",
    "category_bot.rs",
    "cards.rs",
    "billing/",
    "placements/",
    "digest.rs",
    "notices.rs",
];

/// The files that wire the rooms, the only ones that may name `Store` (the bundle of every
/// store trait): the rest get the narrow traits they use.
const WIRING: &[&str] = &["runtime.rs", "router/"];

/// The most files one circle of imports may hold (the measure).
const MAX_CIRCLE: usize = 3;

#[test]
fn no_circle_of_imports_and_no_room_imports_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = Graph::of(&root);
    // Stricter than the workspace's check: a re-export counts as an import here.
    graph.reexports_only = false;
    let edges = graph.edges();
    let name = |m: &ModPath| graph.files[m].0.clone();
    // The check sees the edges it must: the runtime wires the router, the router a room.
    let edge = |a: &str, b: &str| {
        edges
            .iter()
            .any(|(m, t)| name(m) == a && t.iter().any(|x| name(x) == b))
    };
    assert!(edge("runtime.rs", "router/mod.rs") && edge("router/mod.rs", "menus/mod.rs"));
    for set in circles(&edges) {
        let mut names: Vec<String> = set.iter().map(name).collect();
        names.sort();
        assert!(
            names.len() <= MAX_CIRCLE,
            "a circle of {} files imports each other: {names:?}",
            names.len()
        );
    }
    let room = |f: &str| ROOMS.iter().find(|r| f.starts_with(**r));
    for (m, targets) in &edges {
        for t in targets {
            let (a, b) = (name(m), name(t));
            if let (Some(ra), Some(rb)) = (room(&a), room(&b)) {
                assert_eq!(ra, rb, "room file {a} imports {b}, of another room");
            }
        }
    }
}

/// Whether `src` names the path or type `name` (not as part of a longer identifier).
fn names(src: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    src.match_indices(name)
        .any(|(i, _)| !src[..i].ends_with(ident) && !src[i + name.len()..].starts_with(ident))
}

/// Whether a file names `jobwire_store::Store`: imports it, or writes its path, `dyn Store`
/// or `impl Store`. (`BotError::Store`, a variant, is another thing.)
fn names_whole_store(file: &File) -> bool {
    file.uses.iter().any(|(_, p)| {
        p.first().is_some_and(|s| s == "jobwire_store") && p.last().is_some_and(|s| s == "Store")
    }) || ["jobwire_store::Store", "dyn Store", "impl Store"]
        .iter()
        .any(|n| names(&file.src, n))
}

#[test]
fn only_the_wiring_names_the_whole_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = Graph::of(&root).files;
    // The check sees what it must: the runtime is handed the whole store, an inline path
    // or a narrow trait are told apart.
    let runtime = files.values().find(|(name, _)| name == "runtime.rs");
    assert!(runtime.is_some_and(|(_, f)| names_whole_store(f)));
    assert!(names_whole_store(&parse(
        "fn f(s: Arc<dyn jobwire_store::Store>) {}"
    )));
    assert!(!names_whole_store(&parse(
        "use jobwire_store::{BillingStore, StoreError};\nfn f(s: Arc<dyn BillingStore>) {}"
    )));
    for (name, file) in files.values() {
        if WIRING.iter().any(|w| name.starts_with(w)) {
            continue;
        }
        assert!(
            !names_whole_store(file),
            "{name} names jobwire_store::Store, the whole store: give it the store traits it uses"
        );
    }
}
