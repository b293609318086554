//! Guards DESIGN §7 and §9 "bad input gets a clear error and loses
//! nothing": `summary` and `dump` on empty, foreign, truncated, corrupted
//! and too-new files exit with status 1 and one stderr line per problem
//! that names the file and the byte offset, never panic, and still report
//! everything before the damage; usage errors exit with status 2 and one
//! sentence.

use std::path::{Path, PathBuf};

use crate::support::{
    FRAME_POINTER_FLAGS, Finished, Lang, compile, dump, memlens, record, run, summary, summary_run,
    test_dir,
};

const CHURN: &str = r#"
#include <stdlib.h>
int main(void) {
    static void *ring[512];
    for (long i = 0; i < 500000; i++) {
        free(ring[i % 512]);
        ring[i % 512] = malloc(16 + (size_t)(i % 700));
    }
    return 0;
}
"#;

/// Records a program that makes 500 000 allocations (several event chunks)
/// into `dir/good.mlens` and returns its bytes.
fn good_trace(dir: &Path) -> Vec<u8> {
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    let program = compile(dir, "churn", Lang::C, CHURN, &flags);
    let recorded = record(
        dir,
        &["-q", "--force", "-o", "good.mlens"],
        &[program.to_str().expect("UTF-8")],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    std::fs::read(dir.join("good.mlens")).expect("the trace was written")
}

/// A chunk of a trace file: its offset, kind byte and stored payload length
/// (see the 48-byte chunk header in `memlens-trace/src/chunk.rs`).
fn chunks(bytes: &[u8]) -> Vec<(usize, u8, usize)> {
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let mut found = Vec::new();
    let mut at = header_len;
    while at + 48 <= bytes.len() && &bytes[at..at + 4] == b"MLCK" {
        let stored =
            u32::from_le_bytes(bytes[at + 12..at + 16].try_into().expect("4 bytes")) as usize;
        found.push((at, bytes[at + 4], stored));
        at += 48 + stored;
    }
    found
}

/// The middle of the payload of the event chunk that holds the middle of
/// the file, or of the last event chunk when a process chunk holds it.
fn middle_of_an_event_chunk(bytes: &[u8]) -> usize {
    let events: Vec<(usize, u8, usize)> = chunks(bytes)
        .into_iter()
        .filter(|&(_, kind, _)| kind == 2)
        .collect();
    assert!(
        events.len() >= 2,
        "the trace has several event chunks: {events:?}"
    );
    let middle = bytes.len() / 2;
    let (offset, _, stored) = events
        .iter()
        .copied()
        .find(|&(at, _, stored)| (at..at + 48 + stored).contains(&middle))
        .unwrap_or(events[events.len() - 1]);
    offset + 48 + stored / 2
}

/// CRC-32 (IEEE, reflected), as the trace header uses.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("cannot write the test file");
    path
}

/// Asserts `done` failed with status 1 and one stderr line naming `file`
/// (and, when `offset` is true, a byte offset).
fn assert_one_line_error(what: &str, done: &Finished, file: &Path, offset: bool) {
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(
        done.code, 1,
        "{what}: exit status; stderr:\n{}",
        done.stderr
    );
    assert_eq!(
        lines.len(),
        1,
        "{what}: one line on stderr:\n{}",
        done.stderr
    );
    assert!(
        lines[0].contains(&file.display().to_string()),
        "{what}: names the file: {}",
        lines[0]
    );
    if offset {
        assert!(
            lines[0].contains("byte offset"),
            "{what}: names the byte offset: {}",
            lines[0]
        );
    }
}

/// `summary` and `dump` of a file that is not a readable trace at all.
fn unreadable(file: &Path, offset: bool) {
    let (done, json) = summary_run(file, &[]);
    assert_one_line_error("summary", &done, file, offset);
    assert!(
        json.is_none(),
        "summary printed a result for {}",
        file.display()
    );
    assert_one_line_error("dump", &dump(file), file, offset);
}

#[test]
fn empty_file_is_one_line_error() {
    let dir = test_dir("bad-empty");
    unreadable(&write(dir.path(), "empty.mlens", b""), false);
}

#[test]
fn foreign_file_is_one_line_error_at_byte_offset_zero() {
    let dir = test_dir("bad-foreign");
    let file = write(
        dir.path(),
        "notes.mlens",
        b"these are my notes, not a trace\n",
    );
    unreadable(&file, true);
    assert!(dump(&file).stderr.contains("byte offset 0"));
}

