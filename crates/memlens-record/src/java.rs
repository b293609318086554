//! Recording a Java program with the JVMTI agent (`libmemlens_jvmti.so`, from
//! `memlens-jvmti`) instead of LD_PRELOAD.
//!
//! When the command is the `java` launcher itself, `-agentpath:LIB=OPTIONS` is
//! inserted as its first argument, so the program's output is untouched. Any other
//! command (a wrapper script, a build tool) gets the agent through
//! `JAVA_TOOL_OPTIONS`, so every JVM it starts is recorded into its own
//! `memlens.java.<pid>.mlens` (the JVM then prints its usual "Picked up
//! JAVA_TOOL_OPTIONS" line on stderr); with an output, the largest of them is
//! renamed to it afterwards. The agent appends each trace's path to the manifest,
//! as the native recorder does.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::JavaHeapWalks;
use crate::helper_library::HelperLibrary;
use crate::launch::{Launch, prepend};
use crate::manifest::Manifest;
use crate::output::{absolute, refuse_existing_output};
use crate::program::find_program;
use crate::{RecordError, RecordOutcome};

/// The most Java frames the agent keeps per stack.
pub(crate) const MAX_DEPTH: u32 = 1024;

/// What to record with the Java agent, and how.
#[derive(Debug, Clone)]
pub struct JavaOptions {
    /// The program and its arguments: `java …`, or a script that starts JVMs.
    pub command: Vec<OsString>,
    /// The trace to write; `None` for `memlens.java.<pid>.mlens` in the current
    /// directory.
    pub output: Option<PathBuf>,
    /// Overwrite the output if it exists.
    pub force: bool,
    /// Record about one allocation per this many bytes allocated (JVMTI heap
    /// sampling, at most `i32::MAX`); `None` records every allocation.
    pub sample_bytes: Option<u64>,
    /// Java frames kept per stack (at most 1024).
    pub depth: u32,
    /// When the agent walks the heap, and the user's data-structure classes.
    pub heap_walks: JavaHeapWalks,
}

impl Default for JavaOptions {
    fn default() -> JavaOptions {
        JavaOptions {
            command: Vec::new(),
            output: None,
            force: false,
            sample_bytes: None,
            depth: 16,
            heap_walks: JavaHeapWalks::default(),
        }
    }
}

/// Runs the program with the Java agent until it ends.
///
/// # Errors
///
/// Usage errors ([`RecordError::is_usage`]): `sample_bytes` or `depth` out of
/// range (checked first), the program is not found, the output exists. Others:
/// the agent is not found, the program cannot start, the largest trace cannot be
/// renamed to the output.
pub fn record_java(options: &JavaOptions) -> Result<RecordOutcome, RecordError> {
    agent_options(options, None)?; // bad options are usage errors before anything else
    let given = Path::new(options.command.first().ok_or(RecordError::NoCommand)?);
    let agent = HelperLibrary::JAVA_AGENT.find()?;
    let program = find_program(given)?;
    refuse_existing_output(options.output.as_deref(), options.force)?;
    let output = options.output.as_deref().map(absolute);
    let direct = is_java_launcher(&program) || is_java_launcher(given);
    let agent_output = output.as_deref().filter(|_| direct);
    let agentpath = agentpath(&agent, &agent_options(options, agent_output)?);
    let folder = match output.as_deref().and_then(Path::parent) {
        Some(folder) => folder.to_path_buf(),
        None => std::env::current_dir().map_err(RecordError::CurrentDir)?,
    };
    let manifest = Manifest::create();
    let launch = java_launch(
        &options.command,
        agentpath,
        direct,
        manifest.path(),
        &folder,
        std::env::var_os("JAVA_TOOL_OPTIONS"),
    );
    let exit_code = launch.run()?;
    let mut traces = manifest.traces();
    if !direct
        && let (Some(out), Some(largest)) = (&output, traces.first_mut())
        && largest != out
    {
        std::fs::rename(&*largest, out).map_err(|source| RecordError::Rename {
            from: largest.clone(),
            to: out.clone(),
            source,
        })?;
        *largest = out.clone();
    }
    Ok(RecordOutcome {
        program,
        exit_code,
        traces,
        unfollowed: manifest.unfollowed(),
    })
}

/// Whether `program` is the `java` launcher (by name: `java`, `/usr/bin/java`, …).
fn is_java_launcher(program: &Path) -> bool {
    program.file_name().is_some_and(|n| n == "java")
}

/// The agent's option string (`output=` last: it may contain commas).
fn agent_options(options: &JavaOptions, output: Option<&Path>) -> Result<String, RecordError> {
    let interval = options.sample_bytes.unwrap_or(0);
    if interval > i32::MAX as u64 {
        return Err(RecordError::JavaSample { bytes: interval });
    }
    if options.depth > MAX_DEPTH {
        return Err(RecordError::JavaDepth {
            frames: options.depth,
        });
    }
    let mut agent_options = format!("interval={interval},depth={},quiet=1", options.depth);
    agent_options.push_str(&options.heap_walks.agent_options()?);
    if let Some(out) = output {
        agent_options.push_str(",output=");
        agent_options.push_str(&out.to_string_lossy());
    }
    Ok(agent_options)
}

