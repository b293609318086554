//! The stacks of an export, symbolized once: each trace stack becomes a path of frame
//! ids from its allocation site outwards (the frame policy's site, so the allocator's
//! own frames and the recorder's are left out, as in every memlens view), and each
//! distinct frame — a function at a return address, inlined frames apart — is kept
//! once in a frame table every format indexes.

use memlens_ingest::StackSymbols;
use memlens_trace::Metadata;
use memlens_vocab::Site;
use rustc_hash::FxHashMap;

/// Frames and per-stack paths of one trace.
#[derive(Default)]
pub struct ExportStacks {
    frames: Vec<Site>,
    ids: FxHashMap<(u64, u32, String), u32>,
    paths: FxHashMap<u32, Vec<u32>>,
}

impl ExportStacks {
    /// No stacks yet.
    pub fn new() -> ExportStacks {
        ExportStacks::default()
    }

    /// The frame ids of trace stack `stack`, innermost (the allocation site) first;
    /// empty for the empty stack.
    pub fn path(&mut self, md: &Metadata, names: &mut StackSymbols, stack: u32) -> &[u32] {
        if !self.paths.contains_key(&stack) {
            let sites = names.call_path(md, stack, usize::MAX);
            let path = sites.into_iter().map(|site| self.intern(site)).collect();
            self.paths.insert(stack, path);
        }
        &self.paths[&stack]
    }

    /// The frame behind id `id`.
    pub fn frame(&self, id: u32) -> &Site {
        &self.frames[id as usize]
    }

    /// Every frame, indexed by id.
    pub fn frames(&self) -> &[Site] {
        &self.frames
    }

    /// The text of frame `id` as flame graphs show it: the function (or `0x… (in
    /// module+0x…)` when unnamed) — the one way memlens writes a frame.
    pub fn name(&self, id: u32) -> String {
        let site = self.frame(id);
        if site.is_symbolized() {
            site.function.clone()
        } else {
            site.to_string()
        }
    }

    fn intern(&mut self, site: Site) -> u32 {
        let key = (site.address, site.line, site.function.clone());
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.frames.len() as u32;
        self.frames.push(site);
        self.ids.insert(key, id);
        id
    }
}
