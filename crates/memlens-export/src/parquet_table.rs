//! One Parquet file written as a stream of rows: the columns of the rows appended so
//! far are buffered, and every [`GROUP_ROWS`] rows they are written out as one
//! zstd-compressed row group, so a table of any length takes the memory of one row
//! group. The file is written under a hidden `.NAME.partial` name (skipped by DuckDB's
//! `*.parquet` globs and by Spark, which ignores names starting with `.`) and renamed
//! to `NAME` when it is complete, so a failed export leaves no table that looks whole.
//!
//! Built on the `parquet` crate's low-level column writers (no Arrow): a table is a
//! list of [`Col`]umns, each of one [`Kind`], and a row is a slice of [`Cell`]s in the
//! columns' order.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use crate::ExportError;
use crate::parquet::io_error;

/// Rows per row group: large enough for engines to read efficiently, small enough
/// that one group's buffers stay around a hundred MB for the widest table.
pub const GROUP_ROWS: usize = 1 << 20;

/// zstd's level: level 1 compresses these integer columns nearly as well as 3, faster.
const ZSTD_LEVEL: i32 = 1;

/// A column's Parquet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `boolean`.
    Bool,
    /// `binary (STRING)`: UTF-8 text.
    Str,
    /// A list of strings (`LIST<STRING>`).
    StrList,
}

/// How a column is declared.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Whether it may hold NULL.
    pub nullable: bool,
    /// How its values are encoded.
    pub encoding: Enc,
}

/// A column's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    /// A dictionary, or plain values when the dictionary grows too large: for columns
    /// of few distinct values (threads, sizes, stacks, names).
    Dict,
    /// Plain values (for values nearly all distinct that follow no order: addresses).
    Plain,
    /// Delta-binary-packed integers (for times and sequence numbers, which grow).
    Delta,
}

impl Col {
    /// A column that holds no NULL, dictionary-encoded.
    pub const fn new(name: &'static str, kind: Kind) -> Col {
        Col {
            name,
            kind,
            nullable: false,
            encoding: Enc::Dict,
        }
    }

    /// The same column, allowed to hold NULL.
    pub const fn nullable(mut self) -> Col {
        self.nullable = true;
        self
    }

    /// The same column, plain-encoded.
    pub const fn plain(mut self) -> Col {
        self.encoding = Enc::Plain;
        self
    }

    /// The same column, delta-encoded.
    pub const fn delta(mut self) -> Col {
        self.encoding = Enc::Delta;
        self
    }

    /// Its declaration in Parquet's message-type syntax.
    fn declaration(&self) -> String {
        let repetition = if self.nullable {
            "optional"
        } else {
            "required"
        };
        let name = self.name;
        match self.kind {
            Kind::I32 => format!("{repetition} int32 {name};"),
            Kind::I64 => format!("{repetition} int64 {name};"),
            Kind::Bool => format!("{repetition} boolean {name};"),
            Kind::Str => format!("{repetition} binary {name} (STRING);"),
            Kind::StrList => format!(
                "{repetition} group {name} (LIST) {{ repeated group list {{ required binary element (STRING); }} }}"
            ),
        }
    }

    /// The path of its leaf column.
    fn path(&self) -> ColumnPath {
        match self.kind {
            Kind::StrList => ColumnPath::new(vec![
                self.name.to_owned(),
                "list".to_owned(),
                "element".to_owned(),
            ]),
            _ => ColumnPath::from(self.name),
        }
    }
}

