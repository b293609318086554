//! The web app's TypeScript types, generated from the wire structs so that the JSON
//! contract between this server and `web/` is written once, in Rust.
//!
//! Every wire struct derives `ts_rs::TS` beside `Serialize` (whose attributes ts-rs
//! reads) and names the TypeScript module it goes to with `#[ts(export_to)]`; one module
//! per Rust wire module, committed under `web/src/generated/`:
//!
//! | module | Rust source |
//! |---|---|
//! | `viewer.ts` | `crates/memlens-server/src/protocol.rs`: `api/meta`, the heap lens's answers, the report's data |
//! | `alloc.ts` | `crates/memlens-server/src/alloc/wire.rs` |
//! | `cache.ts` | `crates/memlens-server/src/cache/wire.rs` |
//! | `heap.ts` | `crates/memlens-heap/src/protocol.rs`: the `memlens tree --json` and `memlens growth --json` documents |
//! | `vocab.ts` | `crates/memlens-vocab/src/frames.rs` (`Site`, `FrameKind`) |
//!
//! [`write_typescript`] exports the documents the page reads (ts-rs follows their
//! fields to every other wire type); `tests/wire_types.rs` fails when the committed
//! files differ from its output, and [`REGENERATE`] rewrites them. 64-bit integers are
//! `number`: the page reads JSON numbers as doubles.

use std::io;
use std::path::Path;

use ts_rs::{Config, TS};

use crate::{alloc, cache, protocol};

/// The generated modules and the Rust files they come from.
pub const MODULES: &[(&str, &str)] = &[
    ("viewer.ts", "crates/memlens-server/src/protocol.rs"),
    ("alloc.ts", "crates/memlens-server/src/alloc/wire.rs"),
    ("cache.ts", "crates/memlens-server/src/cache/wire.rs"),
    ("heap.ts", "crates/memlens-heap/src/protocol.rs"),
    ("vocab.ts", "crates/memlens-vocab/src/frames.rs"),
];

/// The command that regenerates the committed files.
pub const REGENERATE: &str = "MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types";

/// Writes the TypeScript modules of every document the page reads into `dir`, a new
/// or empty directory (ts-rs merges into files it wrote before in this process, so
/// call it once per directory).
pub fn write_typescript(dir: &Path) -> io::Result<()> {
    let cfg = Config::new().with_out_dir(dir).with_large_int("number");
    export_documents(&cfg).map_err(|e| io::Error::other(format!("ts-rs: {e}")))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some((_, source)) = MODULES.iter().find(|(module, _)| *module == name) else {
            return Err(io::Error::other(format!(
                "ts-rs wrote `{name}`: every wire type needs `#[ts(export_to = \"<module>.ts\")]` \
                 naming one of the modules in memlens_server::typescript::MODULES"
            )));
        };
        let text = std::fs::read_to_string(&path)?;
        // ts-rs opens every file with a line of its own; ours also says where from and how.
        let body = text.split_once('\n').map_or("", |(_, rest)| rest);
        let header = format!(
            "// Generated from {source} by ts-rs: do not edit.\n// Regenerate with `{REGENERATE}`.\n"
        );
        std::fs::write(&path, header + &layout(body))?;
    }
    Ok(())
}

/// Lays ts-rs's declarations out for reading: one field per line, indented, with the
/// closing brace on its own line, and no trailing spaces. ts-rs writes an object type
/// whose fields have docs as `export type T = { ` and then each doc and field on lines
/// of their own, the last ending in ` };`; a type without any docs stays on one line.
fn layout(generated: &str) -> String {
    let mut out = String::with_capacity(generated.len() + generated.len() / 4);
    let mut in_object = false;
    for line in generated.lines().map(str::trim_end) {
        if !in_object {
            out.push_str(line);
            out.push('\n');
            in_object = line.starts_with("export type ") && line.ends_with("= {");
        } else if let Some(last_field) = line.strip_suffix("};") {
            let last_field = last_field.trim_end();
            if !last_field.is_empty() {
                out.push_str("  ");
                out.push_str(last_field);
                out.push('\n');
            }
            out.push_str("};\n");
            in_object = false;
        } else {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The documents the page reads; add a new one here.
fn export_documents(cfg: &Config) -> Result<(), ts_rs::ExportError> {
    protocol::MetaWire::<'static>::export_all(cfg)?;
    protocol::HeapMetaWire::<'static>::export_all(cfg)?;
    protocol::TimelineWire::export_all(cfg)?;
    protocol::TreeAnswerWire::<'static>::export_all(cfg)?;
    protocol::GrowthAnswerWire::export_all(cfg)?;
    protocol::StacksWire::export_all(cfg)?;
    crate::live::LiveWire::export_all(cfg)?;
    protocol::ReportWire::<'static>::export_all(cfg)?;
    alloc::wire::MetaWire::export_all(cfg)?;
    alloc::wire::BlockAnswerWire::export_all(cfg)?;
    alloc::wire::MetricsWire::export_all(cfg)?;
    cache::wire::SourcesWire::export_all(cfg)?;
    cache::wire::SessionWire::export_all(cfg)?;
    cache::wire::OccupancyWire::export_all(cfg)?;
    cache::wire::StatsWire::export_all(cfg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn layout_puts_documented_fields_on_indented_lines() {
        let generated = "/**\n * A point.\n */\nexport type PointWire = { \n/**\n * When.\n */\n\
                         time_ns: number, \n/**\n * Size.\n */\nbytes: number, };\n\n\
                         export type Pair = { a: string, b: number, };\n";
        assert_eq!(
            layout(generated),
            "/**\n * A point.\n */\nexport type PointWire = {\n  /**\n   * When.\n   */\n  \
             time_ns: number,\n  /**\n   * Size.\n   */\n  bytes: number,\n};\n\n\
             export type Pair = { a: string, b: number, };\n"
        );
    }
}
