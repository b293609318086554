//! Guards DESIGN §9 "counts are exact": for the same program and arguments,
//! memlens' allocations, frees, reallocations and peak equal what heaptrack
//! reports (through the mapping in `support/heaptrack.rs`). Each test skips
//! with a message when heaptrack is not installed.

use std::path::Path;

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, LibstdcxxStartup, Peak, alloc_bench_source, assert_counts_match,
    compile, heaptrack, record, summary, test_dir,
};

/// Environment variables added to a run.
type Envs<'a> = &'a [(&'a str, &'a str)];

/// One program to run under both tools.
struct Comparison<'a> {
    /// Names it in messages.
    what: String,
    /// The command line, the same for both tools.
    argv: &'a [&'a str],
    /// Variables added for memlens' run and for heaptrack's.
    envs: (Envs<'a>, Envs<'a>),
    startup: LibstdcxxStartup,
    peak: Peak,
    /// How many memlens runs may be tried for a peak that agrees.
    attempts: u32,
}

impl<'a> Comparison<'a> {
    /// A deterministic C program: exact peak, one attempt, no extra variables.
    fn new(what: impl Into<String>, argv: &'a [&'a str]) -> Self {
        Comparison {
            what: what.into(),
            argv,
            envs: (&[], &[]),
            startup: LibstdcxxStartup::Drop,
            peak: Peak::Exact,
            attempts: 1,
        }
    }

    /// Runs heaptrack once, then memlens until its peak agrees (every run's
    /// counts must equal heaptrack's).
    fn check(&self, dir: &Path) {
        let what = &self.what;
        let Some(theirs) = heaptrack(dir, self.argv, self.envs.1, self.startup) else {
            return;
        };
        assert_eq!(
            theirs.run.code, 0,
            "{what} failed under heaptrack:\n{}",
            theirs.run.stderr
        );
        let mut peaks = Vec::new();
        for _ in 0..self.attempts {
            let ours = record(
                dir,
                &["-q", "--force", "-o", "ours.mlens"],
                self.argv,
                self.envs.0,
            );
            assert_eq!(
                ours.run.code, 0,
                "{what} failed under memlens:\n{}",
                ours.run.stderr
            );
            let ours = summary(&dir.join("ours.mlens"));
            assert_counts_match(what, &ours, &theirs.counts);
            peaks.push(ours.get("peak_bytes"));
            if self
                .peak
                .agrees(ours.get("peak_bytes"), theirs.counts.peak_bytes)
            {
                return;
            }
        }
        panic!(
            "{what}: memlens' peak {peaks:?} does not agree with heaptrack's {} ({:?})",
            theirs.counts.peak_bytes, self.peak
        );
    }
}

fn alloc_bench(threads: &str, peak: Peak, attempts: u32) {
    let Some((path, source)) = alloc_bench_source() else {
        return;
    };
    let dir = test_dir("alloc-bench");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    let bench = compile(dir.path(), "alloc-bench", Lang::C, &source, &flags);
    let argv = [bench.to_str().expect("UTF-8 path"), threads, "200000"];
    let what = format!("{} with {threads} thread(s)", path.display());
    Comparison {
        peak,
        attempts,
        ..Comparison::new(what, &argv)
    }
    .check(dir.path());
}

#[test]
fn alloc_bench_one_thread_matches_heaptrack_exactly() {
    alloc_bench("1", Peak::Exact, 1);
}

/// With four threads on two cores the calls are the same but their
/// interleaving differs from run to run, so the largest sum of live bytes
/// differs too. Measured on this machine over eight runs each, memlens'
/// peaks spread over 3.86–4.50 MB and heaptrack's over 4.01–4.13 MB
/// (heaptrack's global lock interleaves the threads more finely). The
/// counts must be exact in every run; the peak must come within 10 % of
/// heaptrack's in at least one of up to ten memlens runs (10 %, not 5 %:
/// on a loaded CI machine the interleavings spread further), which a peak
/// computed wrongly (say, per thread, about 1.1 MB) never does.
#[test]
fn alloc_bench_four_threads_matches_heaptrack_counts() {
    alloc_bench("4", Peak::Within(0.10), 10);
}