/// One value of a row.
#[derive(Debug, Clone)]
pub enum Cell<'a> {
    /// NULL (only in a nullable column).
    Null,
    /// An `int32`.
    I32(i32),
    /// An `int64`.
    I64(i64),
    /// A `boolean`.
    Bool(bool),
    /// Text.
    Str(&'a str),
    /// Text already made a Parquet value (cheap to clone: for the few names repeated
    /// on every row).
    Bytes(&'a ByteArray),
    /// A list of strings.
    List(&'a [String]),
}

/// The buffered values of one column.
enum Values {
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Bytes(Vec<ByteArray>),
}

/// One column's buffer: its values (NULLs left out) and its levels.
struct Buffer {
    col: Col,
    values: Values,
    defs: Vec<i16>,
    reps: Vec<i16>,
}

impl Buffer {
    fn new(col: Col) -> Buffer {
        let values = match col.kind {
            Kind::I32 => Values::I32(Vec::new()),
            Kind::I64 => Values::I64(Vec::new()),
            Kind::Bool => Values::Bool(Vec::new()),
            Kind::Str | Kind::StrList => Values::Bytes(Vec::new()),
        };
        Buffer {
            col,
            values,
            defs: Vec::new(),
            reps: Vec::new(),
        }
    }

    /// Appends `cell`; panics when it does not fit the column (a bug of the caller's
    /// table, which the tests catch).
    fn push(&mut self, cell: &Cell<'_>) {
        let name = self.col.name;
        if let Cell::Null = cell {
            assert!(self.col.nullable, "NULL in required column {name}");
            self.defs.push(0);
            if self.col.kind == Kind::StrList {
                self.reps.push(0);
            }
            return;
        }
        if self.col.nullable {
            self.defs.push(1);
        }
        match (&mut self.values, cell) {
            (Values::I32(v), Cell::I32(x)) => v.push(*x),
            (Values::I64(v), Cell::I64(x)) => v.push(*x),
            (Values::Bool(v), Cell::Bool(x)) => v.push(*x),
            (Values::Bytes(v), Cell::Str(s)) if self.col.kind == Kind::Str => {
                v.push(ByteArray::from(*s));
            }
            (Values::Bytes(v), Cell::Bytes(b)) if self.col.kind == Kind::Str => {
                v.push((*b).clone());
            }
            (Values::Bytes(v), Cell::List(items)) => {
                // Levels: the group's own (when nullable) plus one for the repeated
                // group; an empty list stops at the group's level.
                let present = i16::from(self.col.nullable);
                if self.col.nullable {
                    self.defs.pop();
                }
                if items.is_empty() {
                    self.defs.push(present);
                    self.reps.push(0);
                }
                for (i, item) in items.iter().enumerate() {
                    self.defs.push(present + 1);
                    self.reps.push(i16::from(i > 0));
                    v.push(ByteArray::from(item.as_str()));
                }
            }
            _ => panic!("{cell:?} does not fit column {name} ({:?})", self.col.kind),
        }
    }

    fn clear(&mut self) {
        match &mut self.values {
            Values::I32(v) => v.clear(),
            Values::I64(v) => v.clear(),
            Values::Bool(v) => v.clear(),
            Values::Bytes(v) => v.clear(),
        }
        self.defs.clear();
        self.reps.clear();
    }
}

/// A Parquet file being written a row at a time.
pub struct Table {
    path: PathBuf,
    partial: PathBuf,
    writer: Option<SerializedFileWriter<BufWriter<File>>>,
    buffers: Vec<Buffer>,
    rows: usize,
    total: u64,
}

impl Table {
    /// Starts the table `message` with `cols` in the file `path` (written under its
    /// partial name until [`Table::finish`]).
    pub fn create(path: &Path, message: &str, cols: &[Col]) -> Result<Table, ExportError> {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let partial = path.with_file_name(format!(".{name}.partial"));
        let fields: Vec<String> = cols.iter().map(Col::declaration).collect();
        let schema = parse_message_type(&format!("message {message} {{ {} }}", fields.join(" ")))
            .map_err(|e| parquet_error(path, e))?;
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_created_by(format!("memlens {}", env!("CARGO_PKG_VERSION")))
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(ZSTD_LEVEL).map_err(|e| parquet_error(path, e))?,
            ));
        for col in cols {
            props = match col.encoding {
                Enc::Dict => props,
                Enc::Plain => props.set_column_dictionary_enabled(col.path(), false),
                Enc::Delta => props
                    .set_column_dictionary_enabled(col.path(), false)
                    .set_column_encoding(col.path(), Encoding::DELTA_BINARY_PACKED),
            };
        }
        let file = File::create(&partial).map_err(|e| io_error(path, e))?;
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            Arc::new(schema),
            Arc::new(props.build()),
        )
        .map_err(|e| parquet_error(path, e))?;
        Ok(Table {
            path: path.to_path_buf(),
            partial,
            writer: Some(writer),
            buffers: cols.iter().map(|c| Buffer::new(*c)).collect(),
            rows: 0,
            total: 0,
        })
    }

    /// Appends one row (one cell per column, in the columns' order), writing a row
    /// group when [`GROUP_ROWS`] rows are buffered.
    pub fn row(&mut self, cells: &[Cell<'_>]) -> Result<(), ExportError> {
        assert_eq!(
            cells.len(),
            self.buffers.len(),
            "a row of {}",
            self.path.display()
        );
        for (buffer, cell) in self.buffers.iter_mut().zip(cells) {
            buffer.push(cell);
        }
        self.rows += 1;
        if self.rows == GROUP_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<(), ExportError> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = &self.path;
        let fail = |e| parquet_error(path, e);
        let writer = self
            .writer
            .as_mut()
            .expect("a table is flushed before it is closed");
        let mut group = writer.next_row_group().map_err(fail)?;
        for buffer in &mut self.buffers {
            let mut column = group
                .next_column()
                .map_err(fail)?
                .expect("the schema has a column per buffer");
            let defs = (buffer.col.nullable || buffer.col.kind == Kind::StrList)
                .then_some(buffer.defs.as_slice());
            let reps = (buffer.col.kind == Kind::StrList).then_some(buffer.reps.as_slice());
            match &buffer.values {
                Values::I32(v) => column.typed::<Int32Type>().write_batch(v, defs, reps),
                Values::I64(v) => column.typed::<Int64Type>().write_batch(v, defs, reps),
                Values::Bool(v) => column.typed::<BoolType>().write_batch(v, defs, reps),
                Values::Bytes(v) => column.typed::<ByteArrayType>().write_batch(v, defs, reps),
            }
            .map_err(fail)?;
            column.close().map_err(fail)?;
            buffer.clear();
        }
        group.close().map_err(fail)?;
        self.total += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    /// Writes the last row group and the footer and gives the file its name; returns
    /// the rows written.
    pub fn finish(mut self) -> Result<u64, ExportError> {
        self.flush()?;
        let writer = self.writer.take().expect("finished once");
        let buffered = writer
            .into_inner()
            .map_err(|e| parquet_error(&self.path, e))?;
        drop(
            buffered
                .into_inner()
                .map_err(|e| io_error(&self.path, e.into_error()))?,
        );
        std::fs::rename(&self.partial, &self.path).map_err(|e| io_error(&self.path, e))?;
        Ok(self.total)
    }
}

/// The error of the Parquet writer on `path`: its IO errors given as the system's
/// reason alone.
fn parquet_error(path: &Path, e: ParquetError) -> ExportError {
    match e {
        ParquetError::External(inner) => ExportError::format(path, inner),
        e => ExportError::format(path, e),
    }
}

impl Drop for Table {
    /// A table dropped unfinished (the export failed) leaves no partial file behind.
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            std::fs::remove_file(&self.partial).ok();
        }
    }
}
