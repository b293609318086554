//! The variadic exec functions `execl`, `execle` and `execlp`.
//!
//! glibc's own versions call its internal `execve` directly, so without
//! these the recorder would not flush the trace or hand over the output file
//! before such an exec. Stable Rust cannot define a C variadic function, so
//! each entry point is a naked function that stores the six integer argument
//! registers of the System V x86-64 calling convention next to each other
//! and passes them, with a pointer to the arguments the caller left on the
//! stack, to [`exec_variadic`], which walks them as `va_arg` would (the
//! arguments of `execl` are all pointers, so integer registers carry them)
//! and calls the recorder's `execv`, `execvp` or `execve`.

use core::ffi::{c_char, c_int};

const EXECL: u32 = 0;
const EXECLP: u32 = 1;
const EXECLE: u32 = 2;

/// The most arguments accepted (a C program passing more gets `E2BIG`).
const MAX_ARGS: usize = 4096;

/// Reads the `i`-th variadic-position argument: registers first, then the stack.
///
/// # Safety
/// `regs` points at six saved registers, `stack` at the caller's stack
/// arguments, and the caller passed at least `i + 1` arguments.
unsafe fn arg(regs: *const usize, stack: *const usize, i: usize) -> usize {
    // SAFETY: per the contract above.
    unsafe {
        if i < 6 {
            *regs.add(i)
        } else {
            *stack.add(i - 6)
        }
    }
}

/// Collects the argument list and execs. `regs[0]` is the path or file,
/// `regs[1]` the first argument of the new program's argv.
extern "C" fn exec_variadic(regs: *const usize, stack: *const usize, which: u32) -> c_int {
    let mut argv: Vec<*const c_char> = Vec::with_capacity(16);
    let mut i = 1;
    loop {
        if argv.len() > MAX_ARGS {
            // SAFETY: errno location is valid.
            unsafe { *libc::__errno_location() = libc::E2BIG };
            return -1;
        }
        // SAFETY: the caller's list is NULL-terminated; we stop at the NULL.
        let a = unsafe { arg(regs, stack, i) } as *const c_char;
        argv.push(a);
        i += 1;
        if a.is_null() {
            break;
        }
    }
    // SAFETY: regs[0] is the path or file argument.
    let path = unsafe { arg(regs, stack, 0) } as *const c_char;
    let argv_ptr = argv.as_ptr();
    // SAFETY: forwarding to the recorder's exec hooks with a NULL-terminated argv.
    unsafe {
        match which {
            EXECLP => crate::lifecycle::execvp(path, argv_ptr),
            EXECLE => {
                // For execle the environment follows the terminating NULL.
                let envp = arg(regs, stack, i) as *const *const c_char;
                crate::lifecycle::execve(path, argv_ptr, envp)
            }
            _ => crate::lifecycle::execv(path, argv_ptr),
        }
    }
}

macro_rules! variadic_entry {
    ($name:ident, $which:expr) => {
        /// A variadic exec function (see the module documentation).
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                // At entry rsp ≡ 8 (mod 16); 56 bytes keep the call aligned.
                "sub rsp, 56",
                "mov [rsp], rdi",
                "mov [rsp + 8], rsi",
                "mov [rsp + 16], rdx",
                "mov [rsp + 24], rcx",
                "mov [rsp + 32], r8",
                "mov [rsp + 40], r9",
                "mov rdi, rsp",
                // The caller's stack arguments start above our 56 bytes and
                // the return address.
                "lea rsi, [rsp + 64]",
                "mov edx, {which}",
                "call {helper}",
                "add rsp, 56",
                "ret",
                which = const $which,
                helper = sym exec_variadic,
            )
        }
    };
}

variadic_entry!(execl, EXECL);
variadic_entry!(execlp, EXECLP);
variadic_entry!(execle, EXECLE);