const CXX_PROGRAM: &str = r#"
#include <cstdio>
#include <string>
#include <vector>
struct Widget { long values[8]; std::string name; };
__attribute__((noinline)) Widget *make_widget(int i) {
    Widget *w = new Widget;
    w->values[0] = i;
    w->name = std::string(40 + i % 7, 'w');
    return w;
}
int main() {
    std::vector<Widget *> widgets;
    for (int i = 0; i < 500; i++) widgets.push_back(make_widget(i));
    std::vector<long> numbers;
    for (long i = 0; i < 50000; i++) numbers.push_back(i);
    int *array = new int[1000];
    array[0] = 1;
    delete[] array;
    for (Widget *w : widgets) delete w;
    std::printf("%zu %zu\n", widgets.size(), numbers.size());
}
"#;

/// `new`/`delete`, `new[]`/`delete[]`, `std::string` and `std::vector`
/// growth, including libstdc++'s own start-up allocation (its emergency
/// exception pool, allocated while it initialises, possibly before the
/// recorder's constructor runs, and freed at exit by `__gnu_cxx::__freeres`,
/// which both heaptrack and memlens call).
#[test]
fn cxx_new_delete_and_vector_growth_match_heaptrack() {
    let dir = test_dir("cxx-counts");
    let program = compile(
        dir.path(),
        "widgets",
        Lang::Cxx,
        CXX_PROGRAM,
        FRAME_POINTER_FLAGS,
    );
    let argv = [program.to_str().expect("UTF-8 path")];
    Comparison {
        startup: LibstdcxxStartup::Keep,
        ..Comparison::new("C++ new/delete and vector growth", &argv)
    }
    .check(dir.path());
}

const FORK_EXEC_PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        for (int i = 0; i < 500; i++) free(malloc(100 + i));
        return 3;
    }
    void *keep[100];
    for (int i = 0; i < 100; i++) keep[i] = malloc(64 * (i + 1));
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 300; i++) free(malloc(200));
        char *child_argv[] = {argv[0], "exec-child", NULL};
        execv(argv[0], child_argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 100; i++) free(keep[i]);
    char *s = malloc(10);
    s = realloc(s, 5000);
    free(s);
    printf("child exited with %d\n", WEXITSTATUS(status));
    return 0;
}
"#;

/// heaptrack traces only the parent of a fork, so the parent's own trace
/// is compared.
#[test]
fn fork_and_exec_parent_matches_heaptrack() {
    let dir = test_dir("fork-exec-counts");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    let program = compile(dir.path(), "forker", Lang::C, FORK_EXEC_PROGRAM, &flags);
    let argv = [program.to_str().expect("UTF-8 path")];
    Comparison::new("fork + exec, parent process", &argv).check(dir.path());
}

/// A deterministic Python workload: list, dict and string growth and JSON.
/// It is one line because heaptrack cannot parse its own output when the
/// command line holds a newline.
/// Run with `-P`: without it `import json` first lists the working directory, where
/// each recorder writes its output at a moment that depends on timing, and a listing
/// one entry longer costs Python one more allocation (seen once in CI: +1 allocation).
const PYTHON_SCRIPT: &str = "import json; \
    rows = [{'k': i, 'v': str(i) * 3, 'xs': list(range(i % 17))} for i in range(3000)]; \
    text = json.dumps(rows); back = json.loads(text); print(len(text), len(back))";

const ENVIRONMENT_COUNT: &str = r#"
#include <stdio.h>
extern char **environ;
int main(void) {
    int n = 0;
    while (environ[n]) n++;
    printf("%d\n", n);
    return 0;
}
"#;

fn printed_number(stdout: &str) -> usize {
    stdout
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("the environment counter printed no number:\n{stdout}"))
}

/// Python sizes its `os.environ` and `posix.environ` dictionaries by the
/// number of environment variables (and Perl copies each into `%ENV`), so a
/// different count changes their allocations. memlens and heaptrack each add their own variables; this
/// returns padding variables that give both runs the same count.
pub(crate) fn equal_environment_padding(dir: &Path) -> Option<(Vec<String>, Vec<String>)> {
    let counter = compile(
        dir,
        "envcount",
        Lang::C,
        ENVIRONMENT_COUNT,
        FRAME_POINTER_FLAGS,
    );
    let argv = [counter.to_str().expect("UTF-8 path")];
    let ours = record(dir, &["-q", "-o", "envcount.mlens"], &argv, &[]);
    let theirs = heaptrack(dir, &argv, &[], LibstdcxxStartup::Drop)?;
    let (ours, theirs) = (
        printed_number(&ours.run.stdout),
        printed_number(&theirs.run.stdout),
    );
    let padding = |n: usize| (0..n).map(|i| format!("PADDING_{i}")).collect();
    Some((
        padding(theirs.saturating_sub(ours)),
        padding(ours.saturating_sub(theirs)),
    ))
}

