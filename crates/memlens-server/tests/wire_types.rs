//! The web app's wire types are generated from the Rust wire structs
//! ([`memlens_server::typescript`]) and committed under `web/src/generated/`. This test
//! generates them afresh and fails when the committed files differ; with
//! `MEMLENS_BLESS=1` it writes them instead.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use memlens_server::typescript::{REGENERATE, write_typescript};

/// The `.ts` files of `dir` by name (the hand-written README is not generated).
fn typescript_files(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.expect("a readable directory").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ts"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).expect("a readable file"))
        })
        .collect()
}

/// What differs between a committed file and the generated one, with the first line.
fn difference(committed: &str, generated: &str) -> String {
    let line = committed
        .lines()
        .zip(generated.lines())
        .position(|(c, g)| c != g)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    format!("differs from line {}", line + 1)
}

#[test]
fn committed_typescript_matches_the_wire_structs() {
    let committed_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/generated");
    let fresh_dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wire_types-{}", std::process::id()));
    let _ = fs::remove_dir_all(&fresh_dir);
    fs::create_dir_all(&fresh_dir).unwrap();
    write_typescript(&fresh_dir).expect("the wire types export");
    let generated = typescript_files(&fresh_dir);
    fs::remove_dir_all(&fresh_dir).unwrap();
    let committed = typescript_files(&committed_dir);

    if std::env::var_os("MEMLENS_BLESS").is_some() {
        fs::create_dir_all(&committed_dir).unwrap();
        for name in committed.keys().filter(|n| !generated.contains_key(*n)) {
            fs::remove_file(committed_dir.join(name)).unwrap();
        }
        for (name, text) in &generated {
            fs::write(committed_dir.join(name), text).unwrap();
        }
        return;
    }

    let mut problems = Vec::new();
    for (name, text) in &generated {
        match committed.get(name) {
            None => problems.push(format!("{name} is missing")),
            Some(old) if old != text => problems.push(format!("{name} {}", difference(old, text))),
            Some(_) => {}
        }
    }
    for name in committed.keys().filter(|n| !generated.contains_key(*n)) {
        problems.push(format!("{name} is no longer generated"));
    }
    assert!(
        problems.is_empty(),
        "web/src/generated/ does not match the wire structs ({}); regenerate it with `{REGENERATE}`",
        problems.join("; ")
    );
}
