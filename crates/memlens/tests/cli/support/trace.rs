//! Driving the `memlens` CLI: `record` a program, read the trace back with
//! `summary --json` and `dump`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::run::{Finished, run};
use super::{clean_command, memlens_exe, preload_library, traces_in};

/// A finished `memlens record`.
#[derive(Debug)]
pub struct Recorded {
    /// The `memlens record` process (its status is the program's).
    pub run: Finished,
    /// The traces it wrote: the paths named on stderr, or with `-q` every
    /// `*.mlens` file in the working directory.
    pub traces: Vec<PathBuf>,
}

/// A `memlens` command with a clean environment (see [`clean_command`]).
pub fn memlens() -> Command {
    clean_command(memlens_exe())
}

/// The paths of `memlens: wrote PATH — …` lines on stderr.
pub fn written_paths(stderr: &str) -> Vec<PathBuf> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("memlens: wrote "))
        .map(|rest| PathBuf::from(rest.split(" — ").next().unwrap_or(rest)))
        .collect()
}

/// The command `memlens record OPTIONS -- ARGV`, run in `dir` with `envs` added.
pub fn record_command(
    dir: &Path,
    options: &[&str],
    argv: &[&str],
    envs: &[(&str, &str)],
) -> Command {
    preload_library();
    let mut cmd = memlens();
    cmd.current_dir(dir)
        .arg("record")
        .args(options)
        .arg("--")
        .args(argv)
        .envs(envs.iter().copied());
    cmd
}

/// Runs `memlens record OPTIONS -- ARGV` in `dir` with `envs` added.
pub fn record(dir: &Path, options: &[&str], argv: &[&str], envs: &[(&str, &str)]) -> Recorded {
    let mut cmd = record_command(dir, options, argv, envs);
    let run = run(&mut cmd, &format!("memlens record -- {}", argv.join(" ")));
    let mut traces = written_paths(&run.stderr);
    if traces.is_empty() {
        traces = traces_in(dir);
    }
    Recorded { run, traces }
}

/// One row of a top-sites list.
#[derive(Debug, Clone)]
pub struct Site {
    /// Its frames, innermost first.
    pub stack: Vec<String>,
    /// Allocation calls there.
    pub allocations: u64,
}

/// The output of `memlens summary FILE --json`.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The whole JSON document.
    pub json: Value,
}

impl Summary {
    /// The unsigned number under `key`; panics when it is missing.
    pub fn get(&self, key: &str) -> u64 {
        self.json[key]
            .as_u64()
            .unwrap_or_else(|| panic!("summary JSON has no number {key:?}: {}", self.json))
    }

    /// True when the trace ended cleanly and has no damage.
    pub fn complete(&self) -> bool {
        self.json["complete"].as_bool() == Some(true)
    }

    /// The strings of the list under `key` (`warnings`, `damage`).
    pub fn strings(&self, key: &str) -> Vec<String> {
        self.json[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The rows of the site list under `key` (`top_sites`, `top_sites_by_count`, …).
    pub fn sites(&self, key: &str) -> Vec<Site> {
        let rows = self.json[key]
            .as_array()
            .unwrap_or_else(|| panic!("summary JSON has no list {key:?}"));
        rows.iter()
            .map(|r| Site {
                stack: r["stack"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|f| f.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                allocations: r["allocations"].as_u64().unwrap_or(0),
            })
            .collect()
    }
}

/// Runs `memlens summary TRACE --json ARGS` whatever its status; the JSON is
/// parsed when standard output holds any.
pub fn summary_run(trace: &Path, args: &[&str]) -> (Finished, Option<Summary>) {
    let done = run(
        memlens().arg("summary").arg(trace).arg("--json").args(args),
        &format!("memlens summary {}", trace.display()),
    );
    assert!(
        !done.stderr.contains("panicked"),
        "memlens summary panicked on {}:\n{}",
        trace.display(),
        done.stderr
    );
    let json = (!done.stdout.trim().is_empty()).then(|| Summary {
        json: serde_json::from_str(&done.stdout).unwrap_or_else(|e| {
            panic!(
                "summary --json printed invalid JSON ({e}):\n{}",
                done.stdout
            )
        }),
    });
    (done, json)
}

/// The summary of a trace that must read back without any problem, and whose
/// stacks show no frame of the recorder (DESIGN §4.3: recorder frames are never
/// shown).
pub fn summary(trace: &Path) -> Summary {
    let (done, json) = summary_run(trace, &["--top", "20"]);
    assert_eq!(
        done.code,
        0,
        "memlens summary {} failed:\n{}",
        trace.display(),
        done.stderr
    );
    let json = json.expect("summary --json printed nothing");
    if let Some(frame) = recorder_frame(&json.json) {
        panic!(
            "a stack of {} shows the recorder's frame {frame:?}",
            trace.display()
        );
    }
    json
}

/// The first frame of the summary's site lists that lies in the recorder: in its
/// library, or in one of its source files.
fn recorder_frame(json: &Value) -> Option<String> {
    let sources = concat!(env!("CARGO_MANIFEST_DIR"), "/../memlens-preload/src");
    let files: Vec<String> = std::fs::read_dir(sources)
        .expect("the recorder's sources")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Names any Rust program may have.
        .filter(|name| !["lib.rs", "main.rs", "mod.rs"].contains(&name.as_str()))
        .map(|name| format!("({name}:"))
        .collect();
    [
        "top_sites",
        "top_sites_by_count",
        "top_peak_sites",
        "top_leak_sites",
    ]
    .iter()
    .filter_map(|list| json[list].as_array())
    .flatten()
    .filter_map(|site| site["stack"].as_array())
    .flatten()
    .filter_map(Value::as_str)
    .find(|f| f.contains("libmemlens_preload") || files.iter().any(|s| f.contains(s)))
    .map(str::to_string)
}

/// Runs `memlens dump TRACE` whatever its status.
pub fn dump(trace: &Path) -> Finished {
    let done = run(
        memlens().arg("dump").arg(trace),
        &format!("memlens dump {}", trace.display()),
    );
    assert!(
        !done.stderr.contains("panicked"),
        "memlens dump panicked on {}:\n{}",
        trace.display(),
        done.stderr
    );
    done
}

/// The `process` record of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRecord {
    /// The recorded process.
    pub pid: u32,
    /// Its parent.
    pub ppid: u32,
    /// Its executable.
    pub exe: String,
}

/// Reads the `process` record of `trace` from its dump.
pub fn process_record(trace: &Path) -> ProcessRecord {
    let done = dump(trace);
    let line = done
        .stdout
        .lines()
        .find(|l| l.starts_with("process "))
        .unwrap_or_else(|| panic!("{} has no process record", trace.display()));
    let field = |name: &str| {
        let start = line.find(&format!(" {name}=")).expect("field present") + name.len() + 2;
        let rest = &line[start..];
        rest[..rest.find(' ').unwrap_or(rest.len())].to_string()
    };
    ProcessRecord {
        pid: field("pid").parse().expect("numeric pid"),
        ppid: field("ppid").parse().expect("numeric ppid"),
        exe: field("exe").trim_matches('"').to_string(),
    }
}
