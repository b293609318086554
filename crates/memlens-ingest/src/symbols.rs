//! One symbolizer and one site namer per trace: return addresses become structured
//! [`Site`]s with the frame policy's [`FrameKind`] applied once, and stacks become
//! frame lists, allocation sites and call paths that every command and the viewer share.
//!
//! Symbolizing is lazy and cached per address: `memlens summary` names a few top
//! stacks and never opens the debug information of modules whose frames the policy
//! already knows cannot be sites (the C runtime, the loader, the recorder), while the
//! heap model asks for every address at once ([`StackSymbols::prepare_all`]), which
//! the symbolizer spreads over the cores by module.

use std::path::PathBuf;
use std::sync::Arc;

use memlens_symbols::{
    Frame, FrameFacts, FramePolicy, ModuleInfo, Segment, Symbolizer, SymbolizerOptions,
};
use memlens_trace::{Metadata, StackId};
use memlens_vocab::{FrameKind, Site};
use rustc_hash::FxHashMap;

/// The symbolized, classified frames of one trace's stacks.
pub struct StackSymbols {
    symbolizer: Symbolizer,
    policy: FramePolicy,
    /// Every address's frames, innermost first (see [`StackSymbols::frames_at`]).
    sites: FxHashMap<u64, Arc<[Site]>>,
    /// The main executable's path as the process record names it.
    main_executable: Option<String>,
    /// Wrapper patterns recorded in the trace that are not valid globs (ignored).
    bad_wrappers: Vec<String>,
}

