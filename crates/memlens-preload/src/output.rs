//! Where a process writes its trace, and the run's manifest.
//!
//! The first process of a run writes `MEMLENS_OUTPUT` (or
//! `memlens.<prog>.<pid>.mlens`); it records its pid in `MEMLENS_CLAIMED`,
//! which its children inherit. A forked child, or any other process,
//! writes `<dir>/memlens.<prog>.<pid>.mlens` (adding `.1`, `.2`, … if that name
//! exists). When the claiming process `exec`s, its trace is renamed to its
//! own pattern name and the new program image, which has the same pid, takes
//! over `MEMLENS_OUTPUT`: through a wrapper script that `exec`s the real binary,
//! the requested file ends up holding the real program.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::config::{Config, env};

/// An open trace file.
pub struct Output {
    pub fd: i32,
    pub path: OsString,
    /// True when this process owns `MEMLENS_OUTPUT`.
    pub claimed: bool,
}

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

fn open_new(path: &OsStr, exclusive: bool) -> Result<i32, i32> {
    let c = CString::new(path.as_bytes()).map_err(|_| libc::EINVAL)?;
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | libc::O_CLOEXEC
        | if exclusive {
            libc::O_EXCL
        } else {
            libc::O_TRUNC
        };
    // SAFETY: plain open of a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o644) };
    if fd < 0 {
        // SAFETY: errno location is valid.
        Err(unsafe { *libc::__errno_location() })
    } else {
        Ok(fd)
    }
}

/// The directory of the pattern names: `MEMLENS_DIR`, else the directory
/// of `MEMLENS_OUTPUT`, else the working directory.
fn pattern_dir(config: &Config) -> OsString {
    match (&config.dir, &config.output) {
        (Some(d), _) => d.clone(),
        (None, Some(out)) => {
            let b = out.as_bytes();
            match b.iter().rposition(|&c| c == b'/') {
                Some(i) => OsString::from_vec(b[..i.max(1)].to_vec()),
                None => OsString::from("."),
            }
        }
        (None, None) => OsString::from("."),
    }
}

/// `<dir>/memlens.<prog>.<pid>.mlens`, or `….<pid>.<suffix>.mlens` when
/// `suffix` is not 0.
fn pattern_name(dir: &OsStr, prog: &OsStr, pid: u32, suffix: u32) -> OsString {
    let mut p = dir.as_bytes().to_vec();
    p.extend_from_slice(b"/memlens.");
    p.extend_from_slice(prog.as_bytes());
    p.extend_from_slice(format!(".{pid}").as_bytes());
    if suffix > 0 {
        p.extend_from_slice(format!(".{suffix}").as_bytes());
    }
    p.extend_from_slice(b".mlens");
    OsString::from_vec(p)
}

/// The pattern name `<dir>/memlens.<prog>.<pid>.mlens`.
pub fn pattern_path(config: &Config, pid: u32, suffix: u32) -> OsString {
    pattern_name(&pattern_dir(config), &prog_name(), pid, suffix)
}

/// True when process `pid` may write `MEMLENS_OUTPUT`: one was asked for,
/// this is not a forked child, and no other process of the run has claimed
/// it (`claimer` is the value of `MEMLENS_CLAIMED`, the claimer's pid).
fn may_claim(config: &Config, forked: bool, claimer: Option<&str>, pid: u32) -> bool {
    !forked && config.output.is_some() && claimer.is_none_or(|c| c == pid.to_string())
}

