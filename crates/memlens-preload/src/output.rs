//! Which processes of a run write a trace, under which name, and the run's
//! manifest (DESIGN §4.3, "Processes").
//!
//! The process the user launched is the run's *root*. The first process that
//! loads the library claims the run: it puts its pid in `MEMLENS_CLAIMED`,
//! which its descendants inherit. After an `exec` the new image has the same
//! pid, so it is the root again. The root writes the template
//! `MEMLENS_OUTPUT` with `%p` replaced by its pid; without `MEMLENS_OUTPUT`
//! (the library preloaded by hand) the template is
//! `<MEMLENS_DIR or .>/memlens.<prog>.%p.mlens`, made absolute and exported
//! as `MEMLENS_OUTPUT` for the root's later images. The root's file is opened
//! truncating: when the root `exec`s, the new image's trace replaces the old
//! image's at the same path, so a wrapper script that `exec`s the real
//! program leaves one trace, of the program.
//!
//! Every other process (a forked child, a program a forked child `exec`s, a
//! `posix_spawn` child) records only with `MEMLENS_FOLLOW_FORK=1`, under the
//! template's name with its own pid: `%p` replaced, or the pid inserted before
//! the final `.mlens` (`/d/f.mlens` → `/d/f.<pid>.mlens`; a name without
//! `.mlens` gets `.<pid>.mlens` appended). A followed child that `exec`s keeps
//! one file (the new image writes the same name, truncating). A process that
//! is not followed opens no file and starts no writer; it appends
//! `unfollowed <pid>` to the manifest, so the launcher can say how many
//! processes were left out. Every trace's path is appended there too.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::OnceLock;

use crate::config::{Config, env};

/// An open trace file.
pub struct Output {
    pub fd: i32,
}

/// The template this process names its trace from (computed once; a forked
/// child inherits it, so it names its trace as its parent would).
static TEMPLATE: OnceLock<OsString> = OnceLock::new();

fn prog_name() -> OsString {
    let mut buf = [0u8; 4096];
    // SAFETY: readlink writes at most buf.len() bytes.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n <= 0 {
        return OsString::from("prog");
    }
    let path = &buf[..n as usize];
    let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    OsString::from_vec(base.to_vec())
}

/// The working directory, or `None` when it cannot be read.
fn cwd() -> Option<Vec<u8>> {
    let mut buf = [0u8; 4096];
    // SAFETY: getcwd writes a NUL-terminated path into buf.
    if unsafe { libc::getcwd(buf.as_mut_ptr().cast(), buf.len()) }.is_null() {
        return None;
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(0);
    Some(buf[..n].to_vec())
}

/// `path` made absolute against the working directory when it is relative.
fn absolute(path: &[u8]) -> Vec<u8> {
    match cwd() {
        Some(mut dir) if !path.starts_with(b"/") => {
            dir.push(b'/');
            dir.extend_from_slice(path);
            dir
        }
        _ => path.to_vec(),
    }
}

/// True when this process is the run's root: not a forked child, and no
/// other process has claimed the run (`claimer` is `MEMLENS_CLAIMED`, the
/// root's pid; the root itself after an `exec` has the same pid).
fn is_root(forked: bool, claimer: Option<&str>, pid: u32) -> bool {
    !forked && claimer.is_none_or(|c| c == pid.to_string())
}

/// The template of the run's trace names: `MEMLENS_OUTPUT`, else
/// `<dir>/memlens.<prog>.%p.mlens` in `MEMLENS_DIR` or the working
/// directory, absolute.
fn template(config: &Config, prog: &OsStr) -> OsString {
    if let Some(out) = &config.output {
        return out.clone();
    }
    let dir = config.dir.as_deref().unwrap_or(OsStr::new("."));
    let mut t = match dir.as_bytes() {
        b"." => cwd().unwrap_or_else(|| b".".to_vec()),
        d => absolute(d),
    };
    t.extend_from_slice(b"/memlens.");
    t.extend_from_slice(prog.as_bytes());
    t.extend_from_slice(b".%p.mlens");
    OsString::from_vec(t)
}

/// The trace name for process `pid` from `template`: every `%p` of its file
/// name replaced by the pid; without `%p`, the template itself for the root
/// and, for another process, the template with `.<pid>` inserted before its
/// final `.mlens` (or `.<pid>.mlens` appended when it has none).
fn trace_name(template: &[u8], pid: u32, root: bool) -> OsString {
    let pid = pid.to_string();
    let file_at = template
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |i| i + 1);
    let (dir, mut file) = template.split_at(file_at);
    let mut name = dir.to_vec();
    if file.windows(2).any(|w| w == b"%p") {
        while let Some(i) = file.windows(2).position(|w| w == b"%p") {
            name.extend_from_slice(&file[..i]);
            name.extend_from_slice(pid.as_bytes());
            file = &file[i + 2..];
        }
        name.extend_from_slice(file);
    } else if root {
        name.extend_from_slice(file);
    } else {
        name.extend_from_slice(file.strip_suffix(b".mlens").unwrap_or(file));
        name.push(b'.');
        name.extend_from_slice(pid.as_bytes());
        name.extend_from_slice(b".mlens");
    }
    OsString::from_vec(name)
}

/// Sets `name` in this process's environment (start-up only: single-threaded,
/// or the forking thread).
fn export(name: &CStr, value: &[u8]) {
    if let Ok(value) = CString::new(value) {
        // SAFETY: NUL-terminated strings; no other thread reads the
        // environment during start-up.
        unsafe { libc::setenv(name.as_ptr(), value.as_ptr(), 1) };
    }
}

