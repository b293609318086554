//! `memlens dump FILE`: every record, one per line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

/// Arguments of `memlens dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// The trace to print.
    file: PathBuf,
}

/// Runs `memlens dump`.
pub fn run(args: DumpArgs) -> Result<i32> {
    let trace = memlens_trace::TraceFile::open(&args.file)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = memlens_trace::dump::dump(&trace, &mut out);
    match result {
        Ok((_, damage)) => {
            out.flush().ok();
            crate::read::print_damage(&memlens_ingest::DamageNote::all(&args.file, &damage));
            Ok(if damage.is_empty() { 0 } else { 1 })
        }
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(e.into()),
    }
}
