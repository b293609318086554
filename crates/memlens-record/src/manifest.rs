//! The manifest: the file where the recorders list the traces they write, one
//! path per line. The preload library and the Java agent append to the file named
//! by `MEMLENS_MANIFEST` in every process of the run, so after the run it says
//! which traces this recording made, and memlens reports the one that did the most
//! first. A process the preload library does not record (a forked child without
//! `--follow-fork`, a program such a child runs) appends `unfollowed <pid>`
//! instead: not a trace, but counted once per pid, so memlens can say how many
//! processes were left out.

use std::path::{Path, PathBuf};

/// A fresh manifest for one run: created empty in the temporary folder under a
/// random name, readable by this user only, and removed when dropped.
#[derive(Debug)]
pub struct Manifest {
    path: PathBuf,
}

impl Manifest {
    /// Creates the file the recorders will append to.
    pub fn create() -> Manifest {
        let made = tempfile::Builder::new()
            .prefix("memlens-manifest-")
            .tempfile()
            .and_then(|file| file.into_temp_path().keep().map_err(|e| e.error));
        // When the temporary folder takes no new file, the recorders cannot append
        // there either: the run then finds no traces listed and says so, as with
        // any manifest the recorders could not write.
        let path = made.unwrap_or_else(|_| {
            std::env::temp_dir().join(format!("memlens-manifest-{}", std::process::id()))
        });
        Manifest { path }
    }

    /// Where it is, for `MEMLENS_MANIFEST`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The traces it lists, as [`traces_in_manifest`].
    pub fn traces(&self) -> Vec<PathBuf> {
        traces_in_manifest(&self.path)
    }

    /// How many processes of the run were not recorded (distinct pids of its
    /// `unfollowed <pid>` lines); 0 when it cannot be read.
    pub fn unfollowed(&self) -> usize {
        unfollowed_pids(&std::fs::read_to_string(&self.path).unwrap_or_default())
    }
}

/// The line prefix of a process that was not recorded.
const UNFOLLOWED: &str = "unfollowed ";

/// The number of distinct pids in a manifest's `unfollowed <pid>` lines (a
/// forked child that `exec`s says so once per image, with the same pid).
fn unfollowed_pids(text: &str) -> usize {
    let mut pids: Vec<&str> = (text.lines())
        .filter_map(|line| line.strip_prefix(UNFOLLOWED))
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids.len()
}

impl Drop for Manifest {
    fn drop(&mut self) {
        std::fs::remove_file(&self.path).ok();
    }
}

/// The traces listed in the manifest at `manifest` that exist, largest (most
/// records) first: with wrapper scripts and shells, the program the user cares
/// about is the one that did the most. Traces of equal size keep the manifest's
/// order; an unreadable manifest lists nothing.
pub fn traces_in_manifest(manifest: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(manifest).unwrap_or_default();
    largest_first(listed_traces(&text), records_in)
}

/// The existing files listed in a manifest's `text`, each once, in order
/// (`unfollowed` lines are not traces).
fn listed_traces(text: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with(UNFOLLOWED)) {
        let path = PathBuf::from(line);
        if path.is_file() && !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// `paths` by `records` (most first), ties in their order.
fn largest_first(paths: Vec<PathBuf>, records: impl Fn(&Path) -> u64) -> Vec<PathBuf> {
    let mut sized: Vec<(u64, PathBuf)> = paths.into_iter().map(|p| (records(&p), p)).collect();
    sized.sort_by_key(|(records, _)| std::cmp::Reverse(*records));
    sized.into_iter().map(|(_, path)| path).collect()
}

/// How many records the trace at `path` holds, by its chunk headers; 0 when it
/// cannot be opened.
fn records_in(path: &Path) -> u64 {
    memlens_trace::TraceFile::open(path)
        .map(|trace| {
            (trace.chunks().iter())
                .map(|chunk| u64::from(chunk.header.records))
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_existing_traces_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.mlens"), dir.path().join("b.mlens"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        let gone = dir.path().join("gone.mlens");
        let text = format!(
            "{}\n{}\n{}\n{}\n",
            b.display(),
            gone.display(),
            a.display(),
            b.display()
        );
        assert_eq!(listed_traces(&text), [b, a]);
    }

    #[test]
    fn unfollowed_processes_are_counted_once_per_pid_and_never_listed_as_traces() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("f.mlens");
        std::fs::write(&root, b"").unwrap();
        let text = format!(
            "unfollowed 12\n{}\nunfollowed 13\nunfollowed 12\nunfollowed 7\n",
            root.display()
        );
        assert_eq!(unfollowed_pids(&text), 3);
        assert_eq!(listed_traces(&text), [root]);
        assert_eq!(unfollowed_pids(""), 0);
        let manifest = Manifest::create();
        std::fs::write(manifest.path(), "unfollowed 40\nunfollowed 41\n").unwrap();
        assert_eq!(manifest.unfollowed(), 2);
        assert!(manifest.traces().is_empty());
    }

    #[test]
    fn the_trace_with_most_records_comes_first_and_ties_keep_their_order() {
        let paths: Vec<PathBuf> = ["shell", "child", "program", "other"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let records = |p: &Path| match p.to_str() {
            Some("program") => 900,
            Some("child") => 40,
            _ => 3,
        };
        let ordered = largest_first(paths, records);
        assert_eq!(
            ordered,
            ["program", "child", "shell", "other"].map(PathBuf::from)
        );
    }

    #[test]
    fn a_manifest_is_removed_when_dropped_and_unreadable_ones_list_nothing() {
        let manifest = Manifest::create();
        let path = manifest.path().to_path_buf();
        assert!(path.is_file());
        // Not a trace: listed (it exists) but with no records.
        std::fs::write(&path, format!("{}\n", path.display())).unwrap();
        assert_eq!(manifest.traces(), std::slice::from_ref(&path));
        drop(manifest);
        assert!(!path.exists());
        assert!(traces_in_manifest(&path).is_empty());
    }
}
