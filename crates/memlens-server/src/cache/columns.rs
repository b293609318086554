//! The cache lens's binary answers: a small self-describing container of
//! little-endian columns that the page maps onto typed arrays without copying.
//!
//! Layout: the 4 bytes `MLCB`, a `u32` length `J`, `J` bytes of JSON (the answer's
//! scalar fields plus `"columns": {name: [type, byte offset, element count]}`), zero
//! padding to a multiple of 8, then the columns, each starting at a multiple of 8.
//! Types are `u8`, `i8`, `u16`, `u32` and `f64`.

use serde_json::{Map, Value};

/// The container's first four bytes.
pub const MAGIC: &[u8; 4] = b"MLCB";

/// One column's values.
pub(crate) enum Column {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

impl Column {
    fn type_name(&self) -> &'static str {
        match self {
            Column::U8(_) => "u8",
            Column::I8(_) => "i8",
            Column::U16(_) => "u16",
            Column::U32(_) => "u32",
            Column::F64(_) => "f64",
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::I8(v) => v.len(),
            Column::U16(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Column::U8(v) => out.extend_from_slice(v),
            Column::I8(v) => out.extend(v.iter().map(|&x| x as u8)),
            Column::U16(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Column::U32(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Column::F64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        }
    }

    fn byte_len(&self) -> usize {
        let width = match self {
            Column::U8(_) | Column::I8(_) => 1,
            Column::U16(_) => 2,
            Column::U32(_) => 4,
            Column::F64(_) => 8,
        };
        self.len() * width
    }
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Packs `fields` (a JSON object) and `columns` into one container.
pub(crate) fn pack(mut fields: Map<String, Value>, columns: &[(&str, Column)]) -> Vec<u8> {
    // The header's length decides where the columns start, and the header holds the
    // offsets: write offsets relative to the column area, then shift once.
    let mut relative = Vec::with_capacity(columns.len());
    let mut at = 0usize;
    for (_, column) in columns {
        relative.push(at);
        at += pad8(column.byte_len());
    }
    let area = at;
    let describe = |base: usize| -> Value {
        let mut described = Map::new();
        for ((name, column), offset) in columns.iter().zip(&relative) {
            described.insert(
                (*name).to_owned(),
                Value::from(vec![
                    Value::from(column.type_name()),
                    Value::from(base + offset),
                    Value::from(column.len()),
                ]),
            );
        }
        Value::Object(described)
    };
    // The base depends on the header's length, which depends on the base's digits:
    // iterate until it is stable (twice at most in practice).
    let mut base = 0usize;
    let header = loop {
        fields.insert("columns".to_owned(), describe(base));
        let text = Value::Object(fields.clone()).to_string();
        let needed = pad8(8 + text.len());
        if needed == base {
            break text;
        }
        base = needed;
    };
    let mut out = Vec::with_capacity(base + area);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.resize(base, 0);
    for (_, column) in columns {
        column.write(&mut out);
        out.resize(pad8(out.len()), 0);
    }
    out
}

/// Reads a container back: its JSON header and the byte range of each column.
/// The page does this in TypeScript; the tests and benchmarks use this one.
pub fn unpack(bytes: &[u8]) -> Option<(Value, Map<String, Value>)> {
    if bytes.get(..4)? != MAGIC {
        return None;
    }
    let len = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) as usize;
    let header: Value = serde_json::from_slice(bytes.get(8..8 + len)?).ok()?;
    let columns = header.get("columns")?.as_object()?.clone();
    Some((header, columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_aligned_and_described() {
        let mut fields = Map::new();
        fields.insert("count".to_owned(), Value::from(3));
        let bytes = pack(
            fields,
            &[
                ("a", Column::U8(vec![1, 2, 3])),
                ("b", Column::F64(vec![1.5, -2.0])),
                ("c", Column::U16(vec![513])),
            ],
        );
        let (header, columns) = unpack(&bytes).unwrap();
        assert_eq!(header["count"], 3);
        let b = columns["b"].as_array().unwrap();
        assert_eq!(b[0], "f64");
        let offset = b[1].as_u64().unwrap() as usize;
        assert_eq!(offset % 8, 0);
        assert_eq!(b[2], 2);
        let x = f64::from_le_bytes(bytes[offset + 8..offset + 16].try_into().unwrap());
        assert_eq!(x, -2.0);
        let c = columns["c"].as_array().unwrap();
        let offset = c[1].as_u64().unwrap() as usize;
        assert_eq!(&bytes[offset..offset + 2], &[1, 2]);
        assert_eq!(bytes.len() % 8, 0);
    }

    #[test]
    fn foreign_bytes_are_refused() {
        assert!(unpack(b"nope").is_none());
        assert!(unpack(b"MLCB\xff\xff\xff\xff{}").is_none());
    }
}
