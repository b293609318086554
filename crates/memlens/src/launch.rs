//! What the recording commands (`record`, `record --java`, `cache record`) share
//! about starting the user's program: finding it on `PATH`, finding a helper
//! library next to the memlens executable, refusing to overwrite an output without
//! `--force`, leaving Ctrl-C to the program, turning its end into an exit code, and
//! reading the list of traces the recorders wrote.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use anyhow::{Context, Result, bail};

use crate::UsageError;

/// Finds `cmd` as the shell would: a path with a directory as it is, a bare name on
/// `PATH`. `None` when there is no such file.
pub fn find_on_path(cmd: &Path) -> Option<PathBuf> {
    if cmd.components().count() > 1 {
        return cmd.is_file().then(|| cmd.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// Finds the helper library `file` (e.g. `libmemlens_preload.so`): the path in the
/// environment variable `env` if set, else next to the memlens executable (or one
/// level up, or in `../lib/memlens/`). `what` names it and `build` says how to get
/// it in the error.
pub fn helper_library(env: &str, file: &str, what: &str, build: &str) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!("{env} names {}, which does not exist", p.display());
    }
    let exe = std::env::current_exe().context("cannot find the memlens executable")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    for candidate in [
        dir.join(file),
        dir.join("..").join(file),
        dir.join("../lib/memlens").join(file),
    ] {
        if candidate.is_file() {
            return Ok(candidate.canonicalize().unwrap_or(candidate));
        }
    }
    bail!(
        "cannot find {what} {file} next to {}; {build} or set {env}",
        exe.display()
    )
}

/// A usage error when `output` exists and `--force` was not given.
pub fn refuse_existing_output(output: Option<&Path>, force: bool) -> Result<()> {
    match output {
        Some(out) if out.exists() && !force => Err(UsageError(format!(
            "{} already exists; pass --force to overwrite it",
            out.display()
        ))
        .into()),
        _ => Ok(()),
    }
}

/// Ctrl-C and Ctrl-\ go to the program (it is in our process group); memlens
/// ignores them so it can finish the trace and report after the program ends.
pub fn leave_signals_to_the_program() {
    // SAFETY: ignoring SIGINT/SIGQUIT in this process only.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
}

/// The program's exit status as ours: its code, or 128 + N when signal N killed it.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

/// A fresh path for a recorder's manifest (the list of traces it writes), in the
/// temporary folder, unique to this process and moment.
pub fn new_manifest_path() -> PathBuf {
    std::env::temp_dir().join(format!(
        "memlens-manifest-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ))
}

/// The traces listed in a recorder's manifest (one path per line, as the preload
/// library and the Java agent append them), existing ones only, largest (most
/// records) first: with wrapper scripts and shells, the program the user cares about
/// is the one that did the most.
pub fn traces_in_manifest(manifest: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(manifest) {
        for line in text.lines() {
            let p = PathBuf::from(line);
            if p.is_file() && !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let mut sized: Vec<(u64, PathBuf)> = paths
        .into_iter()
        .map(|p| {
            let n = memlens_trace::TraceFile::open(&p)
                .map(|t| t.chunks().iter().map(|c| u64::from(c.header.records)).sum())
                .unwrap_or(0);
            (n, p)
        })
        .collect();
    sized.sort_by_key(|s| std::cmp::Reverse(s.0));
    sized.into_iter().map(|(_, p)| p).collect()
}
