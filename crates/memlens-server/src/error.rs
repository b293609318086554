//! Errors: an API error is an HTTP status and one sentence; a serve error is why the
//! viewer could not start.

use std::fmt;
use std::net::IpAddr;

use memlens_heap::HeapError;

/// A request the API cannot answer: the status to send and one sentence saying why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status code (400 for a bad argument, 500 when the engine is gone).
    pub status: u16,
    /// One sentence naming the argument at fault.
    pub message: String,
}

impl ApiError {
    /// A bad argument (400).
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }

    /// A failure on our side (500).
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            status: 500,
            message: message.into(),
        }
    }
}

impl From<HeapError> for ApiError {
    /// The engine's query errors name the argument at fault: all are bad requests.
    fn from(error: HeapError) -> Self {
        ApiError::bad_request(error.to_string())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// Why the viewer could not start.
#[derive(Debug)]
pub enum ServeError {
    /// A non-loopback address without the explicit opt-in.
    NonLoopback {
        /// The address asked for.
        host: IpAddr,
    },
    /// The address could not be bound.
    Bind {
        /// The address asked for.
        address: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The async runtime could not start or the server failed while running.
    Io(std::io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::NonLoopback { host } => write!(
                f,
                "refusing to serve the viewer on `--host {host}`, which is reachable from other \
                 machines: add `--allow-remote` if you really mean to expose the trace"
            ),
            ServeError::Bind { address, source } => {
                write!(f, "cannot listen on {address}: {source}")
            }
            ServeError::Io(e) => write!(f, "the viewer's server failed: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}