/// Opens this process's trace file; `forked` is true in a forked child.
pub fn open(config: &Config, pid: u32, forked: bool) -> Option<Output> {
    let claimer = env(c"MEMLENS_CLAIMED").map(|v| v.to_string_lossy().into_owned());
    if may_claim(config, forked, claimer.as_deref(), pid) {
        let path = config.output.clone()?;
        if let Ok(fd) = open_new(&path, false) {
            let value = CString::new(pid.to_string()).ok()?;
            // SAFETY: single-threaded start-up (or the forking thread); the
            // strings are NUL-terminated.
            unsafe { libc::setenv(c"MEMLENS_CLAIMED".as_ptr(), value.as_ptr(), 1) };
            manifest_add(config, &path);
            return Some(Output {
                fd,
                path,
                claimed: true,
            });
        }
    }
    for suffix in 0..1000 {
        let path = pattern_path(config, pid, suffix);
        match open_new(&path, true) {
            Ok(fd) => {
                manifest_add(config, &path);
                return Some(Output {
                    fd,
                    path,
                    claimed: false,
                });
            }
            Err(libc::EEXIST) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Appends `path` (absolute when possible) to the run's manifest.
pub fn manifest_add(config: &Config, path: &OsStr) {
    let Some(manifest) = &config.manifest else {
        return;
    };
    let Ok(m) = CString::new(manifest.as_bytes()) else {
        return;
    };
    let mut line = Vec::new();
    if !path.as_bytes().starts_with(b"/") {
        let mut cwd = [0u8; 4096];
        // SAFETY: getcwd writes a NUL-terminated path into cwd.
        if !unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) }.is_null() {
            let n = cwd.iter().position(|&b| b == 0).unwrap_or(0);
            line.extend_from_slice(&cwd[..n]);
            line.push(b'/');
        }
    }
    line.extend_from_slice(path.as_bytes());
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

/// Before `exec`: give up `MEMLENS_OUTPUT` by renaming our trace to our
/// pattern name, so the new program image can take the requested path.
pub fn release_claim(config: &Config, out: &mut Output, pid: u32) {
    if !out.claimed {
        return;
    }
    for suffix in 0..1000 {
        let new = pattern_path(config, pid, suffix);
        let (Ok(from), Ok(to)) = (
            CString::new(out.path.as_bytes()),
            CString::new(new.as_bytes()),
        ) else {
            return;
        };
        // SAFETY: checking then renaming NUL-terminated paths.
        unsafe {
            if libc::access(to.as_ptr(), libc::F_OK) == 0 {
                continue;
            }
            if libc::rename(from.as_ptr(), to.as_ptr()) == 0 {
                manifest_add(config, &new);
                out.path = new;
                out.claimed = false;
            }
        }
        return;
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

    #[test]
    fn pattern_dir_prefers_memlens_dir_then_the_output_directory() {
        let dir = |output, dir| pattern_dir(&config(output, dir));
        assert_eq!(dir(Some("/o/x.mlens"), Some("/d")), "/d");
        assert_eq!(dir(Some("/o/p/x.mlens"), None), "/o/p");
        assert_eq!(dir(Some("/x.mlens"), None), "/");
        assert_eq!(dir(Some("x.mlens"), None), ".");
        assert_eq!(dir(Some("rel/x.mlens"), None), "rel");
        assert_eq!(dir(None, None), ".");
    }

    #[test]
    fn pattern_names() {
        let name = |suffix| pattern_name(OsStr::new("/d"), OsStr::new("prog"), 42, suffix);
        assert_eq!(name(0), "/d/memlens.prog.42.mlens");
        assert_eq!(name(3), "/d/memlens.prog.42.3.mlens");
    }

    #[test]
    fn pattern_path_names_this_program() {
        let p = pattern_path(&config(None, Some("/d")), 7, 0);
        let prog = prog_name();
        assert!(!prog.is_empty());
        let mut expected = OsString::from("/d/memlens.");
        expected.push(&prog);
        expected.push(".7.mlens");
        assert_eq!(p, expected);
    }

    #[test]
    fn only_the_first_process_claims_the_output() {
        let with_output = config(Some("/o/x.mlens"), None);
        assert!(may_claim(&with_output, false, None, 10));
        // The claimer itself again, after an exec (same pid).
        assert!(may_claim(&with_output, false, Some("10"), 10));
        // Another process of the run, and any forked child.
        assert!(!may_claim(&with_output, false, Some("10"), 11));
        assert!(!may_claim(&with_output, true, None, 10));
        // Nothing to claim.
        assert!(!may_claim(&config(None, Some("/d")), false, None, 10));
    }
}
