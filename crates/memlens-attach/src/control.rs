//! The control socket of an attached session: an abstract Unix socket named
//! after the process (`memlens-attach-PID`), so it needs no file, vanishes
//! with its owner, and exists once per process — a second `memlens attach`
//! of the same process cannot bind it. Two kinds of peers connect: the
//! recorder inside the process (only that process, checked by
//! `SO_PEERCRED`), which receives the open trace file (`SCM_RIGHTS`) and
//! keeps the connection as its stop signal; and `memlens detach PID` (only
//! the same user or root), which asks for the stop.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::time::Duration;

use crate::error::AttachError;

/// The socket's abstract name for process `pid`.
pub fn name(pid: u32) -> String {
    format!("memlens-attach-{pid}")
}

/// Binds the session's socket.
///
/// # Errors
///
/// [`AttachError::AlreadyAttached`] when another session holds it.
pub fn listen(pid: u32) -> Result<UnixListener, AttachError> {
    let addr = SocketAddr::from_abstract_name(name(pid)).map_err(|source| AttachError::Io {
        what: "naming the control socket".into(),
        source,
    })?;
    UnixListener::bind_addr(&addr).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            AttachError::AlreadyAttached { pid }
        } else {
            AttachError::Io {
                what: "binding the control socket".into(),
                source,
            }
        }
    })
}

/// The pid and uid of the peer of `stream`.
pub fn peer(stream: &UnixStream) -> Option<(u32, u32)> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = core::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED into a local ucred of the given length.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (r == 0).then_some((cred.pid as u32, cred.uid))
}

/// Sends the descriptor `fd` (with one byte) over `stream`.
pub fn send_fd(stream: &UnixStream, fd: i32) -> std::io::Result<()> {
    let mut byte = [b'T'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 4];
    // SAFETY: building a one-descriptor SCM_RIGHTS message in local buffers
    // sized by CMSG_SPACE, then sendmsg on our socket.
    unsafe {
        let mut msg: libc::msghdr = core::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(core::mem::size_of::<i32>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(core::mem::size_of::<i32>() as u32) as usize;
        (libc::CMSG_DATA(cmsg) as *mut i32).write_unaligned(fd);
        if libc::sendmsg(stream.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads one line from `stream` within `limit` (empty at the end of the connection).
pub fn read_line(stream: &UnixStream, limit: Duration) -> String {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(limit));
    let mut line = String::new();
    let _ = BufReader::new(stream).read_line(&mut line);
    line.trim_end().to_string()
}

/// `memlens detach PID`: asks the session recording `pid` to stop and
/// returns its answer (`detached PATH`).
///
/// # Errors
///
/// [`AttachError::NotAttached`] when no session records `pid`.
pub fn request_detach(pid: u32) -> Result<String, AttachError> {
    let addr = SocketAddr::from_abstract_name(name(pid)).map_err(|source| AttachError::Io {
        what: "naming the control socket".into(),
        source,
    })?;
    let mut stream =
        UnixStream::connect_addr(&addr).map_err(|_| AttachError::NotAttached { pid })?;
    stream
        .write_all(b"detach\n")
        .map_err(|source| AttachError::Io {
            what: format!("asking the session of process {pid} to stop"),
            source,
        })?;
    let answer = read_line(&stream, Duration::from_secs(30));
    if answer.is_empty() {
        return Err(AttachError::NotAttached { pid });
    }
    Ok(answer)
}
