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
/// the list and take precedence where they overlap older ones. Addresses the
/// trace names itself (Java frames) resolve to those names.
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
    let mut symbolizer = Symbolizer::new(modules, options);
    for (&ip, name) in &md.frame_names {
        symbolizer.name_address(
            ip,
            Frame {
                function: Some(name.function.clone()),
                raw_name: None,
                file: (!name.file.is_empty()).then(|| name.file.clone()),
                line: (name.line != 0).then_some(name.line),
                column: None,
                inlined: false,
                module: None,
            },
        );
    }
    symbolizer
}

/// The path of the module whose executable segment holds `addr`, from the
/// trace's module map.
fn module_path_of(md: &Metadata, addr: u64) -> Option<&str> {
    md.modules.iter().rev().find_map(|m| {
        let bias = m.module.load_bias;
        m.module
            .segments
            .iter()
            .any(|s| {
                s.flags & 1 != 0
                    && addr >= bias.wrapping_add(s.vaddr)
                    && addr < bias.wrapping_add(s.vaddr).wrapping_add(s.memsz)
            })
            .then_some(m.module.path.as_str())
    })
}

impl SiteNamer {
    /// Builds the symbolizer from the trace's module map.
    pub fn new(md: &Metadata) -> SiteNamer {
        SiteNamer {
            symbolizer: symbolizer_for(md),
            cache: HashMap::new(),
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

    /// The rendered frames of one address (symbolized once, cached).
    fn texts(&mut self, addr: u64) -> Vec<FrameText> {
        if let Some(t) = self.cache.get(&addr) {
            return t.clone();
        }
        let s = self.symbolizer.symbolize(addr);
        let texts = self.render(&s.frames, addr);
        self.cache.insert(addr, texts.clone());
        texts
    }

    /// The call path users care about: up to `max` frames from the first
    /// non-wrapper frame outwards, ending at `main` (what is outside it is
    /// the C runtime's start-up code).
    ///
    /// Frames are symbolized one by one as the path grows: leading frames in
    /// system libraries are recognised from the module map alone, and frames
    /// past `main` are never looked up, so a summary rarely needs the large
    /// debug information of libc.
    pub fn path(&mut self, md: &Metadata, id: StackId, max: usize) -> Vec<String> {
        let addrs = md.stacks.frames(id);
        let first_user = addrs
            .iter()
            .position(|&a| !module_path_of(md, a).is_some_and(is_system_module));
        let mut out = Vec::new();
        let mut skipping = true;
        for &a in &addrs[first_user.unwrap_or(addrs.len())..] {
            for f in self.texts(a) {
                if skipping && f.wrapper {
                    continue;
                }
                skipping = false;
                let is_main = f.text.starts_with("main (");
                out.push(f.text);
                if out.len() >= max || is_main {
                    return out;
                }
            }
        }
        if out.is_empty() {
            // Nothing but wrappers (a system program): show its first frame.
            if let Some(&a) = addrs.first() {
                out.extend(self.texts(a).into_iter().take(1).map(|f| f.text));
            }
        }
        out
    }
}