/// A file whose header claims format version 2, with a correct header CRC.
fn newer_version(dir: &Path) -> PathBuf {
    let mut bytes = good_trace(dir);
    let stored = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
    assert_eq!(
        crc32(&bytes[0..20]),
        stored,
        "the header CRC covers bytes 0..20"
    );
    bytes[8..10].copy_from_slice(&2u16.to_le_bytes());
    bytes[10..12].copy_from_slice(&2u16.to_le_bytes());
    let crc = crc32(&bytes[0..20]);
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    write(dir, "newer.mlens", &bytes)
}

#[test]
fn newer_version_is_one_line_error_asking_for_an_upgrade() {
    let dir = test_dir("bad-version");
    let file = newer_version(dir.path());
    unreadable(&file, false);
    assert!(
        dump(&file).stderr.contains("newer"),
        "the error says the file is newer"
    );
}

#[test]
fn empty_and_newer_files_name_a_byte_offset() {
    let dir = test_dir("bad-offsets");
    unreadable(&write(dir.path(), "empty.mlens", b""), true);
    unreadable(&newer_version(dir.path()), true);
}

/// `summary` of a damaged trace: status 1, one line naming the offset, and
/// the summary of the chunks that read back.
fn damaged_summary(file: &Path, full: u64) {
    let (done, json) = summary_run(file, &[]);
    assert_one_line_error("summary", &done, file, true);
    let s = json.expect("summary prints what precedes the damage");
    let allocations = s.get("allocations");
    assert!(
        allocations > 0 && allocations < full,
        "{allocations} of {full} allocations"
    );
    assert!(
        !s.complete() && !s.strings("damage").is_empty(),
        "{}",
        s.json
    );
}

/// `dump` of a damaged trace: status 1, the records that read back, and a
/// damage line where the damage is.
fn damaged_dump(file: &Path) -> Finished {
    let done = dump(file);
    assert_eq!(done.code, 1, "dump of a damaged trace");
    assert!(
        done.stdout.contains(" alloc "),
        "dump prints the records before the damage"
    );
    assert!(done.stdout.contains("# damage"), "dump marks the damage");
    done
}

fn truncated(dir: &Path) -> (PathBuf, u64) {
    let bytes = good_trace(dir);
    let full = summary(&dir.join("good.mlens")).get("allocations");
    let cut = middle_of_an_event_chunk(&bytes);
    (write(dir, "truncated.mlens", &bytes[..cut]), full)
}

fn flipped(dir: &Path) -> (PathBuf, u64) {
    let mut bytes = good_trace(dir);
    let full = summary(&dir.join("good.mlens")).get("allocations");
    let at = middle_of_an_event_chunk(&bytes);
    bytes[at] ^= 0xff;
    (write(dir, "flipped.mlens", &bytes), full)
}

#[test]
fn truncated_trace_keeps_what_precedes_the_cut() {
    let dir = test_dir("bad-truncated");
    let (file, full) = truncated(dir.path());
    damaged_summary(&file, full);
    damaged_dump(&file);
}

#[test]
fn flipped_byte_loses_only_its_chunk() {
    let dir = test_dir("bad-flipped");
    let (file, full) = flipped(dir.path());
    damaged_summary(&file, full);
    damaged_dump(&file);
}

#[test]
fn dump_of_a_damaged_trace_names_the_damage_on_stderr() {
    let dir = test_dir("bad-dump");
    for (file, _) in [truncated(dir.path()), flipped(dir.path())] {
        let done = damaged_dump(&file);
        assert_one_line_error("dump", &done, &file, true);
    }
}

/// Asserts a usage error: status 2 and one sentence on stderr.
fn assert_usage_error(what: &str, done: &Finished) {
    assert_eq!(
        done.code, 2,
        "{what}: exit status; stderr:\n{}",
        done.stderr
    );
    assert_eq!(
        done.stderr.trim().lines().count(),
        1,
        "{what}: one sentence:\n{}",
        done.stderr
    );
    assert!(
        !done.stderr.contains("panicked"),
        "{what}:\n{}",
        done.stderr
    );
}

