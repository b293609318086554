//! `memlens view`: serves the viewer of one trace on this machine and opens it in the
//! browser. The server (`memlens-server`) does the serving; this file reads the trace
//! into the heap model, checks the address, prints the URL and opens the browser.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::Result;
use memlens_heap::HeapModel;
use memlens_server::{
    AllocLens, CacheLens, EngineOptions, LensApi, RunInfo, ServeError, Viewer, ViewerConfig,
};

use crate::UsageError;
use crate::heap_model::{self, HeapTrace};

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
}

/// Where and how `memlens view` and `memlens cache view` serve the page.
#[derive(clap::Args)]
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

    /// The server's configuration with the engine's `engine` options.
    pub fn config(&self, engine: EngineOptions) -> ViewerConfig {
        ViewerConfig {
            host: self.host,
            port: self.port,
            allow_remote: self.allow_remote,
            engine,
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
        if !self.no_open {
            open_browser(&url);
        }
        viewer.run()?;
        Ok(())
    }
}

/// Runs `memlens view` until Ctrl-C.
pub fn run(args: ViewArgs) -> Result<i32> {
    heap_model::classifier_chain(&args.by, &[])?;
    check_points(args.points)?;
    args.serve.check()?;
    let trace = HeapTrace::build(crate::load::open(&args.file)?);
    let status = trace.finish();
    let info = run_info(&trace, &args.file);
    let mut lenses: Vec<Arc<dyn LensApi>> = Vec::new();
    if let Some(refs) = crate::cache_view_cmd::trace_source(&trace.loaded.trace, &args.file) {
        lenses.push(Arc::new(CacheLens::new(Some(refs))));
    }
    // Java traces have no addresses: the allocation map does not apply to them.
    let java = crate::alloc_model::is_java_trace(&trace.loaded.metadata);
    if !java && (!trace.model.is_empty() || !args.more.is_empty()) {
        lenses.push(Arc::new(alloc_lens(&args.file, &args.more)?));
    }
    // The model lives as long as the server, which is the rest of the process.
    let model: &'static HeapModel = Box::leak(Box::new(trace.model));
    let config = args.serve.config(EngineOptions {
        points: args.points,
        default_classifiers: args.by.clone(),
        other_lenses: Vec::new(),
    });
    let viewer = Viewer::bind(model, info, config, lenses)?;
    args.serve.serve(viewer, &args.file.display().to_string())?;
    Ok(status)
}

/// The allocation-map lens over FILE and MORE (read again into the allocation-map
/// engine; damage in FILE was reported with the heap model already).
fn alloc_lens(file: &Path, more: &[PathBuf]) -> Result<AllocLens> {
    let mut paths = vec![file.to_path_buf()];
    paths.extend(more.iter().cloned());
    let traces = crate::alloc_model::load_traces(&paths)?;
    for f in &traces.files[1..] {
        crate::load::report_damage(f.trace.path(), &f.damage);
    }
    Ok(AllocLens::new(traces.model))
}

/// The snapshot points option must be usable.
pub(crate) fn check_points(points: usize) -> Result<()> {
    if points == 0 || points > 500 {
        return Err(UsageError(format!(
            "`--points {points}` is out of range: ask for 1 to 500 snapshot points"
        ))
        .into());
    }
    Ok(())
}

/// The program and trace names the page shows.
pub(crate) fn run_info(trace: &HeapTrace, file: &Path) -> RunInfo {
    let process = trace.loaded.metadata.process.as_ref();
    let program = process
        .map(|p| {
            if p.cmdline.is_empty() {
                p.exe.clone()
            } else {
                p.cmdline.join(" ")
            }
        })
        .unwrap_or_default();
    RunInfo {
        program,
        pid: process.map(|p| p.pid),
        trace_name: file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// Opens `url` in the desktop's browser when there is a desktop; otherwise says so.
fn open_browser(url: &str) {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display {
        eprintln!("memlens: no display found; open the URL above in a browser");
        return;
    }
    let spawned = Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if spawned.is_err() {
        eprintln!("memlens: could not start a browser (xdg-open); open the URL above");
    }
}
