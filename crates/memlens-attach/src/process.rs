//! What `/proc` says about the process to attach to, before touching it:
//! that it exists, its executable and mappings (where its libc and the
//! recorder are loaded), whether another tracer holds it, which thread is
//! best to borrow, and when it started. Also the checks whose failures have
//! their own sentence: a static program, a statically linked allocator.

use std::path::{Path, PathBuf};

use crate::elf;
use crate::error::AttachError;

/// One line of `/proc/PID/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// The mapped file (empty for anonymous memory).
    pub path: String,
}

/// Parses `/proc/PID/maps`.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (start, end) = fields.next()?.split_once('-')?;
            let _perms = fields.next()?;
            let offset = fields.next()?;
            let _dev = fields.next()?;
            let _inode = fields.next()?;
            let path = fields.collect::<Vec<_>>().join(" ");
            Some(Mapping {
                start: u64::from_str_radix(start, 16).ok()?,
                end: u64::from_str_radix(end, 16).ok()?,
                offset: u64::from_str_radix(offset, 16).ok()?,
                path,
            })
        })
        .collect()
}

/// The file name of a mapping's path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// True for glibc's `libc.so.6` (and `libc-2.x.so`), musl's `libc.so`.
pub fn is_libc(path: &str) -> bool {
    let name = file_name(path);
    name.starts_with("libc.so") || (name.starts_with("libc-") && name.ends_with(".so"))
}

/// A process as seen in `/proc`.
#[derive(Debug)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// Its executable (as the kernel names it).
    pub exe: PathBuf,
    /// Its mappings.
    pub maps: Vec<Mapping>,
}

fn proc_error(pid: u32, e: std::io::Error) -> AttachError {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ESRCH) => AttachError::NoProcess { pid },
        Some(libc::EACCES) | Some(libc::EPERM) => AttachError::Permission {
            pid,
            reason: e.to_string(),
        },
        _ => AttachError::Io {
            what: format!("reading /proc/{pid}"),
            source: e,
        },
    }
}

