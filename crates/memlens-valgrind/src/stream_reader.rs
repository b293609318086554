//! The IO loop around the [`Decoder`]: reads a stream (the FIFO the tool writes)
//! with a large buffer and feeds each piece to the decoder, until the writer closes
//! its end. Everything it knows about the protocol, it leaves to the decoder.

use std::io::{self, Read};

use crate::decoder::{Decoder, RecordSink};

/// How much one read may take: the tool writes 1 MiB at a time, and the FIFO
/// holds less, so a read rarely fills it.
const READ_BYTES: usize = 4 << 20;

/// Reads `input` to its end through `decoder` into `sink`, calling `after_read`
/// after every read (the last one too) with the sink, for progress reports.
///
/// # Errors
///
/// The first read error (interrupted reads are retried), decode error or sink
/// error; and [`DecodeError::EndsInsideWord`](crate::DecodeError::EndsInsideWord) or
/// [`DecodeError::EndsInsideRecord`](crate::DecodeError::EndsInsideRecord) when the
/// stream stops inside one.
pub fn read_stream<S>(
    mut input: impl Read,
    decoder: &mut Decoder,
    sink: &mut S,
    after_read: &mut dyn FnMut(&S),
) -> Result<(), S::Error>
where
    S: RecordSink,
    S::Error: From<io::Error>,
{
    let mut buffer = vec![0u8; READ_BYTES];
    loop {
        let n = match input.read(&mut buffer) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            decoder.finish()?;
            after_read(sink);
            return Ok(());
        }
        decoder.feed(&buffer[..n], sink)?;
        after_read(sink);
    }
}
