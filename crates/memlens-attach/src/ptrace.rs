//! Borrowing one thread of another process to call functions in it
//! (x86-64 Linux): seize it, interrupt it, save every register (the general
//! ones and the whole extended state, AVX included), make calls with a
//! return address of 0 (the call ends in a `SIGSEGV` at address 0, which is
//! caught and never delivered), then restore the registers and let it go.
//!
//! A thread interrupted inside a system call is resumed with the registers
//! it had, so the kernel restarts the call as it would after any signal;
//! each call is made with `orig_rax = -1`, so that restart logic never
//! touches it. Signals that arrive during a call are delivered to the
//! program as usual; one that arrived with the interruption is delivered
//! when the thread is let go.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use crate::error::AttachError;

/// `NT_X86_XSTATE`: the register set of the whole extended state.
const NT_X86_XSTATE: libc::c_int = 0x202;
/// Room for the largest extended state (AVX-512 and AMX tiles are ~11 KiB).
const XSTATE_BYTES: usize = 16 << 10;
/// The longest a call may take (`dlopen` of the recorder takes milliseconds).
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// How a wait ended.
enum Stop {
    /// Stopped with this signal, or 0 for an interruption or group stop.
    Signal(i32),
    /// The process is gone.
    Exited,
}

/// A thread of the target, stopped under our control.
pub struct Borrowed {
    pid: u32,
    tid: i32,
    regs: libc::user_regs_struct,
    xstate: Vec<u8>,
    mem: File,
    /// A signal that arrived with the interruption, to deliver when let go.
    pending: i32,
    /// Where the next data written to the thread's stack goes (grows down).
    data_top: u64,
    released: bool,
}

fn ptrace(request: libc::c_uint, tid: i32, addr: usize, data: usize) -> std::io::Result<i64> {
    // SAFETY: a ptrace request with plain integer or valid pointer arguments.
    let r = unsafe {
        libc::ptrace(
            request,
            tid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn wait(tid: i32, limit: Duration) -> std::io::Result<Option<Stop>> {
    let deadline = Instant::now() + limit;
    loop {
        let mut status = 0;
        // SAFETY: waitpid on a thread we trace, into a local.
        let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL | libc::WNOHANG) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ECHILD) => Ok(Some(Stop::Exited)),
                Some(libc::EINTR) => continue,
                _ => Err(e),
            };
        }
        if r == tid {
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                return Ok(Some(Stop::Exited));
            }
            if libc::WIFSTOPPED(status) {
                let event = status >> 16;
                let sig = libc::WSTOPSIG(status);
                return Ok(Some(if event == libc::PTRACE_EVENT_STOP {
                    Stop::Signal(0)
                } else {
                    Stop::Signal(sig)
                }));
            }
        }
        if Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