/// `-agentpath:AGENT=OPTIONS`.
fn agentpath(agent: &Path, agent_options: &str) -> OsString {
    let mut agentpath = OsString::from("-agentpath:");
    agentpath.push(agent.as_os_str());
    agentpath.push("=");
    agentpath.push(agent_options);
    agentpath
}

/// The program with the agent: as the launcher's first argument when `direct`,
/// else in `JAVA_TOOL_OPTIONS` before what memlens inherited there. Default trace
/// names go in `folder`.
fn java_launch(
    command: &[OsString],
    agentpath: OsString,
    direct: bool,
    manifest: &Path,
    folder: &Path,
    inherited_tool_options: Option<OsString>,
) -> Launch {
    let mut launch = Launch::new(&command[0]);
    if direct {
        launch.args.push(agentpath);
    } else {
        launch.set(
            "JAVA_TOOL_OPTIONS",
            prepend(&agentpath, inherited_tool_options),
        );
    }
    launch.args.extend_from_slice(&command[1..]);
    launch.set("MEMLENS_MANIFEST", manifest);
    launch.remove("MEMLENS_OUTPUT");
    launch.set("MEMLENS_DIR", folder);
    launch
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn the_launcher_is_known_by_its_file_name() {
        assert!(is_java_launcher(Path::new("java")));
        assert!(is_java_launcher(Path::new("/usr/lib/jvm/bin/java")));
        for other in ["javac", "java.sh", "/usr/bin/gradle", "./run-java"] {
            assert!(!is_java_launcher(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn the_options_string_ends_with_the_output() {
        let mut options = JavaOptions::default();
        assert_eq!(
            agent_options(&options, None).unwrap(),
            "interval=0,depth=16,quiet=1,heap_walks=1"
        );
        options.sample_bytes = Some(65536);
        options.depth = 8;
        assert_eq!(
            agent_options(&options, Some(Path::new("/out/a,b.mlens"))).unwrap(),
            "interval=65536,depth=8,quiet=1,heap_walks=1,output=/out/a,b.mlens"
        );
    }

    #[test]
    fn out_of_range_options_are_usage_errors() {
        let mut options = JavaOptions {
            sample_bytes: Some(i32::MAX as u64 + 1),
            ..JavaOptions::default()
        };
        let sample = agent_options(&options, None).unwrap_err();
        assert!(matches!(sample, RecordError::JavaSample { .. }) && sample.is_usage());
        options.sample_bytes = Some(i32::MAX as u64);
        assert!(agent_options(&options, None).is_ok());
        options.depth = MAX_DEPTH + 1;
        let depth = agent_options(&options, None).unwrap_err();
        assert!(matches!(depth, RecordError::JavaDepth { frames: 1025 }) && depth.is_usage());
    }

    fn command(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_launcher_gets_the_agent_as_its_first_argument() {
        let agentpath = agentpath(Path::new("/m/libmemlens_jvmti.so"), "interval=0");
        assert_eq!(agentpath, "-agentpath:/m/libmemlens_jvmti.so=interval=0");
        let launch = java_launch(
            &command(&["java", "-cp", ".", "Main"]),
            agentpath.clone(),
            true,
            Path::new("/tmp/m"),
            Path::new("/out"),
            Some("-Xmx1g".into()),
        );
        assert_eq!(launch.program, "java");
        assert_eq!(launch.args[0], agentpath);
        assert_eq!(launch.args[1..], command(&["-cp", ".", "Main"]));
        assert_eq!(launch.change("JAVA_TOOL_OPTIONS"), None);
        assert_eq!(
            launch.change("MEMLENS_MANIFEST"),
            Some(Some(OsStr::new("/tmp/m")))
        );
        assert_eq!(launch.change("MEMLENS_OUTPUT"), Some(None));
        assert_eq!(launch.change("MEMLENS_DIR"), Some(Some(OsStr::new("/out"))));
    }

    #[test]
    fn a_script_gets_the_agent_through_java_tool_options() {
        let agentpath = agentpath(Path::new("/m/libmemlens_jvmti.so"), "interval=0");
        let launch = java_launch(
            &command(&["./run.sh", "x"]),
            agentpath,
            false,
            Path::new("/tmp/m"),
            Path::new("/work"),
            Some("-Xmx1g".into()),
        );
        assert_eq!(launch.args, command(&["x"]));
        assert_eq!(
            launch.change("JAVA_TOOL_OPTIONS"),
            Some(Some(OsStr::new(
                "-agentpath:/m/libmemlens_jvmti.so=interval=0 -Xmx1g"
            )))
        );
    }
}
