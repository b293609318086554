//! Debian's own programs under the recorder with default options (DESIGN §4.3,
//! "Stacks" and "Frames"). `perl` and `sqlite3` are built without frame pointers,
//! so only the default DWARF unwinding gives them stacks deeper than one frame. For
//! the same run, their top sites by calls must show at least three frames whose
//! function names are heaptrack's (a frame neither tool can name matches by the
//! page offset of its address), sqlite3's sites must show frames of `libsqlite3`, and the
//! counts must equal heaptrack's. Each test skips with a message when the program
//! or heaptrack is missing (`.ci/run` installs both).

use std::path::Path;

use crate::heaptrack_counts::{as_refs, equal_environment_padding, with_padding};
use crate::support::heaptrack::HeaptrackStack;
use crate::support::{
    LibstdcxxStartup, Peak, assert_counts_match, heaptrack, record, summary, test_dir,
};

/// Frames of a memlens stack compared with heaptrack's.
const FRAMES: usize = 3;

/// Sites by calls compared with heaptrack's.
const TOP: usize = 3;

/// The function name of a frame as `summary --json` prints it
/// (`Perl_hv_common (in perl)`, `main (x.c:3)`), or for an unnamed address
/// (`0x55… (in perl+0x110fc2)`) what [`HeaptrackStack::functions`] holds for it:
/// `?` and the last three hex digits of the return address − 1.
fn function_of(frame: &str) -> String {
    let name = frame.split(" (").next().unwrap_or(frame);
    match name.strip_prefix("0x") {
        Some(hex) => {
            let ip = u64::from_str_radix(hex, 16).expect("a hex address");
            format!("?{:03x}", (ip - 1) & 0xfff)
        }
        None => name.to_string(),
    }
}

/// True when `ours` (innermost first) is a run of consecutive frames of `theirs`.
fn contains(theirs: &[String], ours: &[String]) -> bool {
    theirs.windows(ours.len()).any(|w| w == ours)
}

/// Variables added to memlens' run and to heaptrack's.
type Envs<'a> = &'a [(&'a str, &'a str)];

/// Records `argv` under heaptrack and under memlens with default options (with
/// `envs.0` added for memlens, `envs.1` for heaptrack) in `dir`; compares the counts and the top sites' stacks, and
/// returns memlens' top sites' frames for further checks.
fn compare(dir: &Path, what: &str, argv: &[&str], envs: (Envs, Envs)) -> Vec<Vec<String>> {
    let Some(theirs) = heaptrack(dir, argv, envs.1, LibstdcxxStartup::Drop) else {
        return Vec::new();
    };
    assert_eq!(
        theirs.run.code, 0,
        "{what} under heaptrack:\n{}",
        theirs.run.stderr
    );
    let ours = record(dir, &["-q", "--force", "-o", "ours.mlens"], argv, envs.0);
    assert_eq!(
        ours.run.code, 0,
        "{what} under memlens:\n{}",
        ours.run.stderr
    );
    let ours = summary(&dir.join("ours.mlens"));
    assert_counts_match(what, &ours, &theirs.counts);
    assert!(
        Peak::Within(0.01).agrees(ours.get("peak_bytes"), theirs.counts.peak_bytes),
        "{what}: memlens' peak {} against heaptrack's {}",
        ours.get("peak_bytes"),
        theirs.counts.peak_bytes
    );
    let sites = ours.json["top_sites_by_count"]
        .as_array()
        .expect("top_sites_by_count");
    let mut shown = Vec::new();
    for site in sites.iter().take(TOP) {
        let frames: Vec<String> = site["stack"]
            .as_array()
            .expect("a site's stack")
            .iter()
            .map(|f| f.as_str().expect("a frame").to_string())
            .collect();
        let calls = site["allocations"].as_u64().expect("a site's calls");
        assert!(
            frames.len() >= FRAMES,
            "{what}: the site with {calls} calls has a stack of {} frame(s): {frames:?}",
            frames.len()
        );
        // A site's stack is its first frames; heaptrack's stacks are whole, so the
        // calls of every heaptrack stack that holds those frames add up to the site's.
        let functions: Vec<String> = frames.iter().map(|f| function_of(f)).collect();
        let same: Vec<&HeaptrackStack> = theirs
            .stacks
            .iter()
            .filter(|s| contains(&s.functions, &functions))
            .collect();
        assert_eq!(
            same.iter().map(|s| s.calls).sum::<u64>(),
            calls,
            "{what}: heaptrack's stacks that hold memlens' frames {frames:?} make other \
             than its {calls} calls: {same:#?}"
        );
        shown.push(frames);
    }
    shown
}

#[test]
fn perl_stacks_and_counts_match_heaptrack() {
    if !Path::new("/usr/bin/perl").is_file() {
        eprintln!("skipped: /usr/bin/perl is not installed");
        return;
    }
    let dir = test_dir("perl");
    let Some((pad_ours, pad_theirs)) = equal_environment_padding(dir.path()) else {
        return;
    };
    let script = r#"my %h; for my $i (1..50000) { $h{"k$i"} = "v" x ($i % 50) } my $n = 0; $n += length($h{$_}) for keys %h; print "$n\n""#;
    // Perl randomises its hash function per run; the same seed makes both runs equal.
    let envs = [("PERL_HASH_SEED", "0"), ("PERL_PERTURB_KEYS", "0")];
    let (ours, theirs) = (
        with_padding(&envs, &pad_ours),
        with_padding(&envs, &pad_theirs),
    );
    let sites = compare(
        dir.path(),
        "perl",
        &["/usr/bin/perl", "-e", script],
        (&as_refs(&ours), &as_refs(&theirs)),
    );
    for frames in &sites {
        assert!(
            frames.iter().any(|f| f.starts_with("Perl_")),
            "perl: a top site names none of perl's functions: {frames:?}"
        );
    }
}

#[test]
fn sqlite3_stacks_show_the_library_and_match_heaptrack() {
    if !Path::new("/usr/bin/sqlite3").is_file() {
        eprintln!("skipped: /usr/bin/sqlite3 is not installed");
        return;
    }
    let dir = test_dir("sqlite3");
    // Deterministic contents, so both runs split the same b-tree pages.
    let sql = "create table t(a integer primary key, b text); \
        with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000) \
        insert into t select x, printf('row %d %08x', x, (x * 2654435761) % 4294967296) from c; \
        create index ib on t(b); \
        select count(*), sum(length(b)) from t where b like 'row 1%';";
    let sites = compare(
        dir.path(),
        "sqlite3",
        &["/usr/bin/sqlite3", ":memory:", sql],
        (&[], &[]),
    );
    if sites.is_empty() {
        return;
    }
    assert!(
        sites
            .iter()
            .flatten()
            .any(|f| f.contains("(in libsqlite3") && !f.starts_with("0x")),
        "sqlite3: no top site shows a named frame of libsqlite3: {sites:#?}"
    );
}
