//! `memlens record --java -- java …`: runs a Java program with the JVMTI agent
//! (`libmemlens_jvmti.so`, from `memlens-jvmti`) instead of LD_PRELOAD.
//!
//! When the command is the `java` launcher itself, `-agentpath:LIB=OPTIONS` is
//! inserted as its first argument, so the program's output is untouched. Any other
//! command (a wrapper script, a build tool) gets the agent through
//! `JAVA_TOOL_OPTIONS`, so every JVM it starts is recorded into its own
//! `memlens.java.<pid>.mlens` (the JVM then prints its usual "Picked up
//! JAVA_TOOL_OPTIONS" line on stderr); with `-o`, the largest of them is renamed to
//! that name afterwards. The agent appends each trace's path to the manifest file
//! named by `MEMLENS_MANIFEST`, as the native recorder does. The exit status is the
//! program's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use super::{RecordArgs, report};
use crate::{UsageError, launch};

/// Finds the agent: `$MEMLENS_JVMTI`, else next to this executable, else in
/// `../lib/memlens/`.
fn find_agent() -> Result<PathBuf> {
    launch::helper_library(
        "MEMLENS_JVMTI",
        "libmemlens_jvmti.so",
        "the Java agent",
        "build it with `cargo build --release -p memlens-jvmti`",
    )
}

/// Whether `program` is the `java` launcher (by name: `java`, `/usr/bin/java`, …).
fn is_java_launcher(program: &Path) -> bool {
    program.file_name().is_some_and(|n| n == "java")
}

/// The agent's option string (`output=` last: it may contain commas).
fn agent_options(args: &RecordArgs, output: Option<&Path>) -> Result<String> {
    let interval = args.java_sample.unwrap_or(0);
    if interval > i32::MAX as u64 {
        return Err(UsageError(format!(
            "--java-sample {interval}: at most {} bytes",
            i32::MAX
        ))
        .into());
    }
    if args.java_depth > 1024 {
        return Err(UsageError(format!(
            "--java-depth {}: at most 1024 frames",
            args.java_depth
        ))
        .into());
    }
    let mut options = format!("interval={interval},depth={},quiet=1", args.java_depth);
    if let Some(out) = output {
        options.push_str(",output=");
        options.push_str(&out.to_string_lossy());
    }
    Ok(options)
}

/// Runs `memlens record --java`.
pub(super) fn run(args: RecordArgs) -> Result<i32> {
    agent_options(&args, None)?; // bad options are usage errors before anything else
    let agent = find_agent()?;
    let program = PathBuf::from(&args.command[0]);
    let Some(resolved) = launch::find_on_path(&program) else {
        return Err(UsageError(format!(
            "cannot find the program `{}` (not a file, and not on PATH)",
            program.display()
        ))
        .into());
    };
    launch::refuse_existing_output(args.output.as_deref(), args.force)?;
    let output = args
        .output
        .as_ref()
        .map(|o| std::path::absolute(o).unwrap_or_else(|_| o.clone()));
    let direct = is_java_launcher(&resolved) || is_java_launcher(&program);
    let options = agent_options(&args, if direct { output.as_deref() } else { None })?;
    let mut agentpath = OsString::from("-agentpath:");
    agentpath.push(agent.as_os_str());
    agentpath.push("=");
    agentpath.push(&options);
    let manifest = launch::new_manifest_path();
    let mut cmd = Command::new(&args.command[0]);
    if direct {
        cmd.arg(&agentpath);
    } else {
        let mut tool_options = agentpath.clone();
        if let Some(existing) = std::env::var_os("JAVA_TOOL_OPTIONS").filter(|v| !v.is_empty()) {
            tool_options.push(" ");
            tool_options.push(existing);
        }
        cmd.env("JAVA_TOOL_OPTIONS", tool_options);
    }
    cmd.args(&args.command[1..]);
    cmd.env("MEMLENS_MANIFEST", &manifest)
        .env_remove("MEMLENS_OUTPUT");
    let dir = match &output {
        Some(out) => out
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(std::env::current_dir()?),
        None => std::env::current_dir()?,
    };
    cmd.env("MEMLENS_DIR", &dir);
    launch::leave_signals_to_the_program();
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let code = launch::exit_code(status);
    let mut paths = launch::traces_in_manifest(&manifest);
    std::fs::remove_file(&manifest).ok();
    if !direct
        && let (Some(out), Some(first)) = (&output, paths.first().cloned())
        && &first != out
    {
        std::fs::rename(&first, out)
            .with_context(|| format!("cannot rename {} to {}", first.display(), out.display()))?;
        paths[0] = out.clone();
    }
    if paths.is_empty() {
        eprintln!(
            "memlens: no trace was written: {} started no JVM with the agent (is it a Java program? the agent needs JDK 11 or later)",
            program.display()
        );
    } else if !args.quiet {
        report(&paths, &resolved);
    }
    if args.summary
        && let Some(main) = paths.first()
    {
        println!();
        crate::summary_cmd::print(main, false, 5)?;
    }
    Ok(code)
}