impl Borrowed {
    /// Seizes and interrupts thread `tid` of process `pid`.
    ///
    /// # Errors
    ///
    /// [`AttachError::Permission`] when the kernel refuses (`EPERM`),
    /// [`AttachError::Exited`] when the thread is gone.
    pub fn seize(pid: u32, tid: u32) -> Result<Borrowed, AttachError> {
        let tid = tid as i32;
        if let Err(e) = ptrace(libc::PTRACE_SEIZE, tid, 0, 0) {
            return Err(match e.raw_os_error() {
                Some(libc::ESRCH) => AttachError::Exited { pid },
                Some(libc::EPERM) | Some(libc::EACCES) => AttachError::Permission {
                    pid,
                    reason: format!("ptrace: {e}"),
                },
                _ => AttachError::Io {
                    what: format!("seizing process {pid}"),
                    source: e,
                },
            });
        }
        let mem = File::options()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"));
        let mut borrowed = Borrowed {
            pid,
            tid,
            // SAFETY: plain register struct, all-zero is valid.
            regs: unsafe { core::mem::zeroed() },
            xstate: vec![0; XSTATE_BYTES],
            mem: match mem {
                Ok(f) => f,
                Err(source) => {
                    let _ = ptrace(libc::PTRACE_DETACH, tid, 0, 0);
                    return Err(AttachError::Io {
                        what: format!("opening /proc/{pid}/mem"),
                        source,
                    });
                }
            },
            pending: 0,
            data_top: 0,
            released: true,
        };
        ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0).map_err(|e| borrowed.io("interrupting", e))?;
        match wait(tid, Duration::from_secs(5)).map_err(|e| borrowed.io("waiting for", e))? {
            Some(Stop::Signal(sig)) => borrowed.pending = sig,
            Some(Stop::Exited) => return Err(AttachError::Exited { pid }),
            None => {
                let _ = ptrace(libc::PTRACE_DETACH, tid, 0, 0);
                return Err(AttachError::Injection {
                    pid,
                    reason: "the thread did not stop within 5 s".into(),
                });
            }
        }
        borrowed.released = false;
        ptrace(
            libc::PTRACE_GETREGS,
            tid,
            0,
            (&mut borrowed.regs as *mut libc::user_regs_struct) as usize,
        )
        .map_err(|e| borrowed.io("reading the registers of", e))?;
        let mut iov = libc::iovec {
            iov_base: borrowed.xstate.as_mut_ptr().cast(),
            iov_len: XSTATE_BYTES,
        };
        ptrace(
            libc::PTRACE_GETREGSET,
            tid,
            NT_X86_XSTATE as usize,
            (&mut iov as *mut libc::iovec) as usize,
        )
        .map_err(|e| borrowed.io("reading the extended registers of", e))?;
        borrowed.xstate.truncate(iov.iov_len);
        // Below the red zone, with room to spare.
        borrowed.data_top = (borrowed.regs.rsp - 1024) & !0xf;
        Ok(borrowed)
    }

    fn io(&self, what: &str, source: std::io::Error) -> AttachError {
        if source.raw_os_error() == Some(libc::ESRCH) {
            return AttachError::Exited { pid: self.pid };
        }
        AttachError::Io {
            what: format!("{what} process {}", self.pid),
            source,
        }
    }

    /// Where the thread stopped: its instruction address, and the number of the
    /// system call it was in, if it was in one.
    pub fn position(&self) -> (u64, Option<u64>) {
        let in_call = (self.regs.orig_rax as i64) >= 0;
        (self.regs.rip, in_call.then_some(self.regs.orig_rax))
    }

    /// Copies `bytes` onto the thread's stack (below what it uses) and
    /// returns their address.
    pub fn push_data(&mut self, bytes: &[u8]) -> Result<u64, AttachError> {
        let at = (self.data_top - bytes.len() as u64) & !0xf;
        self.mem
            .write_all_at(bytes, at)
            .map_err(|e| self.io("writing to", e))?;
        self.data_top = at;
        Ok(at)
    }

    /// Reads a NUL-terminated string of the process at `at` (at most 4 KiB).
    pub fn read_string(&self, at: u64) -> String {
        let mut buf = vec![0u8; 4096];
        let n = self.mem.read_at(&mut buf, at).unwrap_or(0);
        buf.truncate(n);
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    /// Reads the 4-byte value at `at`.
    pub fn read_u32(&self, at: u64) -> Result<u32, AttachError> {
        let mut buf = [0u8; 4];
        self.mem
            .read_exact_at(&mut buf, at)
            .map_err(|e| self.io("reading from", e))?;
        Ok(u32::from_ne_bytes(buf))
    }

    /// Calls the function at `function` with up to six integer arguments on
    /// the borrowed thread and returns what it returned (`rax`).
    pub fn call(&mut self, function: u64, args: &[u64]) -> Result<u64, AttachError> {
        let mut regs = self.regs;
        // The return address 0, with the stack aligned as at a call.
        let sp = ((self.data_top - 256) & !0xf) - 8;
        self.mem
            .write_all_at(&0u64.to_ne_bytes(), sp)
            .map_err(|e| self.io("writing to", e))?;
        regs.rsp = sp;
        regs.rip = function;
        regs.rax = 0;
        regs.orig_rax = u64::MAX;
        let slots = [
            &mut regs.rdi,
            &mut regs.rsi,
            &mut regs.rdx,
            &mut regs.rcx,
            &mut regs.r8,
            &mut regs.r9,
        ];
        for (slot, &value) in slots.into_iter().zip(args) {
            *slot = value;
        }
        self.set_regs(&regs)?;
        let mut deliver = 0;
        loop {
            ptrace(libc::PTRACE_CONT, self.tid, 0, deliver as usize)
                .map_err(|e| self.io("resuming", e))?;
            match wait(self.tid, CALL_LIMIT).map_err(|e| self.io("waiting for", e))? {
                None => {
                    return Err(AttachError::Injection {
                        pid: self.pid,
                        reason: format!(
                            "a call into the process did not return within {} s",
                            CALL_LIMIT.as_secs()
                        ),
                    });
                }
                Some(Stop::Exited) => return Err(AttachError::Exited { pid: self.pid }),
                Some(Stop::Signal(0)) => deliver = 0,
                Some(Stop::Signal(sig)) => {
                    let mut now: libc::user_regs_struct =
                        // SAFETY: plain register struct, all-zero is valid.
                        unsafe { core::mem::zeroed() };
                    ptrace(
                        libc::PTRACE_GETREGS,
                        self.tid,
                        0,
                        (&mut now as *mut libc::user_regs_struct) as usize,
                    )
                    .map_err(|e| self.io("reading the registers of", e))?;
                    if sig == libc::SIGSEGV && now.rip == 0 {
                        return Ok(now.rax);
                    }
                    if [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE].contains(&sig) {
                        return Err(AttachError::Injection {
                            pid: self.pid,
                            reason: format!(
                                "a call into the process faulted (signal {sig} at {:#x})",
                                now.rip
                            ),
                        });
                    }
                    deliver = sig;
                }
            }
        }
    }

    fn set_regs(&self, regs: &libc::user_regs_struct) -> Result<(), AttachError> {
        ptrace(
            libc::PTRACE_SETREGS,
            self.tid,
            0,
            (regs as *const libc::user_regs_struct) as usize,
        )
        .map(|_| ())
        .map_err(|e| self.io("setting the registers of", e))
    }

    /// Restores every register and lets the thread go on from where it was.
    pub fn release(mut self) -> Result<(), AttachError> {
        self.restore()
    }

    fn restore(&mut self) -> Result<(), AttachError> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        let regs = self.regs;
        self.set_regs(&regs)?;
        let mut iov = libc::iovec {
            iov_base: self.xstate.as_mut_ptr().cast(),
            iov_len: self.xstate.len(),
        };
        ptrace(
            libc::PTRACE_SETREGSET,
            self.tid,
            NT_X86_XSTATE as usize,
            (&mut iov as *mut libc::iovec) as usize,
        )
        .map_err(|e| self.io("setting the extended registers of", e))?;
        ptrace(libc::PTRACE_DETACH, self.tid, 0, self.pending as usize)
            .map(|_| ())
            .map_err(|e| self.io("detaching from", e))
    }
}

impl Drop for Borrowed {
    /// A borrowed thread is always given back, even on an error path.
    fn drop(&mut self) {
        let _ = self.restore();
    }
}
