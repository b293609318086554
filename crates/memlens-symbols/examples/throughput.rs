//! Measures symbolization speed: 10,000 unique addresses from libc and from this
//! example's own binary, cold (files opened and parsed) and warm (cached).
//!
//! Run it with `cargo run --release -p memlens-symbols --example throughput`. The
//! module map is computed from the ELF files with `module_info_from_file`, with made-up
//! load biases, and the addresses are spread over the functions of each file's symbol
//! tables, in a shuffled order, so every lookup goes to a different place. Pass a count
//! as the first argument to change the number of addresses.

use std::path::{Path, PathBuf};
use std::time::Instant;

use memlens_symbols::{Symbolizer, SymbolizerOptions, module_info_from_file};
use object::{Object, ObjectSymbol, SymbolKind};

const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";
const LIBC_BIAS: u64 = 0x7f00_0000_0000;
const EXE_BIAS: u64 = 0x5555_0000_0000;

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(10_000);
    let exe = std::env::current_exe().expect("the example's own path");
    let libc = PathBuf::from(LIBC);

    let mut addresses = spread_addresses(&libc, LIBC_BIAS, count / 2);
    addresses.extend(spread_addresses(&exe, EXE_BIAS, count - addresses.len()));
    addresses.sort_unstable();
    addresses.dedup();
    shuffle(&mut addresses);
    let modules = vec![
        module_info_from_file(&exe, EXE_BIAS).expect("read the example"),
        module_info_from_file(&libc, LIBC_BIAS).expect("read libc"),
    ];
    println!(
        "{} unique addresses ({} in libc, the rest in {})",
        addresses.len(),
        addresses.iter().filter(|&&a| a >= LIBC_BIAS).count(),
        exe.display()
    );

    for (label, use_debug_files) in [
        (
            "with debug files (libc DWARF if libc6-dbg is installed)",
            true,
        ),
        ("without debug files (libc from .dynsym)", false),
    ] {
        let mut symbolizer = Symbolizer::new(modules.clone(), symbolizer_options(use_debug_files));
        let start = Instant::now();
        let results = symbolizer.symbolize_all(&addresses);
        let cold = start.elapsed();
        let start = Instant::now();
        let again = symbolizer.symbolize_all(&addresses);
        let warm = start.elapsed();
        assert_eq!(again.len(), results.len());

        // The same work split in two: opening and parsing the files (by asking for one
        // address per module), then the lookups of all the other addresses.
        let mut split = Symbolizer::new(modules.clone(), symbolizer_options(use_debug_files));
        let start = Instant::now();
        split.symbolize_all(&[EXE_BIAS + modules[0].segments[0].vaddr + 1, LIBC_BIAS + 1]);
        let load = start.elapsed();
        let start = Instant::now();
        split.symbolize_all(&addresses);
        let lookups = start.elapsed();

        let named = results.iter().filter(|r| r.is_resolved()).count();
        let with_line = results
            .iter()
            .filter(|r| r.outer_frame().is_some_and(|f| f.line.is_some()))
            .count();
        let inlined: usize = results
            .iter()
            .map(|r| r.frames.iter().filter(|f| f.inlined).count())
            .sum();
        let per_address = |seconds: f64| seconds * 1e6 / addresses.len() as f64;
        println!("{label}:");
        println!(
            "  cold {:>8.1} ms  {:>6.2} µs/address (includes opening and parsing files)",
            cold.as_secs_f64() * 1e3,
            per_address(cold.as_secs_f64())
        );
        println!(
            "       = load {:.1} ms + lookups {:.1} ms ({:.2} µs/address)",
            load.as_secs_f64() * 1e3,
            lookups.as_secs_f64() * 1e3,
            per_address(lookups.as_secs_f64())
        );
        println!(
            "  warm {:>8.1} ms  {:>6.2} µs/address (cache hits)",
            warm.as_secs_f64() * 1e3,
            per_address(warm.as_secs_f64())
        );
        println!(
            "  named {named}, with file:line {with_line}, inlined frames {inlined}, diagnostics {}",
            symbolizer.diagnostics().len()
        );
    }
}

/// Returns the options of one measured configuration.
fn symbolizer_options(use_debug_files: bool) -> SymbolizerOptions {
    SymbolizerOptions {
        use_debug_files,
        ..SymbolizerOptions::default()
    }
}

/// Returns about `count` runtime addresses inside the functions of `path` loaded at
/// `bias`, spread evenly over the functions and over the bytes within each.
fn spread_addresses(path: &Path, bias: u64, count: usize) -> Vec<u64> {
    let data = std::fs::read(path).expect("read the file");
    let file = object::File::parse(&*data).expect("parse the file");
    let mut functions: Vec<(u64, u64)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 1 && s.address() > 0)
        .map(|s| (s.address(), s.size()))
        .collect();
    functions.sort_unstable();
    functions.dedup();
    let mut addresses = Vec::with_capacity(count);
    let mut round = 0u64;
    while addresses.len() < count && !functions.is_empty() {
        for &(start, size) in &functions {
            // Return addresses point after a call: never at a function's first byte.
            let offset = 1 + (round * 37 + start) % (size - 1);
            addresses.push(bias + start + offset);
            if addresses.len() == count {
                break;
            }
        }
        round += 1;
    }
    addresses
}

/// Shuffles deterministically (xorshift), so runs are comparable.
fn shuffle(addresses: &mut [u64]) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..addresses.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        addresses.swap(i, (state % (i as u64 + 1)) as usize);
    }
}
