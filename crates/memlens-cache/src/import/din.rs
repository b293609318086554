//! Dinero `din` traces.
//!
//! One access per line: `LABEL ADDRESS [SIZE]`, fields separated by spaces or tabs.
//! LABEL is 0 (data read), 1 (data write), 2 (instruction fetch), 3 (escape: an
//! unknown access type) or 4 (escape: cache flush); ADDRESS is hexadecimal, with or
//! without `0x`; the optional SIZE (a Dinero IV extension) is decimal and defaults to
//! [`DinOptions::default_size`]. Escape records produce no reference and are counted
//! as ignored. Blank lines and lines starting with `#` are skipped.

use std::io::BufRead;

use crate::import::fields::{next_field, parse_decimal, parse_hex_prefixed};
use crate::import::{ImportCounts, ImportError, ImportLoop, OnError};
use crate::reference::{AccessKind, Reference};

/// How to read a din trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DinOptions {
    /// Keep label-2 lines as instruction-fetch references.
    pub keep_instructions: bool,
    /// The access size of lines without a SIZE field.
    pub default_size: u16,
    /// What to do after a malformed line.
    pub on_error: OnError,
}

impl Default for DinOptions {
    fn default() -> DinOptions {
        DinOptions {
            keep_instructions: false,
            default_size: 4,
            on_error: OnError::Skip,
        }
    }
}

/// Writes `reference` as one din line with its size (a modify becomes a write).
pub fn write_line(out: &mut impl std::io::Write, reference: &Reference) -> std::io::Result<()> {
    let label = match reference.kind {
        AccessKind::Read => 0,
        AccessKind::Write | AccessKind::Modify => 1,
        AccessKind::Instruction => 2,
    };
    writeln!(out, "{label} {:x} {}", reference.addr, reference.size)
}

/// Parses one line. `Ok(None)` is a well-formed line without a reference.
pub fn parse_line(line: &[u8], options: &DinOptions) -> Result<Option<Reference>, &'static str> {
    let Some((label, rest)) = next_field(line) else {
        return Ok(None);
    };
    if label.starts_with(b"#") {
        return Ok(None);
    }
    let kind = match label {
        b"0" => Some(AccessKind::Read),
        b"1" => Some(AccessKind::Write),
        b"2" => Some(AccessKind::Instruction),
        b"3" | b"4" => None,
        _ => return Err("expected a label 0 (read), 1 (write), 2 (fetch), 3 or 4 (escape)"),
    };
    let (addr, rest) = next_field(rest).ok_or("expected a hexadecimal address after the label")?;
    let addr =
        parse_hex_prefixed(addr).ok_or("expected a hexadecimal address of at most 16 digits")?;
    let (size, rest) = match next_field(rest) {
        Some((size, rest)) => {
            let size = parse_decimal(size).ok_or("expected a decimal access size")?;
            if size == 0 {
                return Err("the access size is 0");
            }
            (
                u16::try_from(size).map_err(|_| "the access size is larger than 65535 bytes")?,
                rest,
            )
        }
        None => (options.default_size.max(1), rest),
    };
    if next_field(rest).is_some() {
        return Err("unexpected text after LABEL ADDRESS SIZE");
    }
    Ok(match kind {
        Some(AccessKind::Instruction) if !options.keep_instructions => None,
        Some(kind) => Some(Reference::new(kind, addr, size)),
        None => None,
    })
}

/// A streaming reader of din traces.
#[derive(Debug)]
pub struct DinReader<R> {
    inner: ImportLoop<R>,
    options: DinOptions,
}

impl<R: BufRead> DinReader<R> {
    /// Starts reading `reader`.
    pub fn new(reader: R, options: DinOptions) -> DinReader<R> {
        DinReader {
            inner: ImportLoop::new(reader, options.on_error),
            options,
        }
    }

    /// Returns the counts so far.
    pub fn counts(&self) -> ImportCounts {
        self.inner.counts()
    }
}

impl<R: BufRead> Iterator for DinReader<R> {
    type Item = Result<Reference, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        let options = self.options;
        self.inner.next_with(|text| parse_line(text, &options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_labels_addresses_and_optional_sizes() {
        let text = "0 7fff0010\n1 0x1000 8\n2 400000\n\n# comment\n4 0\n0 zz\n3 10\n0 20 4 extra\n";
        let mut reader = DinReader::new(text.as_bytes(), DinOptions::default());
        let items: Vec<_> = reader.by_ref().collect();
        let refs: Vec<Reference> = items.iter().filter_map(|i| i.clone().ok()).collect();
        assert_eq!(
            refs,
            vec![Reference::read(0x7fff_0010, 4), Reference::write(0x1000, 8)]
        );
        let errors: Vec<String> = items
            .iter()
            .filter_map(|i| i.clone().err())
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            errors,
            vec![
                "7: expected a hexadecimal address of at most 16 digits: `0 zz`",
                "9: unexpected text after LABEL ADDRESS SIZE: `0 20 4 extra`",
            ]
        );
        assert_eq!(reader.counts().ignored, 5);
    }

    #[test]
    fn written_lines_parse_back() {
        let options = DinOptions {
            keep_instructions: true,
            ..DinOptions::default()
        };
        for kind in [AccessKind::Read, AccessKind::Write, AccessKind::Instruction] {
            let reference = Reference::new(kind, 0x7fff_0010, 8);
            let mut line = Vec::new();
            write_line(&mut line, &reference).unwrap();
            assert_eq!(
                parse_line(line.trim_ascii_end(), &options),
                Ok(Some(reference))
            );
        }
    }

    #[test]
    fn instruction_fetches_are_kept_on_request_and_stop_ends_the_import() {
        let options = DinOptions {
            keep_instructions: true,
            default_size: 1,
            on_error: OnError::Stop,
        };
        let items: Vec<_> = DinReader::new("2 40\n9 1\n0 1\n".as_bytes(), options).collect();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0],
            Ok(Reference::new(AccessKind::Instruction, 0x40, 1))
        );
        assert!(
            items[1]
                .as_ref()
                .unwrap_err()
                .to_string()
                .starts_with("2: expected a label")
        );
    }
}
