//! Running a process to completion under a time limit and collecting what it
//! printed.
//!
//! The process starts in a new process group, so when the limit passes the
//! whole tree (`memlens record`, the program it runs and any children) is
//! killed and the test fails with what was printed so far. Its output is read
//! by two threads while the test waits, so a chatty program never blocks on a
//! full pipe.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The limit for every process a test starts, unless the test says otherwise.
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

/// A process that has finished.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The exit status as a shell reports it: the exit code, or 128 + N when
    /// the process was killed by signal N.
    pub code: i32,
    /// Everything written to standard output.
    pub stdout: String,
    /// Everything written to standard error.
    pub stderr: String,
    /// Wall time from start to exit.
    pub elapsed: Duration,
}

/// Runs `cmd` to completion under [`TIME_LIMIT`]; `what` names it in failures.
pub fn run(cmd: &mut Command, what: &str) -> Finished {
    run_with_timeout(cmd, TIME_LIMIT, what)
}

fn read_all(mut pipe: impl Read + Send + 'static, tx: mpsc::Sender<(bool, Vec<u8>)>, is_err: bool) {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        // A read error only shortens the captured text; the status decides.
        pipe.read_to_end(&mut buf).ok();
        tx.send((is_err, buf)).ok();
    });
}

fn kill_group(pid: u32) {
    // SAFETY: kill has no memory-safety preconditions; the negative pid
    // names the process group this test created for the child.
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
}

/// A process started by [`spawn`], bounded by its time limit.
#[derive(Debug)]
pub struct Running {
    child: Child,
    output: mpsc::Receiver<(bool, Vec<u8>)>,
    start: Instant,
    limit: Duration,
    what: String,
}

/// Starts `cmd` in a new process group with its output captured; `what`
/// names it in failures. Finish it with [`Running::wait`].
pub fn spawn(cmd: &mut Command, limit: Duration, what: &str) -> Running {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let (tx, output) = mpsc::channel();
    read_all(child.stdout.take().expect("piped"), tx.clone(), false);
    read_all(child.stderr.take().expect("piped"), tx, true);
    Running {
        child,
        output,
        start,
        limit,
        what: what.to_string(),
    }
}

impl Running {
    /// The process id (to attach to it).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to finish, killing its process group and
    /// failing the test when the time limit passes first.
    pub fn wait(mut self) -> Finished {
        let (limit, what) = (self.limit, &self.what);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if self.start.elapsed() < limit => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => {
                    kill_group(self.child.id());
                    self.child.wait().ok();
                    panic!("{what} did not finish within {limit:?} and was killed");
                }
                Err(e) => panic!("cannot wait for {what}: {e}"),
            }
        };
        // Children that outlive the process may hold the pipes open: wait
        // for them within the same limit.
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        for _ in 0..2 {
            let left = limit.saturating_sub(self.start.elapsed());
            match self.output.recv_timeout(left) {
                Ok((true, bytes)) => stderr = bytes,
                Ok((false, bytes)) => stdout = bytes,
                Err(_) => {
                    kill_group(self.child.id());
                    panic!("the children of {what} kept its output open past {limit:?}");
                }
            }
        }
        Finished {
            code: status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            elapsed: self.start.elapsed(),
        }
    }
}

/// Runs `cmd` to completion, killing its process group and failing the test
/// when it takes longer than `limit`.
pub fn run_with_timeout(cmd: &mut Command, limit: Duration, what: &str) -> Finished {
    spawn(cmd, limit, what).wait()
}
