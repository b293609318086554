//! Valgrind Lackey `--trace-mem=yes` traces.
//!
//! Lackey prints one access per line: an instruction fetch as `I  ADDR,SIZE` and a
//! data load, store or modify as ` L ADDR,SIZE`, ` S ADDR,SIZE`, ` M ADDR,SIZE`, with
//! the address in hexadecimal without a prefix and the size in decimal. Valgrind's own
//! messages (`==PID== …`, `--PID-- …`) and blank lines are skipped. Instruction
//! fetches are dropped unless [`LackeyOptions::keep_instructions`] is set.

use std::io::BufRead;

use crate::import::fields::{parse_decimal, parse_hex};
use crate::import::{ImportCounts, ImportError, ImportLoop, OnError};
use crate::reference::{AccessKind, Reference};

/// How to read a Lackey trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LackeyOptions {
    /// Keep `I` lines as [`AccessKind::Instruction`] references.
    pub keep_instructions: bool,
    /// What to do after a malformed line.
    pub on_error: OnError,
}

/// Writes `reference` as one Lackey line (the inverse of [`parse_line`]).
pub fn write_line(out: &mut impl std::io::Write, reference: &Reference) -> std::io::Result<()> {
    let lead = if reference.kind == AccessKind::Instruction {
        ""
    } else {
        " "
    };
    writeln!(
        out,
        "{lead}{} {:08x},{}",
        reference.kind.lackey_letter(),
        reference.addr,
        reference.size
    )
}

/// Parses one line. `Ok(None)` is a well-formed line without a reference.
pub fn parse_line(line: &[u8], keep_instructions: bool) -> Result<Option<Reference>, &'static str> {
    let start = match line.iter().position(|&b| b != b' ' && b != b'\t') {
        Some(start) => start,
        None => return Ok(None),
    };
    let text = &line[start..];
    if text.starts_with(b"==") || text.starts_with(b"--") {
        return Ok(None);
    }
    let kind = match text[0] {
        b'I' => AccessKind::Instruction,
        b'L' => AccessKind::Read,
        b'S' => AccessKind::Write,
        b'M' => AccessKind::Modify,
        _ => return Err("expected an access letter I, L, S or M"),
    };
    let rest = &text[1..];
    let operand_start = rest
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .filter(|&at| at > 0)
        .ok_or("expected a space and ADDRESS,SIZE after the access letter")?;
    let operand = &rest[operand_start..];
    let operand = match operand.iter().rposition(|&b| b != b' ' && b != b'\t') {
        Some(last) => &operand[..=last],
        None => operand,
    };
    let comma = operand
        .iter()
        .position(|&b| b == b',')
        .ok_or("expected ADDRESS,SIZE")?;
    let addr = parse_hex(&operand[..comma])
        .ok_or("expected a hexadecimal address of at most 16 digits")?;
    let size = parse_decimal(&operand[comma + 1..]).ok_or("expected a decimal access size")?;
    if size == 0 {
        return Err("the access size is 0");
    }
    let size = u16::try_from(size).map_err(|_| "the access size is larger than 65535 bytes")?;
    if kind == AccessKind::Instruction && !keep_instructions {
        return Ok(None);
    }
    Ok(Some(Reference::new(kind, addr, size)))
}

/// A streaming reader of Lackey traces.
#[derive(Debug)]
pub struct LackeyReader<R> {
    inner: ImportLoop<R>,
    options: LackeyOptions,
}

impl<R: BufRead> LackeyReader<R> {
    /// Starts reading `reader`.
    pub fn new(reader: R, options: LackeyOptions) -> LackeyReader<R> {
        LackeyReader {
            inner: ImportLoop::new(reader, options.on_error),
            options,
        }
    }

    /// Returns the counts so far.
    pub fn counts(&self) -> ImportCounts {
        self.inner.counts()
    }
}

impl<R: BufRead> Iterator for LackeyReader<R> {
    type Item = Result<Reference, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        let keep = self.options.keep_instructions;
        self.inner.next_with(|text| parse_line(text, keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "==123== Lackey, an example Valgrind tool\n\
I  0401ab70,3\n \
S 1fff000688,8\n \
L 00159970,8\n\r\n \
M 0010915a,4\n\
garbage here\n \
L 001358e0,16\n";

    #[test]
    fn reads_data_references_and_skips_headers_and_instructions() {
        let mut reader = LackeyReader::new(SAMPLE.as_bytes(), LackeyOptions::default());
        let items: Vec<_> = reader.by_ref().collect();
        let refs: Vec<Reference> = items.iter().filter_map(|i| i.clone().ok()).collect();
        assert_eq!(
            refs,
            vec![
                Reference::write(0x1f_ff00_0688, 8),
                Reference::read(0x15_9970, 8),
                Reference::new(AccessKind::Modify, 0x10_915a, 4),
                Reference::read(0x13_58e0, 16),
            ]
        );
        let errors: Vec<String> = items
            .iter()
            .filter_map(|i| i.clone().err())
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            errors,
            vec!["7: expected an access letter I, L, S or M: `garbage here`"]
        );
        let counts = reader.counts();
        assert_eq!(
            (counts.lines, counts.references, counts.malformed),
            (8, 4, 1)
        );
    }

    #[test]
    fn written_lines_parse_back() {
        for kind in [
            AccessKind::Read,
            AccessKind::Write,
            AccessKind::Modify,
            AccessKind::Instruction,
        ] {
            let reference = Reference::new(kind, 0x1f_ff00_0688, 16);
            let mut line = Vec::new();
            write_line(&mut line, &reference).unwrap();
            assert_eq!(parse_line(line.trim_ascii_end(), true), Ok(Some(reference)));
        }
    }

    #[test]
    fn keeps_instructions_when_asked_and_stops_when_asked() {
        let options = LackeyOptions {
            keep_instructions: true,
            on_error: OnError::Stop,
        };
        let items: Vec<_> = LackeyReader::new(SAMPLE.as_bytes(), options).collect();
        assert_eq!(
            items[0],
            Ok(Reference::new(AccessKind::Instruction, 0x0401_ab70, 3))
        );
        assert_eq!(
            items.len(),
            5,
            "four references, then the error, then nothing"
        );
        assert_eq!(items[4].as_ref().unwrap_err().line, 7);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let cases: [(&[u8], &str); 8] = [
            (b" L 12345", "expected ADDRESS,SIZE"),
            (b" L zz,8", "hexadecimal address"),
            (b" L 10,", "decimal access size"),
            (b" L 10,0", "size is 0"),
            (b" L 10,70000", "larger than 65535"),
            (b"L10,8", "expected a space"),
            (b" L 11111111111111111,8", "at most 16 digits"),
            (b" X 10,8", "access letter"),
        ];
        for (line, expected) in cases {
            let err = parse_line(line, false).unwrap_err();
            assert!(
                err.contains(expected),
                "{:?}: {err}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn overlong_lines_are_reported_without_being_kept() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\n L 10,8\n");
        let items: Vec<_> = LackeyReader::new(&input[..], LackeyOptions::default()).collect();
        assert!(
            items[0]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("longer than 4096")
        );
        assert_eq!(items[1], Ok(Reference::read(0x10, 8)));
    }
}
