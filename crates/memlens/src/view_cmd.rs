//! `memlens view`: serves the viewer of one trace on this machine and opens it in the
//! browser. The server (`memlens-server`) does the serving; this file reads the trace
//! once into every lens with data ([`Lenses`], which `memlens report` shares), checks
//! the address, prints the URL and opens the browser.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use memlens_heap::{HeapModel, HeapModelBuilder};
use memlens_ingest::Wanted;
use memlens_ingest::references::TraceReferences;
use memlens_server::cache::MAX_REFERENCES;
use memlens_server::{
    AllocLens, CacheLens, EngineOptions, HeapLens, LensApi, LiveLenses, PendingLens,
    ReferenceSource, RunInfo, ServeError, Viewer, ViewerConfig, check_points, open_in_browser,
};

use crate::UsageError;
use crate::heap_args;
use crate::read::{self, Read};

/// Arguments of `memlens view`.
#[derive(clap::Args)]
#[command(
    after_help = "The viewer listens on 127.0.0.1 on a random port, and every URL \
    carries a secret token: only someone who sees the printed URL can open it. Press \
    Ctrl-C to stop."
)]
pub struct ViewArgs {
    /// The trace to view: allocations (heap lens), memory references (cache lens), or both.
    file: PathBuf,
    /// More traces to show with FILE in the allocation map, e.g. the traces of its forked
    /// children (coloured by process there; the heap lens shows FILE).
    #[arg(value_name = "MORE")]
    more: Vec<PathBuf>,
    #[command(flatten)]
    serve: ServeArgs,
    /// The classifiers the heap lens starts with, outermost level first.
    #[arg(long, value_name = "C1,C2,…", default_value = "site,thread")]
    by: String,
    /// Evenly spaced snapshot times (besides the start, marks, peaks and dips).
    #[arg(long, value_name = "K", default_value_t = 20)]
    points: usize,
    /// A base run to compare with: the heap lens colours groups by their change from
    /// it, at the same fraction of each run (heaptrack's `-d`, pprof's `-base`).
    #[arg(long, value_name = "OLD")]
    base: Option<PathBuf>,
    /// The allocation map's window when the whole run does not fit in the memory it
    /// may use (`MEMLENS_ALLOC_MEMORY`), e.g. `10s..20s` or `40%..60%`; without it,
    /// the last stretch that fits.
    #[arg(long, value_name = "A..B")]
    time: Option<String>,
}

impl ViewArgs {
    /// The defaults for FILE, served as `serve` says (`memlens record --view`).
    pub fn of(file: PathBuf, serve: ServeArgs) -> ViewArgs {
        let (by, points) = ("site,thread".to_owned(), 20);
        let (more, base) = (Vec::new(), None);
        ViewArgs {
            file,
            more,
            serve,
            by,
            points,
            base,
            time: None,
        }
    }
}

/// Where and how `memlens view`, `memlens cache view` and `memlens record --view`
/// serve the page.
#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// The port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The address to listen on. Other than loopback it needs `--allow-remote`.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Really listen on a non-loopback `--host`, where other machines can reach the
    /// viewer (the token still guards it).
    #[arg(long)]
    allow_remote: bool,
    /// Print the URL without opening a browser.
    #[arg(long)]
    no_open: bool,
}

impl ServeArgs {
    /// A usage error unless the address is loopback or `--allow-remote` was given.
    pub fn check(&self) -> Result<()> {
        if !self.host.is_loopback() && !self.allow_remote {
            return Err(UsageError(ServeError::NonLoopback { host: self.host }.to_string()).into());
        }
        Ok(())
    }

    /// The server's configuration.
    pub fn config(&self) -> ViewerConfig {
        ViewerConfig {
            host: self.host,
            port: self.port,
            allow_remote: self.allow_remote,
        }
    }

