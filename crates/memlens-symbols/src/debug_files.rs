//! Finding separate debug files: by build id, by `.gnu_debuglink`, and dwz
//! supplementary files by `.gnu_debugaltlink`.
//!
//! Distributions strip their libraries and ship the DWARF in `-dbg`/`-dbgsym` packages
//! under `/usr/lib/debug`. This file lists where such a file may be, in the order GDB
//! tries them, and how each candidate must be verified before it is trusted: a debug
//! file with the wrong build id (or CRC) would give confident, wrong answers.
//!
//! Architecture invariant: only local directories are searched. There is no debuginfod
//! or other network lookup; symbolization is offline.

use std::path::{Path, PathBuf};

use crate::diagnostics::hex;

/// The directory distributions install separate debug files under.
pub const DEFAULT_DEBUG_DIR: &str = "/usr/lib/debug";

/// How a candidate debug file proves it belongs to the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verification {
    /// Its build id must equal this one.
    BuildId(Vec<u8>),
    /// Its CRC-32 (as `.gnu_debuglink` computes it, over the whole file) must equal
    /// this one.
    Crc32(u32),
}

/// A place where a module's debug file may be, and how to check it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The path to try.
    pub path: PathBuf,
    /// The check the file must pass.
    pub verification: Verification,
}

impl Verification {
    /// Returns `Ok` when `data` (a whole candidate file, with `file_build_id` read from
    /// it) passes the check, or the reason it does not.
    pub fn check(&self, data: &[u8], file_build_id: Option<&[u8]>) -> Result<(), String> {
        match self {
            Verification::BuildId(expected) => match file_build_id {
                Some(found) if found == expected.as_slice() => Ok(()),
                Some(found) => Err(format!(
                    "build id {} differs from the module's {}",
                    hex(found),
                    hex(expected)
                )),
                None => Err(format!(
                    "has no build id; the module's is {}",
                    hex(expected)
                )),
            },
            Verification::Crc32(expected) => {
                let found = crc32fast::hash(data);
                if found == *expected {
                    Ok(())
                } else {
                    Err(format!(
                        "CRC-32 {found:08x} differs from the debug link's {expected:08x}"
                    ))
                }
            }
        }
    }
}

/// Returns the `.build-id` path of `build_id` under `debug_dir`, as
/// `<debug_dir>/.build-id/ab/cdef….debug`, or `None` for a build id too short to split.
pub(crate) fn build_id_path(debug_dir: &Path, build_id: &[u8]) -> Option<PathBuf> {
    let (first, rest) = build_id.split_first()?;
    if rest.is_empty() {
        return None;
    }
    Some(
        debug_dir
            .join(".build-id")
            .join(hex(&[*first]))
            .join(format!("{}.debug", hex(rest))),
    )
}

/// Lists the candidate debug files of the module whose file is `module_path`, in the
/// order they should be tried.
///
/// `build_id` is the module's own build id (from its file, or the recorded one), and
/// `debuglink` its `.gnu_debuglink` name and CRC. Candidates found by build id are
/// verified by build id. Candidates found by debug link are verified by build id when
/// the module has one (cheaper and stricter), else by CRC.
pub(crate) fn candidates(
    module_path: &Path,
    build_id: Option<&[u8]>,
    debuglink: Option<(&str, u32)>,
    debug_dirs: &[PathBuf],
) -> Vec<Candidate> {
    let mut found = Vec::new();
    if let Some(build_id) = build_id {
        for dir in debug_dirs {
            if let Some(path) = build_id_path(dir, build_id) {
                found.push(Candidate {
                    path,
                    verification: Verification::BuildId(build_id.to_vec()),
                });
            }
        }
    }
    if let Some((name, crc)) = debuglink
        && is_plain_file_name(name)
    {
        let verification = match build_id {
            Some(build_id) => Verification::BuildId(build_id.to_vec()),
            None => Verification::Crc32(crc),
        };
        // The real directory matters: `/lib/x86_64-linux-gnu/libc.so.6` is
        // `/usr/lib/x86_64-linux-gnu/libc.so.6` on merged-/usr systems, and debug
        // packages install under the latter.
        let real = std::fs::canonicalize(module_path).unwrap_or_else(|_| module_path.to_owned());
        let mut dirs: Vec<&Path> = Vec::new();
        for path in [module_path, real.as_path()] {
            if let Some(dir) = path.parent()
                && !dirs.contains(&dir)
            {
                dirs.push(dir);
            }
        }
        for dir in &dirs {
            for path in [dir.join(name), dir.join(".debug").join(name)] {
                found.push(Candidate {
                    path,
                    verification: verification.clone(),
                });
            }
        }
        for debug_dir in debug_dirs {
            for dir in &dirs {
                let relative = dir.strip_prefix("/").unwrap_or(dir);
                found.push(Candidate {
                    path: debug_dir.join(relative).join(name),
                    verification: verification.clone(),
                });
            }
        }
    }
    // The module's own file is never its own debug file; a debug link naming the
    // module itself would otherwise read the file twice.
    found.retain(|candidate| candidate.path != module_path);
    found.dedup();
    found
}

