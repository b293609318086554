//! The FIFO the tool writes its stream into: made in a private temporary directory
//! (mode 0700, so no other user can open it), both removed on drop.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A FIFO in a fresh private directory.
pub(crate) struct Fifo {
    path: PathBuf,
    /// The private directory; dropping it removes the FIFO too.
    _dir: TempDir,
}

impl Fifo {
    /// Makes the directory and the FIFO.
    pub fn new() -> io::Result<Fifo> {
        let dir = tempfile::Builder::new()
            .prefix("memlens-refs-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let path = dir.path().join("refs.fifo");
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: mkfifo reads a NUL-terminated path that lives across the call.
        if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Fifo { path, _dir: dir })
    }

    /// The FIFO's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lets a reader blocked in `open` go (when the tool never opened its end):
    /// opens and closes the write side.
    pub fn release_reader(&self) {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn the_fifo_is_private_and_goes_away_on_drop() {
        let fifo = Fifo::new().unwrap();
        let path = fifo.path().to_path_buf();
        assert!(std::fs::metadata(&path).unwrap().file_type().is_fifo());
        let dir = path.parent().unwrap().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // No reader is waiting: releasing is harmless.
        fifo.release_reader();
        drop(fifo);
        assert!(!dir.exists());
    }
}