    /// Prints the URL (one line on stdout, `viewing WHAT at URL`, so a script can read
    /// it), opens the browser unless `--no-open`, and serves until Ctrl-C.
    pub fn serve(&self, viewer: Viewer, what: &str) -> Result<()> {
        if !self.host.is_loopback() {
            eprintln!(
                "memlens: warning: serving on {}, reachable from other machines; anyone with the URL can read this trace",
                self.host
            );
        }
        let url = viewer.url().to_owned();
        println!("memlens: viewing {what} at {url}");
        let _ = std::io::stdout().flush();
        eprintln!("memlens: press Ctrl-C to stop");
        if let Some(Err(why)) = (!self.no_open).then(|| open_in_browser(&url)) {
            eprintln!("memlens: {why}");
        }
        viewer.run()?;
        Ok(())
    }
}

/// Runs `memlens view` until Ctrl-C.
pub fn run(args: ViewArgs) -> Result<i32> {
    heap_args::classifier_chain(&args.by, &[])?;
    check_points(args.points).map_err(UsageError)?;
    args.serve.check()?;
    let base = args.base.as_deref().map(read_base).transpose()?;
    let (points, by, time) = (args.points, &args.by, args.time.as_deref());
    let lenses = Lenses::read(&args.file, &args.more, points, by, time, true, base)?;
    if lenses.growing {
        return follow(args, lenses);
    }
    let status = lenses.read.finish();
    let viewer = Viewer::bind(lenses.info, args.serve.config(), lenses.lenses)?;
    args.serve.serve(viewer, &args.file.display().to_string())?;
    Ok(status)
}

/// Serves a trace still being written: every read of the grown trace (of what was
/// written since the last, while the program runs) replaces the heap and allocation-map
/// lenses, and the page follows (`api/live`) until the program ends.
pub(crate) fn follow(args: ViewArgs, mut lenses: Lenses) -> Result<i32> {
    let first = lenses.read.models.following.take();
    let shown = first.as_ref().map(|f| f.until_ns());
    let shown = shown.unwrap_or_else(|| lenses.read.inputs[0].run_end_ns());
    let live = Arc::new(LiveLenses::new(lenses.lenses, shown));
    let (served, status) = (live.served(), Arc::clone(&live.status));
    let viewer = Viewer::bind_following(lenses.info, args.serve.config(), served, status)?;
    let options = EngineOptions {
        points: args.points,
        default_classifiers: args.by.clone(),
    };
    let (file, wanted) = (args.file.clone(), Wanted::growing());
    std::thread::spawn(move || {
        memlens_ingest::follow::follow(&file, &wanted, first, |mut read| {
            if let Some(heap) = read.models.heap.take() {
                live.replace(Arc::new(HeapLens::new(heap, options.clone()).ok()?));
            }
            if let Some(alloc) = read.models.alloc.take() {
                live.replace(Arc::new(AllocLens::new(alloc)));
            }
            let ms = read.took.as_millis() as u64;
            live.status.updated(read.until_ns, ms, read.running);
            Some(())
        })
    });
    args.serve.serve(viewer, &args.file.display().to_string())?;
    Ok(0)
}

/// The lenses with data in a trace (and the traces joining it in the allocation map),
/// from one read of its events: what `memlens view` serves and `memlens report`
/// embeds.
pub(crate) struct Lenses {
    /// The traces as read (for their damage and notes).
    pub read: Read,
    /// The program and trace the page names.
    pub info: RunInfo,
    /// The lenses in tab order: heap evolution, cache, allocation map.
    pub lenses: Vec<Arc<dyn LensApi>>,
    /// Whether FILE is still being written (decided once, as the lenses were chosen).
    pub growing: bool,
}