/// Lists the candidate supplementary (dwz) files named by a debug file's
/// `.gnu_debugaltlink`.
///
/// `name` is absolute, or relative to the directory of `debug_file_path`; the file is
/// also looked up by `alt_build_id` in the debug directories. All are verified by
/// `alt_build_id`.
pub(crate) fn alt_candidates(
    debug_file_path: &Path,
    name: &str,
    alt_build_id: &[u8],
    debug_dirs: &[PathBuf],
) -> Vec<Candidate> {
    let verification = Verification::BuildId(alt_build_id.to_vec());
    let mut found = Vec::new();
    let named = Path::new(name);
    if named.is_absolute() {
        found.push(named.to_owned());
    } else if let Some(dir) = debug_file_path.parent() {
        found.push(dir.join(named));
    }
    for dir in debug_dirs {
        found.extend(build_id_path(dir, alt_build_id));
    }
    found.dedup();
    found
        .into_iter()
        .map(|path| Candidate {
            path,
            verification: verification.clone(),
        })
        .collect()
}

/// Returns `true` for a debug link that is a plain file name, as the GNU tools write it.
/// A link with directories in it is not followed, so a crafted file cannot point the
/// symbolizer at arbitrary paths.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && name != "." && name != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_path_splits_first_byte() {
        assert_eq!(
            build_id_path(Path::new("/usr/lib/debug"), &[0x93, 0xac, 0x61]).unwrap(),
            Path::new("/usr/lib/debug/.build-id/93/ac61.debug")
        );
        assert_eq!(build_id_path(Path::new("/d"), &[0x93]), None);
        assert_eq!(build_id_path(Path::new("/d"), &[]), None);
    }

    #[test]
    fn candidates_follow_gdb_order() {
        let dirs = [PathBuf::from("/dbg")];
        let list = candidates(
            Path::new("/nonexistent/dir/libx.so"),
            Some(&[1, 2, 3]),
            Some(("libx.so.debug", 7)),
            &dirs,
        );
        let paths: Vec<_> = list.iter().map(|c| c.path.to_str().unwrap()).collect();
        assert_eq!(
            paths,
            [
                "/dbg/.build-id/01/0203.debug",
                "/nonexistent/dir/libx.so.debug",
                "/nonexistent/dir/.debug/libx.so.debug",
                "/dbg/nonexistent/dir/libx.so.debug",
            ]
        );
        assert!(
            list.iter()
                .all(|c| c.verification == Verification::BuildId(vec![1, 2, 3]))
        );
    }

    #[test]
    fn debuglink_without_build_id_is_checked_by_crc() {
        let list = candidates(Path::new("/a/b"), None, Some(("b.debug", 42)), &[]);
        assert_eq!(list[0].verification, Verification::Crc32(42));
        assert!(
            Verification::Crc32(crc32fast::hash(b"xyz"))
                .check(b"xyz", None)
                .is_ok()
        );
        assert!(Verification::Crc32(1).check(b"xyz", None).is_err());
    }

    #[test]
    fn odd_debuglinks_are_not_followed() {
        for name in ["", "..", "../../etc/passwd", "/etc/passwd"] {
            assert!(candidates(Path::new("/a/b"), None, Some((name, 0)), &[]).is_empty());
        }
    }

    #[test]
    fn alt_link_is_relative_to_the_debug_file() {
        let list = alt_candidates(
            Path::new("/usr/lib/debug/.build-id/aa/bb.debug"),
            "../../.dwz/x86_64-linux-gnu/libfoo.debug",
            &[0xde, 0xad],
            &[PathBuf::from("/usr/lib/debug")],
        );
        assert_eq!(
            list[0].path,
            Path::new("/usr/lib/debug/.build-id/aa/../../.dwz/x86_64-linux-gnu/libfoo.debug")
        );
        assert_eq!(
            list[1].path,
            Path::new("/usr/lib/debug/.build-id/de/ad.debug")
        );
    }
}
