//! The user's program as the recorders start it: found as the shell would find
//! it, left to handle Ctrl-C itself, and its end turned into an exit code that
//! memlens passes on.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use crate::RecordError;

/// Finds `program` as the shell would: a path with a directory as it is, a bare
/// name as the first executable file of that name on `PATH`. `None` when there is
/// no such file.
pub fn find_on_path(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        // Not searched, and not resolved against the current folder: starting it
        // says whether it may run.
        return program.is_file().then(|| program.to_path_buf());
    }
    which::which_global(program).ok()
}

/// [`find_on_path`], or the usage error that names the program.
///
/// # Errors
///
/// [`RecordError::ProgramNotFound`].
pub fn find_program(program: &Path) -> Result<PathBuf, RecordError> {
    find_on_path(program).ok_or_else(|| RecordError::ProgramNotFound {
        program: program.to_path_buf(),
    })
}

/// Ctrl-C and Ctrl-\ go to the program (it is in our process group); memlens
/// ignores them so it can finish the trace and report after the program ends.
pub fn leave_signals_to_the_program() {
    // SAFETY: `signal` with `SIG_IGN` installs no handler of ours; it only changes
    // how this process treats SIGINT and SIGQUIT, which nothing else here relies on.
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
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    #[test]
    fn a_signal_is_128_plus_its_number_and_a_code_is_itself() {
        // Wait statuses as the kernel encodes them: the code in the second byte,
        // the signal in the low seven bits.
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGKILL)), 137);
    }

    #[test]
    fn a_path_with_a_folder_is_not_searched() {
        assert_eq!(find_on_path(Path::new("./no-such-program-here")), None);
        let missing = find_program(Path::new("/nonexistent/memlens-test-program"));
        assert!(matches!(missing, Err(RecordError::ProgramNotFound { .. })));
    }

    #[test]
    fn a_bare_name_is_found_on_path() {
        let sh = find_on_path(Path::new("sh")).expect("sh is on PATH");
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
    }
}