impl Lenses {
    /// Reads FILE (and MORE for the allocation map) into every lens that has data; with
    /// `background`, the allocation map is read on a thread of its own while the other
    /// lenses are served. The heap lens compares with `base` when given; the allocation
    /// map reads the window `alloc_time` (`A..B`) when the run does not fit its memory.
    pub(crate) fn read(
        file: &Path,
        more: &[PathBuf],
        points: usize,
        by: &str,
        alloc_time: Option<&str>,
        background: bool,
        base: Option<(HeapModel, String)>,
    ) -> Result<Lenses> {
        let paths: Vec<PathBuf> = [file.to_owned()].into_iter().chain(more.to_vec()).collect();
        let mut inputs = paths
            .iter()
            .map(|p| read::open(p))
            .collect::<Result<Vec<_>>>()?;
        let alloc_window = alloc_time
            .map(|text| crate::alloc_pool::alloc_window(text, &inputs))
            .transpose()?;
        // Java traces have no addresses: the allocation map does not apply to them.
        let java = inputs.iter().any(|i| i.is_java());
        inputs.truncate(if background { 1 } else { inputs.len() });
        let references = memlens_ingest::references::read_all(&inputs[0].file, MAX_REFERENCES);
        let info = match inputs[0].metadata.process.as_ref() {
            Some(p) => RunInfo::of_process(&p.cmdline, &p.exe, Some(p.pid), file),
            None => RunInfo::of_process(&[], "", None, file),
        }
        .sampled(inputs[0].sampling())
        .mid_run(inputs[0].mid_run_note());
        // Read as following it reads (`memlens-ingest`'s `Wanted::growing`).
        let growing = memlens_ingest::follow::still_written(&inputs[0]);
        let mut read = read::read(
            inputs,
            Wanted {
                heap: true,
                alloc: !java && (!background || growing),
                alloc_window,
                // The map's background read keeps the summary, not the first tree's.
                summary_later: background && !java && !growing,
                growing,
                ..Wanted::default()
            },
        );
        let cache = cache_source(references, file);
        let heap = read
            .models
            .heap
            .take()
            .unwrap_or_else(|| HeapModelBuilder::new().end(0));
        let alloc = read.models.alloc.take();
        // A trace still being written gets every tab its lenses may fill later.
        let has_alloc = (alloc.is_some() || background && !java)
            && (heap.stats().allocations > 0 || !more.is_empty() || growing);
        let mut lenses: Vec<Arc<dyn LensApi>> = Vec::new();
        if heap.stats().allocations > 0 || growing || (cache.is_none() && !has_alloc) {
            let options = EngineOptions {
                points,
                default_classifiers: by.to_owned(),
            };
            lenses.push(Arc::new(
                HeapLens::compared(heap, base, options)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?,
            ));
        }
        if let Some(source) = cache {
            lenses.push(Arc::new(CacheLens::new(Some(source))));
        }
        if let Some(alloc) = alloc.filter(|_| has_alloc) {
            lenses.push(Arc::new(AllocLens::new(alloc)));
        } else if has_alloc {
            // Read again for any window the page asks for (a run too large for memory).
            let reader = move |pending: &PendingLens, window: Option<(u64, u64)>| {
                read::alloc_lens(&paths, window.or(alloc_window), pending)
            };
            lenses.push(PendingLens::reading(
                AllocLens::DESCRIPTOR,
                Arc::new(reader),
            ));
        }
        Ok(Lenses {
            read,
            info,
            lenses,
            growing,
        })
    }
}

/// The heap model of a base run (`--base`) and its file name.
fn read_base(path: &Path) -> Result<(HeapModel, String)> {
    let mut read = read::read(vec![read::open(path)?], Wanted::heap_at(Vec::new()));
    read.finish();
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Ok((
        read.models
            .heap
            .take()
            .unwrap_or_else(|| HeapModelBuilder::new().end(0)),
        name,
    ))
}

/// The cache lens's source of a trace's references, or `None` when it has none.
/// Damaged chunks are reported and skipped; a trace longer than the lens holds is cut,
/// with a note.
fn cache_source(refs: TraceReferences, path: &Path) -> Option<ReferenceSource> {
    read::print_damage(&memlens_ingest::DamageNote::all(path, &refs.damage));
    if refs.is_empty() {
        return None;
    }
    if refs.dropped > 0 {
        eprintln!(
            "memlens: {}: the cache lens shows the first {MAX_REFERENCES} references; {} more are left out",
            path.display(),
            refs.dropped
        );
    }
    Some(ReferenceSource {
        title: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".to_owned()),
        references: refs.references.into(),
        info: refs.info,
    })
}
