//! Line-at-a-time reading with a bounded buffer, shared by the text importers.
//!
//! Lines longer than [`MAX_LINE`] bytes are reported as too long and skipped without
//! being held in memory, so a file without newlines cannot exhaust memory.

use std::io::{self, BufRead, Read};

/// The longest line kept; longer ones are reported as malformed.
pub(crate) const MAX_LINE: usize = 4096;

/// One line read from the input.
pub(crate) enum Line<'a> {
    /// A line, without its line terminator.
    Text(&'a [u8]),
    /// A line longer than [`MAX_LINE`]; its start is given.
    TooLong(&'a [u8]),
}

/// Reads lines and counts them.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    buffer: Vec<u8>,
    /// The number of the line last returned (1-based).
    pub number: u64,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R) -> LineReader<R> {
        LineReader {
            reader,
            buffer: Vec::with_capacity(256),
            number: 0,
        }
    }

    /// Returns the next line, `None` at the end of the input.
    pub fn next_line(&mut self) -> Option<io::Result<Line<'_>>> {
        self.buffer.clear();
        let read = (&mut self.reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.buffer);
        match read {
            Err(e) => return Some(Err(e)),
            Ok(0) => return None,
            Ok(_) => {}
        }
        self.number += 1;
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
            return Some(Ok(Line::Text(&self.buffer)));
        }
        if self.buffer.len() <= MAX_LINE {
            // The last line of the input, without a newline.
            return Some(Ok(Line::Text(&self.buffer)));
        }
        if let Err(e) = self.skip_rest_of_line() {
            return Some(Err(e));
        }
        Some(Ok(Line::TooLong(&self.buffer[..64])))
    }

    fn skip_rest_of_line(&mut self) -> io::Result<()> {
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(());
            }
            match available.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    self.reader.consume(at + 1);
                    return Ok(());
                }
                None => {
                    let len = available.len();
                    self.reader.consume(len);
                }
            }
        }
    }
}
