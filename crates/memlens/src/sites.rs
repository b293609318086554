//! Naming allocation sites: symbolize a stack and render the frames a user
//! cares about as `function (file:line)`.
//!
//! The frames of allocation wrappers are skipped from the top of the stack:
//! frames in system libraries (libc, libstdc++: `operator new`, `strdup`), and
//! frames inlined from system headers (`/usr/include/…`: `std::vector`
//! internals, `std::allocator`), so a C++ `new` or `push_back` is attributed
//! to the user's code that called it. When a stack has nothing else (a
//! system program), its first frame is kept.

use std::collections::HashMap;
use std::path::PathBuf;

use memlens_symbols::{Frame, ModuleInfo, Segment, Symbolizer, SymbolizerOptions};
use memlens_trace::{Metadata, StackId};

/// One rendered frame.
#[derive(Clone, Debug)]
pub struct FrameText {
    /// `function (file:line)` or `0xADDR in module`.
    pub text: String,
    /// True for frames inside allocation wrappers and runtime code.
    pub wrapper: bool,
}

/// Symbolizes stacks of one trace, caching per address.
pub struct SiteNamer {
    symbolizer: Symbolizer,
    cache: HashMap<u64, Vec<FrameText>>,
}

fn is_system_module(path: &str) -> bool {
    ["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"]
        .iter()
        .any(|p| path.starts_with(p))
}

/// The symbolizer for a trace's module map (the executable found through
/// the process record's path). Modules loaded later (`dlopen`) come later in
/// the list and take precedence where they overlap older ones.
pub fn symbolizer_for(md: &Metadata) -> Symbolizer {
    let modules = md
        .modules
        .iter()
        .map(|m| ModuleInfo {
            path: m.module.path.clone(),
            load_bias: m.module.load_bias,
            segments: m
                .module
                .segments
                .iter()
                .map(|s| Segment {
                    vaddr: s.vaddr,
                    memsz: s.memsz,
                    file_offset: s.file_offset,
                    flags: s.flags,
                })
                .collect(),
            build_id: (!m.module.build_id.is_empty()).then(|| m.module.build_id.clone()),
        })
        .collect();
    let options = SymbolizerOptions {
        main_executable: md.process.as_ref().map(|p| PathBuf::from(&p.exe)),
        ..SymbolizerOptions::default()
    };
    Symbolizer::new(modules, options)
}

impl SiteNamer {
    /// Builds the symbolizer from the trace's module map.
    pub fn new(md: &Metadata) -> SiteNamer {
        SiteNamer {
            symbolizer: symbolizer_for(md),
            cache: HashMap::new(),
        }
    }

    /// Symbolizes many addresses at once (in parallel across modules).
    pub fn prefetch(&mut self, addrs: &[u64]) {
        let todo: Vec<u64> = addrs
            .iter()
            .copied()
            .filter(|a| !self.cache.contains_key(a))
            .collect();
        for s in self.symbolizer.symbolize_all(&todo) {
            let texts = self.render(&s.frames, s.address);
            self.cache.insert(s.address, texts);
        }
    }

    fn render(&self, frames: &[Frame], addr: u64) -> Vec<FrameText> {
        frames
            .iter()
            .map(|f| {
                let module = f
                    .module
                    .map(|m| self.symbolizer.module_name(m).to_string())
                    .unwrap_or_default();
                let module_path = f
                    .module
                    .and_then(|m| self.symbolizer.module_path(m))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let in_system_header = f
                    .file
                    .as_deref()
                    .is_some_and(|file| file.starts_with("/usr/include/"));
                let text = match (&f.function, f.file_name(), f.line) {
                    (Some(func), Some(file), Some(line)) => format!("{func} ({file}:{line})"),
                    (Some(func), _, _) => format!("{func} (in {module})"),
                    _ => format!(
                        "{addr:#x} (in {})",
                        if module.is_empty() { "?" } else { &module }
                    ),
                };
                FrameText {
                    text,
                    wrapper: is_system_module(&module_path) || in_system_header,
                }
            })
            .collect()
    }

    /// The frames of stack `id`, innermost first, inlined frames included.
    pub fn frames(&mut self, md: &Metadata, id: StackId) -> Vec<FrameText> {
        let addrs = md.stacks.frames(id);
        self.prefetch(&addrs);
        addrs
            .iter()
            .flat_map(|a| self.cache.get(a).cloned().unwrap_or_default())
            .collect()
    }

    /// The call path users care about: up to `max` frames from the first
    /// non-wrapper frame outwards, ending at `main` (what is outside it is
    /// the C runtime's start-up code).
    pub fn path(&mut self, md: &Metadata, id: StackId, max: usize) -> Vec<String> {
        let frames = self.frames(md, id);
        let start = frames.iter().position(|f| !f.wrapper).unwrap_or(0);
        let mut out = Vec::new();
        for f in frames[start.min(frames.len())..].iter().take(max) {
            out.push(f.text.clone());
            if f.text.starts_with("main (") {
                break;
            }
        }
        out
    }
}
