//! Reading traces for a command, through the ingest layer: open, one pass into the
//! models the command needs under a progress bar, and the one way every command reports
//! what went wrong while reading (damage, symbolizer warnings, repaired events).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use memlens_heap::HeapModel;
use memlens_ingest::{
    DamageNote, Models, NoProgress, Progress, ProgressFn, StackSymbols, TraceInput, Wanted, ingest,
};
use memlens_server::{AllocLens, PendingLens};

use crate::UsageError;

/// Traces smaller than this read without a progress bar.
const QUIET_BELOW_EVENTS: u64 = 5_000_000;

/// Opens a trace (the chunk index and the process stream).
pub fn open(path: &Path) -> Result<TraceInput> {
    Ok(TraceInput::open(path)?)
}

/// A usage error for a Java trace where object addresses are needed.
pub fn refuse_java(input: &TraceInput) -> Result<()> {
    if input.is_java() {
        return Err(UsageError(format!(
            "{} is a Java trace: the JVM does not reveal object addresses, so the \
             allocation map cannot draw it (use `memlens tree`, `growth` or `view` for its heap evolution)",
            input.path().display()
        ))
        .into());
    }
    Ok(())
}

/// Traces read into models.
pub struct Read {
    /// The traces, with all damage met while reading them.
    pub inputs: Vec<TraceInput>,
    /// One namer per trace (symbolized once, the frame policy applied).
    pub symbols: Vec<StackSymbols>,
    /// What the pass built.
    pub models: Models,
}

/// Reads `inputs` once into the `wanted` models, with a progress bar on a terminal.
pub fn read(inputs: Vec<TraceInput>, wanted: Wanted) -> Read {
    let events: u64 = inputs.iter().map(|i| i.metadata.event_records).sum();
    if events < QUIET_BELOW_EVENTS || wanted == Wanted::default() {
        read_with(inputs, wanted, &NoProgress)
    } else {
        read_with(inputs, wanted, &Bar::default())
    }
}

/// Reads the allocation map of `paths` for the viewer's tab `pending` (in the background).
pub fn alloc_lens(paths: &[PathBuf], window: Option<(u64, u64)>, pending: &PendingLens) {
    let inputs = paths.iter().filter_map(|p| open(p).ok()).collect();
    let progress = ProgressFn::new(|done, total| pending.progress(done, total));
    let wanted = Wanted {
        alloc_window: window,
        ..Wanted::alloc()
    };
    let mut read = read_with(inputs, wanted, &progress);
    match read.models.alloc.take() {
        Some(model) => pending.ready(Arc::new(AllocLens::interactive(model))),
        None => pending.failed(read.models.notes.join(" ")),
    }
    read.finish();
}

/// Reads `inputs` once into the `wanted` models, reporting to `progress`.
fn read_with(mut inputs: Vec<TraceInput>, wanted: Wanted, progress: &dyn Progress) -> Read {
    let mut symbols: Vec<StackSymbols> = inputs
        .iter()
        .map(|i| StackSymbols::new(&i.metadata))
        .collect();
    let models = ingest(&mut inputs, &mut symbols, wanted, progress);
    Read {
        inputs,
        symbols,
        models,
    }
}

impl Read {
    /// The first trace's path.
    pub fn path(&self) -> &Path {
        self.inputs[0].path()
    }

    /// The heap model (read with `Wanted { heap: true, .. }`).
    pub fn heap(&self) -> &HeapModel {
        self.models
            .heap
            .as_ref()
            .expect("the heap model was asked for")
    }

    /// The allocation-map model (read with `Wanted { alloc: true, .. }`).
    pub fn alloc(&self) -> &memlens_alloc::AllocModel {
        self.models
            .alloc
            .as_ref()
            .expect("the allocation-map model was asked for")
    }

    /// Prints what went wrong while reading on stderr — the symbolizer's warnings, the
    /// models' repairs, damage — and returns the exit status: 1 when a file is damaged.
    pub fn finish(&self) -> i32 {
        for names in &self.symbols {
            for note in names.notes() {
                eprintln!("memlens: warning: {note}");
            }
        }
        for note in &self.models.notes {
            eprintln!("memlens: note: {note}");
        }
        if let Some(heap) = &self.models.heap {
            for message in heap.diagnostics().messages() {
                eprintln!("memlens: note: {}: {message}", self.path().display());
            }
        }
        if let Some(alloc) = &self.models.alloc {
            for message in alloc.diagnostics().messages() {
                eprintln!("memlens: note: {message}");
            }
        }
        let mut damaged = false;
        for input in &self.inputs {
            let notes = input.damage_notes();
            print_damage(&notes);
            damaged |= !notes.is_empty();
        }
        i32::from(damaged)
    }
}

/// Prints damage, one sentence per place.
pub fn print_damage(notes: &[DamageNote]) {
    for note in notes {
        eprintln!("memlens: {note}");
    }
}

/// A progress bar on stderr (shown only on a terminal), one per trace read.
#[derive(Default)]
pub struct Bar {
    bar: RefCell<Option<ProgressBar>>,
}

impl Progress for Bar {
    fn start(&self, what: &str, total: u64) {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{spinner} reading {msg} [{bar:30}] {percent}% ({eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        *self.bar.borrow_mut() = Some(bar);
    }

    fn advance(&self, done: u64) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            bar.set_position(done);
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }
}
