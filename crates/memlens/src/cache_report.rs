//! The report of `memlens cache simulate`, printed from the engine's
//! [`SimulationSummary`]: with `--json` its wire form
//! ([`memlens_cache::protocol::SimulationWire`], documented there), else a table of
//! the levels, what memory served and the busiest regions.

use std::io::{self, Write};

use memlens_cache::import::ImportCounts;
use memlens_cache::protocol::SimulationWire;
use memlens_cache::{RegionSummary, SimulationSummary};

/// What `memlens cache simulate` reports: a simulation of `trace`, read as `format`
/// (with the line counts of the text importer, if one read it).
pub struct Report<'a> {
    /// The trace as the user named it.
    pub trace: &'a str,
    /// The trace format's name.
    pub format: &'a str,
    /// The simulation's results.
    pub summary: &'a SimulationSummary,
    /// The text importer's counts; `None` for memlens traces.
    pub import: Option<&'a ImportCounts>,
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".into(), |r| format!("{:.2}%", r * 100.0))
}

/// Regions listed in the text report, busiest first.
const TEXT_REGIONS: usize = 20;

/// Prints the report as pretty JSON or as a table.
pub fn print(out: &mut impl Write, report: &Report, json: bool) -> io::Result<()> {
    if json {
        let wire = SimulationWire::new(report.trace, report.format, report.summary, report.import);
        serde_json::to_writer_pretty(&mut *out, &wire).map_err(io::Error::other)?;
        writeln!(out)
    } else {
        print_table(out, report)
    }
}

/// Prints the report as a table: one row per level, then the busiest regions.
fn print_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let summary = report.summary;
    writeln!(
        out,
        "{} ({}, {}): {} references",
        report.trace,
        report.format,
        summary.inclusion.name(),
        summary.references
    )?;
    writeln!(
        out,
        "{:<6} {:>6} {:>4} {:>4} {:<6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>11} {:>6}",
        "level",
        "size",
        "ways",
        "line",
        "policy",
        "accesses",
        "hits",
        "misses",
        "miss%",
        "window%",
        "evictions",
        "write-backs",
        "temp"
    )?;
    for l in &summary.levels {
        let c = &l.activity.counters;
        writeln!(
            out,
            "{:<6} {:>6} {:>4} {:>4} {:<6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>11} {:>6.2}",
            l.name,
            memlens_vocab::format_size(l.size),
            l.ways,
            l.line_size,
            l.replacement.name(),
            c.accesses(),
            c.hits(),
            c.misses(),
            percent(Some(c.miss_rate())),
            percent(l.activity.windowed_miss_rate),
            c.evictions,
            c.write_backs,
            l.temperature,
        )?;
    }
    writeln!(
        out,
        "memory: {} references served",
        summary.memory_references
    )?;
    if !summary.regions.is_empty() {
        print_regions(out, summary)?;
    }
    if let Some(i) = report.import {
        writeln!(
            out,
            "\nimport: {} lines, {} ignored, {} malformed",
            i.lines, i.ignored, i.malformed
        )?;
    }
    Ok(())
}

/// Prints the busiest regions first; a recorded program can have hundreds (every
/// global and allocation site), which `--json` lists in full.
fn print_regions(out: &mut impl Write, summary: &SimulationSummary) -> io::Result<()> {
    let mut shown: Vec<&RegionSummary> = summary.regions.iter().collect();
    shown.sort_by_key(|region| std::cmp::Reverse(region.references));
    let hidden = shown.len().saturating_sub(TEXT_REGIONS);
    shown.truncate(TEXT_REGIONS);
    let width = (shown.iter())
        .map(|region| region.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 48);
    writeln!(
        out,
        "\n{:<width$} {:>12}  miss rate per level",
        "region", "references"
    )?;
    for region in shown {
        let rates: Vec<String> = (summary.levels.iter().zip(&region.levels))
            .map(|(level, activity)| {
                format!("{} {}", level.name, percent(Some(activity.miss_rate())))
            })
            .collect();
        let name: String = region.name.chars().take(width).collect();
        writeln!(
            out,
            "{name:<width$} {:>12}  {}",
            region.references,
            rates.join("  ")
        )?;
    }
    if hidden > 0 {
        writeln!(out, "… and {hidden} smaller regions (`--json` lists all)")?;
    }
    Ok(())
}