impl StackSymbols {
    /// A namer for the trace whose process stream is `md`, under the frame policy
    /// with the allocation wrappers the trace declares (`memlens record --wrapper`;
    /// a pattern that is not a valid glob is ignored and named in [`Self::notes`]).
    /// Modules loaded later (`dlopen`) come later in the list and take precedence
    /// where they overlap older ones; addresses the trace names itself (Java frames)
    /// resolve to those names. No file is opened until an address needs it.
    pub fn new(md: &Metadata) -> StackSymbols {
        let mut bad_wrappers = Vec::new();
        let valid: Vec<&String> = md
            .wrappers
            .iter()
            .filter(|p| match FramePolicy::with_wrappers(&[p.as_str()]) {
                Ok(_) => true,
                Err(e) => {
                    bad_wrappers.push(e.to_string());
                    false
                }
            })
            .collect();
        let policy = FramePolicy::with_wrappers(&valid).unwrap_or_default();
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
        let main_executable = md.process.as_ref().map(|p| p.exe.clone());
        let options = SymbolizerOptions {
            main_executable: main_executable.as_ref().map(PathBuf::from),
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
        StackSymbols {
            symbolizer,
            policy,
            sites: FxHashMap::default(),
            main_executable,
            bad_wrappers,
        }
    }

    /// Symbolizes every return address of the trace's stack table in one batch (in
    /// parallel across modules): what a model of every stack needs.
    pub fn prepare_all(&mut self, md: &Metadata) {
        let stacks = &md.stacks;
        let mut addresses: Vec<u64> = (1..stacks.len() as u32).map(|id| stacks.ip(id)).collect();
        addresses.sort_unstable();
        addresses.dedup();
        // Address 0 stands for a node the stack table never defined: nothing to look up.
        addresses.retain(|&a| a != 0 && !self.sites.contains_key(&a));
        for symbolized in self.symbolizer.symbolize_all(&addresses) {
            let sites = self.classify(symbolized.address, &symbolized.frames);
            self.sites.insert(symbolized.address, sites);
        }
    }

    /// The frames of one return address, innermost first: the function containing it
    /// (possibly inlined) first, then each function it was inlined into, the
    /// out-of-line function last. Never empty.
    pub fn frames_at(&mut self, address: u64) -> Arc<[Site]> {
        if let Some(sites) = self.sites.get(&address) {
            return Arc::clone(sites);
        }
        let symbolized = self.symbolizer.symbolize(address);
        let sites = self.classify(address, &symbolized.frames);
        self.sites.insert(address, Arc::clone(&sites));
        sites
    }

    /// What the policy says of every frame at `address` without symbolizing it, when
    /// its module alone decides (the runtime, the loader, the recorder).
    fn kind_by_module(&self, address: u64) -> Option<FrameKind> {
        let found = self.symbolizer.find_module(address)?;
        let path = self
            .symbolizer
            .module_path(found.module)
            .map(|p| p.to_string_lossy().into_owned())?;
        self.policy.module_kind(&path)
    }

    /// The shown frames of `stack` (every frame but the recorder's), innermost first,
    /// inline chains expanded.
    pub fn frames(&mut self, md: &Metadata, stack: StackId) -> Vec<Site> {
        let mut out = Vec::new();
        for address in md.stacks.frames(stack) {
            out.extend(
                self.frames_at(address)
                    .iter()
                    .filter(|s| s.kind.is_shown())
                    .cloned(),
            );
        }
        out
    }

    /// The allocation site of `stack`: its innermost frame that can be a site (user
    /// code or a library). A stack with none (a program of system code only) falls back
    /// to its innermost shown frame; the empty stack has no site.
    pub fn site(&mut self, md: &Metadata, stack: StackId) -> Option<Site> {
        self.call_path(md, stack, 1).into_iter().next()
    }

    /// The call path users care about: up to `max` frames from the allocation site
    /// outwards, ending at `main` (what is outside it is the C runtime's start-up
    /// code). Frames the policy knows by module alone are skipped before the site
    /// without being symbolized. A stack with no site starts at its innermost shown
    /// frame.
    pub fn call_path(&mut self, md: &Metadata, stack: StackId, max: usize) -> Vec<Site> {
        let addresses = md.stacks.frames(stack);
        let mut out = Vec::new();
        let mut before_site = true;
        for &address in &addresses {
            if before_site
                && self
                    .kind_by_module(address)
                    .is_some_and(|k| !k.can_be_site())
            {
                continue;
            }
            for site in self.frames_at(address).iter() {
                if !site.kind.is_shown() || (before_site && !site.kind.can_be_site()) {
                    continue;
                }
                before_site = false;
                let is_main = site.function == "main";
                out.push(site.clone());
                if out.len() >= max || is_main {
                    return out;
                }
            }
        }
        if out.is_empty() {
            // Nothing can be a site (a system program): its innermost shown frame.
            out.extend(self.frames(md, stack).into_iter().take(max.min(1)));
        }
        out
    }

    /// Problems the symbolizer met (missing files, rebuilt binaries), one sentence each.
    pub fn notes(&self) -> Vec<String> {
        let wrappers = self
            .bad_wrappers
            .iter()
            .map(|e| format!("the trace's allocation wrapper {e}; it was ignored"));
        self.symbolizer
            .diagnostics()
            .iter()
            .map(ToString::to_string)
            .chain(wrappers)
            .collect()
    }

    /// The symbolizer's frames of `address`, as classified sites.
    fn classify(&self, address: u64, frames: &[Frame]) -> Arc<[Site]> {
        let location = self.symbolizer.find_module(address);
        let module_offset = location.map_or(0, |l| l.svma);
        frames
            .iter()
            .map(|f| {
                let module = f.module.or(location.map(|l| l.module));
                let module_name = module.map_or("", |m| self.symbolizer.module_name(m));
                let module_path = module
                    .and_then(|m| self.symbolizer.module_path(m))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let recorded_path = module
                    .and_then(|m| self.symbolizer.module(m))
                    .map_or("", |info| info.path.as_str());
                let in_main_executable = module.is_some()
                    && (recorded_path.is_empty()
                        || self.main_executable.as_deref() == Some(recorded_path));
                let function = f.function.as_deref().unwrap_or("");
                let file = f.file.as_deref().unwrap_or("");
                let kind = self.policy.classify(&FrameFacts {
                    function,
                    file,
                    module: &module_path,
                    in_main_executable,
                });
                Site {
                    function: function.to_owned(),
                    file: file.to_owned(),
                    line: f.line.unwrap_or(0),
                    module: module_name.to_owned(),
                    address,
                    module_offset,
                    inlined: f.inlined,
                    kind,
                }
            })
            .collect()
    }
}