/// `envs` plus each padding variable set to 1.
pub(crate) fn with_padding(envs: &[(&str, &str)], padding: &[String]) -> Vec<(String, String)> {
    let given = envs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    given
        .chain(padding.iter().map(|k| (k.clone(), "1".into())))
        .collect()
}

pub(crate) fn as_refs(envs: &[(String, String)]) -> Vec<(&str, &str)> {
    envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn python(allocator: Option<&str>, peak: Peak) {
    let interpreter = "/usr/bin/python3";
    if !Path::new(interpreter).is_file() {
        eprintln!("skipped: {interpreter} not installed");
        return;
    }
    let dir = test_dir("python");
    let Some((pad_ours, pad_theirs)) = equal_environment_padding(dir.path()) else {
        return;
    };
    let mut envs = vec![("PYTHONHASHSEED", "0")];
    if let Some(allocator) = allocator {
        envs.push(("PYTHONMALLOC", allocator));
    }
    let envs_ours = with_padding(&envs, &pad_ours);
    let envs_theirs = with_padding(&envs, &pad_theirs);
    let argv = [interpreter, "-P", "-c", PYTHON_SCRIPT];
    Comparison {
        envs: (&as_refs(&envs_ours), &as_refs(&envs_theirs)),
        peak,
        ..Comparison::new(format!("python3 -c (PYTHONMALLOC={allocator:?})"), &argv)
    }
    .check(dir.path());
}

/// Every Python object through `malloc` (this once crashed the target: a
/// garbage frame pointer of −16 passed an overflowing bounds check). With
/// every object in `malloc`, the *contents* of the environment matter too:
/// Python copies every variable into `os.environ`, and memlens' and
/// heaptrack's variables differ in length, which moves a few dictionary
/// and string allocations (5 of 228 000 here). The padding above equalises
/// the number of variables, not their lengths, so the counts must agree to
/// within 0.01 %.
#[test]
fn python_with_pythonmalloc_malloc_agrees_with_heaptrack() {
    let interpreter = "/usr/bin/python3";
    if !Path::new(interpreter).is_file() {
        eprintln!("skipped: {interpreter} not installed");
        return;
    }
    let dir = test_dir("python-malloc");
    let Some((pad_ours, pad_theirs)) = equal_environment_padding(dir.path()) else {
        return;
    };
    let envs = [("PYTHONHASHSEED", "0"), ("PYTHONMALLOC", "malloc")];
    let envs_ours = with_padding(&envs, &pad_ours);
    let envs_theirs = with_padding(&envs, &pad_theirs);
    let argv = [interpreter, "-P", "-c", PYTHON_SCRIPT];
    let Some(theirs) = heaptrack(
        dir.path(),
        &argv,
        &as_refs(&envs_theirs),
        LibstdcxxStartup::Drop,
    ) else {
        return;
    };
    let ours = record(
        dir.path(),
        &["-q", "--force", "-o", "ours.mlens"],
        &argv,
        &as_refs(&envs_ours),
    );
    assert_eq!(
        ours.run.code, 0,
        "python3 failed under memlens:\n{}",
        ours.run.stderr
    );
    let ours = summary(&dir.path().join("ours.mlens"));
    let plus = ours.get("allocations") + ours.get("reallocations");
    let minus = ours.get("frees") + ours.get("reallocations");
    let close = |a: u64, b: u64| a.abs_diff(b) * 10_000 <= b;
    assert!(
        close(plus, theirs.counts.allocations) && close(minus, theirs.counts.deallocations),
        "memlens +{plus} -{minus} vs heaptrack +{} -{}",
        theirs.counts.allocations,
        theirs.counts.deallocations
    );
}

/// Python's own small-object allocator, with only its arenas and large
/// objects through `malloc`.
#[test]
fn python_default_allocator_matches_heaptrack_counts() {
    python(None, Peak::Ignored);
}
