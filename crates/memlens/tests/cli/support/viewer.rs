//! A running `memlens view --no-open --port 0` for the tests that query the viewer's
//! server: its URL, and plain HTTP/1.1 requests to it with the token. Killed when
//! dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use super::trace::memlens;

/// A running viewer.
pub struct Viewer {
    /// The `memlens view` process (its stderr is piped).
    pub child: Child,
    /// The URL it printed: `http://ADDRESS/TOKEN/`.
    pub url: String,
    /// Kept open so that the server never writes into a closed pipe.
    _stdout: std::io::Lines<BufReader<ChildStdout>>,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Viewer {
    /// Starts `memlens view TRACE --no-open --port 0 EXTRA…` and waits (a minute at
    /// most) for the URL it prints.
    pub fn start(trace: &Path, extra: &[&str]) -> Viewer {
        let mut child = memlens()
            .arg("view")
            .arg(trace)
            .args(["--no-open", "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("memlens view starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = loop {
            assert!(
                Instant::now() < deadline,
                "memlens view printed no URL in time"
            );
            let line = lines
                .next()
                .expect("memlens view printed no URL before exiting")
                .expect("memlens view's output is text");
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_owned();
            }
        };
        Viewer {
            child,
            url,
            _stdout: lines,
        }
    }

    /// `host:port` and the token.
    pub fn parts(&self) -> (String, String) {
        let rest = self.url.strip_prefix("http://").expect("an http URL");
        let (address, token) = rest.split_once('/').expect("a token in the URL");
        (address.to_owned(), token.trim_end_matches('/').to_owned())
    }

    /// The status and body of `GET /TOKEN/{target}`.
    pub fn get(&self, target: &str) -> (u16, String) {
        let (address, token) = self.parts();
        request(&address, &format!("/{token}/{target}"), &address)
    }
}

/// The status and body of `GET target` sent to `address` with `Host: host`.
pub fn request(address: &str, target: &str, host: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("the viewer listens");
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request is sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let code = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (code, body.to_owned())
}
