//! `memlens summary FILE [--json]`: totals, peak and when, leaked at exit,
//! temporary allocations, the top allocation sites by bytes and by count,
//! and allocator latency percentiles per function when the trace has them
//! (`memlens record --latency`). A sampled trace's figures are estimates, and it says so.

use std::path::PathBuf;

use anyhow::Result;
use memlens_heap::summary::StackFigures;
use memlens_heap::summary_wire::{SiteWire, SummaryWire, TraceFacts};
use memlens_heap::{format_bytes, format_duration, rank_sites, render_latency};
use memlens_ingest::Wanted;

use crate::read::{self, Read};

/// Frames shown per site's call path.
const SITE_FRAMES: usize = 4;

/// Arguments of `memlens summary`.
#[derive(clap::Args)]
pub struct SummaryArgs {
    /// The trace to summarise.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// How many sites to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

/// The top `top` sites by `figure`: stacks merged by the call path they name (from the
/// allocation site outwards, as the frame policy says), ranked by the heap engine.
fn rank(
    read: &mut Read,
    stacks: &[StackFigures],
    top: usize,
    figure: impl Fn(&StackFigures) -> u64,
) -> Vec<SiteWire> {
    let (md, names) = (&read.inputs[0].metadata, &mut read.symbols[0]);
    let ranked = rank_sites(stacks, top, figure, |stack| {
        names
            .call_path(md, stack, SITE_FRAMES)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<String>>()
    });
    ranked.into_iter().map(SiteWire::from).collect()
}

/// Runs `memlens summary`.
pub fn run(args: SummaryArgs) -> Result<i32> {
    print(&args.file, args.json, args.top)
}

/// Prints the summary of `file` (text or JSON) with `top` sites per list;
/// returns 1 when the trace is damaged, 0 otherwise.
pub fn print(file: &std::path::Path, json: bool, top: usize) -> Result<i32> {
    let mut read = read::read(vec![read::open(file)?], Wanted::summary());
    let s = read.models.summary.take().unwrap_or_default();
    let latency_rows = read
        .models
        .latency
        .take()
        .map(|l| l.rows())
        .unwrap_or_default();
    let by_bytes = rank(&mut read, &s.stacks, top, |f| f.bytes);
    let by_count = rank(&mut read, &s.stacks, top, |f| f.allocations);
    let by_peak = rank(&mut read, &s.stacks, top, |f| f.peak_bytes);
    let by_leak = rank(&mut read, &s.stacks, top, |f| f.leaked_bytes);
    let input = &read.inputs[0];
    let md = &input.metadata;
    let process = md.process.clone();
    let warnings: Vec<String> = md.warnings.iter().map(|(_, w)| w.clone()).collect();
    let sampling = input.sampling();
    if json {
        let facts = TraceFacts {
            file: file.display().to_string(),
            program: process.as_ref().map(|p| p.exe.clone()).unwrap_or_default(),
            pid: process.as_ref().map_or(0, |p| p.pid),
            threads: md.threads.len(),
            complete: md.end.is_some() && input.damage.is_empty(),
            warnings,
            damage: input
                .damage
                .iter()
                .map(|d| format!("byte offset {}: {}", d.offset, d.reason))
                .collect(),
            sampling,
            mid_run: input.mid_run_note(),
        };
        let sites = [by_bytes, by_count, by_peak, by_leak];
        let j = SummaryWire::new(&s, facts, sites, &latency_rows);
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        let prog = process
            .as_ref()
            .map(|p| format!("{} (pid {})", p.cmdline.join(" "), p.pid))
            .unwrap_or_else(|| "unknown program".into());
        println!("{}: {prog}", file.display());
        println!(
            "  ran {} in {} thread(s){}",
            format_duration(s.duration_ns),
            md.threads.len(),
            match &md.end {
                Some((_, how)) => format!(", ended by {how}"),
                None => ", no clean end recorded (killed or crashed)".into(),
            }
        );
        println!(
            "  {} allocations, {} reallocations, {} frees; {} requested in total",
            s.allocations,
            s.reallocations,
            s.frees,
            format_bytes(s.allocated_bytes)
        );
        println!(
            "  peak heap {} in {} blocks at {}",
            format_bytes(s.peak_bytes),
            s.peak_allocations,
            format_duration(s.peak_time_ns)
        );
        let temporary = match sampling {
            Some(_) => "temporary allocations not known (sampled)".to_owned(),
            None => format!("{} temporary allocations", s.temporary),
        };
        println!(
            "  leaked at exit {} in {} blocks; {temporary}",
            format_bytes(s.leaked_bytes),
            s.leaked_allocations,
        );
        if let Some(mapped) = read.models.mapped {
            println!("  {mapped}");
        }
        sampling
            .into_iter()
            .for_each(|s| println!("  {}", s.note()));
        if let Some(note) = input.mid_run_note() {
            println!("  {note}");
        }
        for w in &warnings {
            println!("  warning: {w}");
        }
        if !latency_rows.is_empty() {
            println!("\nallocator latency (time inside the allocator, per call):");
            print!("{}", render_latency(&latency_rows));
        }
        type Figure = fn(&SiteWire) -> String;
        let sections: [(&str, &Vec<SiteWire>, Figure); 4] = [
            ("top sites by bytes allocated", &by_bytes, |r| {
                format!("{} in {} calls", format_bytes(r.bytes), r.allocations)
            }),
            ("top sites by number of allocations", &by_count, |r| {
                format!("{} calls, {}", r.allocations, format_bytes(r.bytes))
            }),
            ("top sites at the peak", &by_peak, |r| {
                format_bytes(r.peak_bytes)
            }),
            ("top sites leaked at exit", &by_leak, |r| {
                format!(
                    "{} in {} blocks",
                    format_bytes(r.leaked_bytes),
                    r.leaked_allocations
                )
            }),
        ];
        for (title, rows, fig) in sections {
            if rows.is_empty() {
                continue;
            }
            println!("\n{title}:");
            for r in rows.iter() {
                println!(
                    "  {:>22}  {}",
                    fig(r),
                    r.stack.first().cloned().unwrap_or_default()
                );
                for f in r.stack.iter().skip(1) {
                    println!("  {:>22}    ← {f}", "");
                }
            }
        }
    }
    // What reading said about the trace's index (the mid-run note is in the summary).
    let mid_run = input.mid_run_note();
    for note in read
        .models
        .notes
        .iter()
        .filter(|n| Some(*n) != mid_run.as_ref())
    {
        eprintln!("memlens: note: {note}");
    }
    let notes = input.damage_notes();
    read::print_damage(&notes);
    Ok(i32::from(!notes.is_empty()))
}