#[test]
fn recording_a_missing_program_is_a_usage_error() {
    let dir = test_dir("usage-missing");
    let recorded = record(dir.path(), &[], &["/nonexistent/memlens-test-program"], &[]);
    assert_usage_error("record of a missing program", &recorded.run);
    assert!(
        recorded
            .run
            .stderr
            .contains("/nonexistent/memlens-test-program")
    );
}

#[test]
fn recording_over_an_existing_file_needs_force() {
    let dir = test_dir("usage-force");
    std::fs::write(dir.path().join("existing.mlens"), "keep me").expect("written");
    let recorded = record(dir.path(), &["-o", "existing.mlens"], &["/bin/true"], &[]);
    assert_usage_error("record -o existing", &recorded.run);
    assert!(
        recorded.run.stderr.contains("--force"),
        "{}",
        recorded.run.stderr
    );
    let kept = std::fs::read_to_string(dir.path().join("existing.mlens")).expect("still there");
    assert_eq!(kept, "keep me", "the existing file is untouched");
}

#[test]
fn a_wrapper_that_is_not_a_glob_is_a_usage_error() {
    let dir = test_dir("usage-wrapper");
    let recorded = record(
        dir.path(),
        &[
            "--wrapper",
            "my_alloc*",
            "--wrapper",
            "[oops",
            "-o",
            "w.mlens",
        ],
        &["/bin/true"],
        &[],
    );
    assert_usage_error("record --wrapper [oops", &recorded.run);
    assert!(
        recorded
            .run
            .stderr
            .contains("--wrapper `[oops` is not a valid wrapper pattern"),
        "{}",
        recorded.run.stderr
    );
    assert!(!dir.path().join("w.mlens").exists(), "nothing was recorded");
}

#[test]
fn summary_without_a_file_is_a_usage_error() {
    let done = run(memlens().arg("summary"), "memlens summary");
    assert_eq!(done.code, 2, "{}", done.stderr);
}

#[test]
fn summary_without_a_file_is_one_sentence() {
    let done = run(memlens().arg("summary"), "memlens summary");
    assert_usage_error("summary without a file", &done);
}

#[test]
fn unknown_recorder_options_are_refused_not_taken_for_the_program() {
    for command in [&["record"][..], &["cache", "record"][..]] {
        let done = run(
            memlens()
                .args(command)
                .args(["--sampling", "512K", "--", "true"]),
            "memlens record --sampling",
        );
        assert_usage_error("an unknown recorder option", &done);
        assert!(
            done.stderr.contains("unexpected argument '--sampling'"),
            "{command:?}: {}",
            done.stderr
        );
    }
    // Both recorders take `-f` for `--force`.
    for command in [&["record"][..], &["cache", "record"][..]] {
        let help = run(
            memlens().args(command).arg("--help"),
            "memlens record --help",
        );
        assert!(
            help.stdout.contains("-f, --force"),
            "{command:?}: {}",
            help.stdout
        );
    }
}

#[test]
fn simulating_a_file_without_references_is_one_sentence_and_fails() {
    // Text that is no trace at all: one sentence, not a screen of malformed lines.
    let passwd = run(
        memlens().args(["cache", "simulate", "/etc/passwd"]),
        "memlens cache simulate /etc/passwd",
    );
    assert_eq!(passwd.code, 1, "{}", passwd.stderr);
    assert_eq!(passwd.stderr.trim().lines().count(), 1, "{}", passwd.stderr);
    assert!(
        passwd.stderr.contains("/etc/passwd") && passwd.stderr.contains("no line of its"),
        "{}",
        passwd.stderr
    );
    assert!(passwd.stdout.is_empty(), "no table: {}", passwd.stdout);
    // An allocation trace: it says which commands read it.
    let dir = test_dir("simulate-allocations");
    good_trace(dir.path());
    let trace = dir.path().join("good.mlens");
    let allocations = run(
        memlens().args(["cache", "simulate"]).arg(&trace),
        "memlens cache simulate on an allocation trace",
    );
    assert_eq!(allocations.code, 1, "{}", allocations.stderr);
    assert_eq!(
        allocations.stderr.trim().lines().count(),
        1,
        "{}",
        allocations.stderr
    );
    assert!(
        allocations
            .stderr
            .contains("holds allocations but no memory references"),
        "{}",
        allocations.stderr
    );
}