impl Process {
    /// Reads the process's executable and mappings.
    ///
    /// # Errors
    ///
    /// [`AttachError::NoProcess`], [`AttachError::Permission`] (another
    /// user's process), [`AttachError::Io`].
    pub fn read(pid: u32) -> Result<Process, AttachError> {
        if pid == 0 || !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(AttachError::NoProcess { pid });
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).map_err(|e| proc_error(pid, e))?;
        let maps =
            std::fs::read_to_string(format!("/proc/{pid}/maps")).map_err(|e| proc_error(pid, e))?;
        Ok(Process {
            pid,
            exe,
            maps: parse_maps(&maps),
        })
    }

    /// Reads the mappings again (after the recorder was loaded).
    pub fn reread_maps(&mut self) -> Result<(), AttachError> {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid))
            .map_err(|e| proc_error(self.pid, e))?;
        self.maps = parse_maps(&maps);
        Ok(())
    }

    /// The executable, for sentences.
    pub fn exe_name(&self) -> String {
        self.exe.display().to_string()
    }

    /// The path of the first mapped file for which `is` holds.
    pub fn module(&self, is: impl Fn(&str) -> bool) -> Option<&str> {
        self.maps
            .iter()
            .find(|m| m.path.starts_with('/') && is(&m.path))
            .map(|m| m.path.as_str())
    }

    /// The load bias of the mapped file `path`: where its first mapping (file
    /// offset 0) starts, less the first segment's page-aligned address.
    pub fn load_bias(&self, path: &str) -> Option<u64> {
        let first = self.maps.iter().find(|m| m.path == path && m.offset == 0)?;
        let lowest = elf::lowest_segment_address(Path::new(path)).ok()?;
        Some(first.start - (lowest & !0xfff))
    }

    /// The address of the dynamic symbol `name` of the loaded file `path`.
    pub fn symbol(&self, path: &str, name: &str) -> Option<u64> {
        let value = elf::dynamic_symbol(Path::new(path), name).ok()??;
        Some(self.load_bias(path)? + value)
    }

    /// Refuses programs the recorder cannot see into: static programs (no
    /// dynamic loader, no libc mapped) and executables that define `malloc`
    /// themselves.
    pub fn check_dynamic_allocator(&mut self) -> Result<(), AttachError> {
        let exe = format!("/proc/{}/exe", self.pid);
        // A program that has just started: its loader has not mapped libc yet.
        let dynamic = elf::has_interpreter(Path::new(&exe)).unwrap_or(false);
        for _ in 0..200 {
            if !dynamic || self.module(is_libc).is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            self.reread_maps()?;
        }
        let loader = self.module(|p| file_name(p).starts_with("ld-"));
        let libc = self.module(is_libc);
        if loader.is_none() || libc.is_none() {
            return Err(AttachError::StaticProgram {
                pid: self.pid,
                exe: self.exe_name(),
            });
        }
        for symbol in ["malloc", "free"] {
            if elf::defines(Path::new(&exe), symbol).unwrap_or(false) {
                return Err(AttachError::StaticAllocator {
                    pid: self.pid,
                    exe: self.exe_name(),
                    symbol: symbol.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The pid and name of the process tracing this one, if any.
    pub fn tracer(&self) -> Option<(u32, String)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let tracer: u32 = status
            .lines()
            .find_map(|l| l.strip_prefix("TracerPid:"))?
            .trim()
            .parse()
            .ok()?;
        if tracer == 0 {
            return None;
        }
        let name = std::fs::read_to_string(format!("/proc/{tracer}/comm")).unwrap_or_default();
        Some((tracer, name.trim().to_string()))
    }

    /// The process's threads, those blocked in a system call first (the main
    /// thread first among equals): the order in which to try to borrow one.
    pub fn threads_to_try(&self) -> Vec<u32> {
        let sleeping = |tid: u32| {
            std::fs::read_to_string(format!("/proc/{}/task/{tid}/stat", self.pid))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().starts_with('S'))
                })
                .unwrap_or(false)
        };
        let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", self.pid))
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        tids.sort_unstable_by_key(|&t| (!sleeping(t), t != self.pid, t));
        tids
    }

    /// The address ranges of the dynamic loader, the C library and every other
    /// module that exports `malloc` (a dynamically linked allocator): a thread
    /// interrupted there may hold the loader's or the allocator's lock, or be
    /// halfway through changing their state, so it is not borrowed.
    pub fn allocator_and_loader_code(&self) -> Vec<(u64, u64)> {
        let mut checked: Vec<(&str, bool)> = Vec::new();
        let mut ranges = Vec::new();
        for m in self.maps.iter().filter(|m| m.path.starts_with('/')) {
            let risky = match checked.iter().find(|(p, _)| *p == m.path) {
                Some(&(_, risky)) => risky,
                None => {
                    let risky = file_name(&m.path).starts_with("ld-")
                        || is_libc(&m.path)
                        || (m.path.contains(".so")
                            && elf::dynamic_symbol(Path::new(&m.path), "malloc")
                                .ok()
                                .flatten()
                                .is_some());
                    checked.push((&m.path, risky));
                    risky
                }
            };
            if risky {
                ranges.push((m.start, m.end));
            }
        }
        ranges
    }

    /// The address range of the dynamic loader.
    pub fn loader_code(&self) -> Vec<(u64, u64)> {
        self.maps
            .iter()
            .filter(|m| m.path.starts_with('/') && file_name(&m.path).starts_with("ld-"))
            .map(|m| (m.start, m.end))
            .collect()
    }

    /// When the process started, in ns since the Unix epoch (0 when unknown).
    pub fn start_unix_ns(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        let start_ticks: Option<u64> = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(19)?.parse().ok());
        let boot_secs: Option<u64> = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("btime "))?
                .trim()
                .parse()
                .ok()
        });
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        match (start_ticks, boot_secs) {
            (Some(t), Some(b)) => b * 1_000_000_000 + t * (1_000_000_000 / hz),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_are_parsed_with_their_paths() {
        let maps = parse_maps(
            "55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 123 /usr/bin/my prog\n\
             7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n\
             7f1000000000-7f1000028000 r--p 00000000 fd:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6\n",
        );
        assert_eq!(maps.len(), 3);
        assert_eq!(maps[0].path, "/usr/bin/my prog");
        assert_eq!(maps[1].path, "");
        assert_eq!(maps[2].start, 0x7f10_0000_0000);
        assert!(is_libc(&maps[2].path));
        assert!(!is_libc("/usr/lib/libcrypt.so.1"));
        assert!(is_libc("/lib/libc-2.31.so"));
    }

    #[test]
    fn this_process_is_dynamic_and_has_libc_and_a_start_time() {
        let me = Process::read(std::process::id()).unwrap();
        assert!(me.module(is_libc).is_some());
        let libc = me.module(is_libc).unwrap().to_string();
        let malloc = me.symbol(&libc, "malloc").expect("libc's malloc");
        assert_eq!(malloc, libc::malloc as *const () as u64);
        assert!(me.start_unix_ns() > 1_600_000_000_000_000_000);
        assert!(matches!(
            Process::read(u32::MAX - 1),
            Err(AttachError::NoProcess { .. })
        ));
    }
}
