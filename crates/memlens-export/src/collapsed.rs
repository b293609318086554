//! Collapsed stacks: one `root;…;leaf VALUE` line per stack with a value, the input of
//! inferno, flamegraph.pl, speedscope and Perfetto. Threads and size classes are merged
//! (a flame graph has one dimension); the value is bytes in use at the instant or bytes
//! allocated in the window (`--value`).

use std::io::Write;
use std::path::Path;

use memlens_ingest::{StackSymbols, TraceInput};
use rustc_hash::FxHashMap;

use crate::{ExportError, ExportStacks, StackProfile, Value};

/// Writes `profile` as collapsed stacks to `out`.
pub fn write(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    value: Value,
    out: &Path,
) -> Result<String, ExportError> {
    let lines = lines(input, names, stacks, profile, value);
    let mut file = crate::create(out)?;
    let mut total = 0u64;
    for (line, bytes) in &lines {
        total += bytes;
        writeln!(file, "{line} {bytes}").map_err(|e| ExportError::io(out, e))?;
    }
    file.flush().map_err(|e| ExportError::io(out, e))?;
    Ok(format!("{} stacks, {} bytes in all", lines.len(), total))
}

/// Every stack with a value as its collapsed text (frames root first, `;`-separated;
/// `;` in names becomes `:`), heaviest first.
pub fn lines(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    value: Value,
) -> Vec<(String, u64)> {
    let md = &input.metadata;
    let mut by_stack: FxHashMap<u32, u64> = FxHashMap::default();
    for (key, values) in &profile.samples {
        let bytes = value.bytes(values);
        if bytes > 0 {
            *by_stack.entry(key.stack).or_default() += bytes;
        }
    }
    let mut merged: FxHashMap<String, u64> = FxHashMap::default();
    for (stack, bytes) in by_stack {
        let path = stacks.path(md, names, stack).to_vec();
        let text = if path.is_empty() {
            "[unknown stack]".to_owned()
        } else {
            path.iter()
                .rev()
                .map(|&id| stacks.name(id).replace(';', ":"))
                .collect::<Vec<_>>()
                .join(";")
        };
        *merged.entry(text).or_default() += bytes;
    }
    let mut lines: Vec<(String, u64)> = merged.into_iter().collect();
    lines.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    lines
}