/// The trace process `pid` writes (`forked` in a forked child), or `None`
/// when it records nothing: it is not the root and other processes are not
/// followed. Such a process says so in the manifest. The root claims the run.
pub fn trace_path(config: &Config, pid: u32, forked: bool) -> Option<OsString> {
    let claimer = env(c"MEMLENS_CLAIMED").map(|v| v.to_string_lossy().into_owned());
    let root = is_root(forked, claimer.as_deref(), pid);
    if !root && !config.follow_fork {
        manifest_line(config, format!("unfollowed {pid}").as_bytes());
        return None;
    }
    let template = TEMPLATE.get_or_init(|| template(config, &prog_name()));
    if root {
        export(c"MEMLENS_CLAIMED", pid.to_string().as_bytes());
        if config.output.is_none() {
            export(c"MEMLENS_OUTPUT", template.as_bytes());
        }
    }
    Some(trace_name(template.as_bytes(), pid, root))
}

/// Opens (truncating) the trace at `path` and lists it in the manifest.
pub fn open(config: &Config, path: &OsStr) -> Option<Output> {
    let c = CString::new(path.as_bytes()).ok()?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_TRUNC;
    // SAFETY: plain open of a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o644) };
    if fd < 0 {
        return None;
    }
    manifest_line(config, &absolute(path.as_bytes()));
    Some(Output { fd })
}

/// Appends `line` and a newline to the run's manifest.
fn manifest_line(config: &Config, line: &[u8]) {
    let Some(manifest) = &config.manifest else {
        return;
    };
    let Ok(m) = CString::new(manifest.as_bytes()) else {
        return;
    };
    let mut line = line.to_vec();
    line.push(b'\n');
    // SAFETY: append-only write of one short line (atomic for O_APPEND).
    unsafe {
        let fd = libc::open(
            m.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC,
            0o644,
        );
        if fd >= 0 {
            libc::write(fd, line.as_ptr().cast(), line.len());
            libc::close(fd);
        }
    }
}

/// Writes all of `bytes` to `fd`, retrying on interruption.
pub fn write_all(fd: i32, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writing from a valid slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            // SAFETY: errno location is valid.
            if unsafe { *libc::__errno_location() } == libc::EINTR {
                continue;
            }
            return false;
        }
        bytes = &bytes[n as usize..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(output: Option<&str>, dir: Option<&str>) -> Config {
        Config::from_vars(|name| match name.to_bytes() {
            b"MEMLENS_OUTPUT" => output.map(OsString::from),
            b"MEMLENS_DIR" => dir.map(OsString::from),
            _ => None,
        })
    }

    fn name(template: &str, pid: u32, root: bool) -> OsString {
        trace_name(template.as_bytes(), pid, root)
    }

    #[test]
    fn the_root_writes_the_template_and_children_insert_their_pid() {
        assert_eq!(name("/d/f.mlens", 10, true), "/d/f.mlens");
        assert_eq!(name("/d/f.mlens", 11, false), "/d/f.11.mlens");
        assert_eq!(name("/d/run.x.mlens", 11, false), "/d/run.x.11.mlens");
        // No `.mlens` to insert before: appended.
        assert_eq!(name("/d/trace", 10, true), "/d/trace");
        assert_eq!(name("/d/trace", 11, false), "/d/trace.11.mlens");
        assert_eq!(name("f.mlens", 11, false), "f.11.mlens");
    }

    #[test]
    fn every_percent_p_of_the_file_name_becomes_the_pid() {
        assert_eq!(
            name("/d/memlens.sh.%p.mlens", 10, true),
            "/d/memlens.sh.10.mlens"
        );
        assert_eq!(
            name("/d/memlens.sh.%p.mlens", 11, false),
            "/d/memlens.sh.11.mlens"
        );
        assert_eq!(name("/d/%p-%p.mlens", 7, false), "/d/7-7.mlens");
        // A directory named with `%p` is left alone.
        assert_eq!(name("/a%pb/f.mlens", 7, false), "/a%pb/f.7.mlens");
    }

    #[test]
    fn the_template_is_the_output_or_the_default_name_in_an_absolute_directory() {
        let prog = OsStr::new("prog");
        let t = |output, dir| template(&config(output, dir), prog);
        assert_eq!(t(Some("/o/x.mlens"), Some("/d")), "/o/x.mlens");
        assert_eq!(t(None, Some("/d")), "/d/memlens.prog.%p.mlens");
        let here = String::from_utf8(cwd().unwrap()).unwrap();
        assert_eq!(
            t(None, None),
            format!("{here}/memlens.prog.%p.mlens").as_str()
        );
        assert_eq!(
            t(None, Some("rel")),
            format!("{here}/rel/memlens.prog.%p.mlens").as_str()
        );
    }

    #[test]
    fn the_root_is_the_first_process_and_itself_after_exec() {
        assert!(is_root(false, None, 10));
        // The root again after an exec (same pid).
        assert!(is_root(false, Some("10"), 10));
        // Another process of the run (a program a child execs, a spawned
        // child), and any forked child.
        assert!(!is_root(false, Some("10"), 11));
        assert!(!is_root(true, None, 10));
        assert!(!is_root(true, Some("10"), 11));
    }
}
