//! The home region of an address, as the encoder knows it while the reference
//! stream goes by: the program's named regions (`MEMLENS_NAME_REGION`),
//! live heap blocks (named by allocation site), the threads' stacks and the data
//! symbols of the loaded objects, in that order of precedence.
//!
//! Region ids of the trace are handed out lazily, when the first reference falls
//! into a region, so a program with thousands of data symbols or allocation sites
//! only spends ids (at most 65,535) on the ones it touches.

use std::collections::{BTreeMap, HashMap};

/// What a trace region stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Home {
    /// The `n`-th `MEMLENS_NAME_REGION` of the program.
    Named(usize),
    /// The blocks allocated at one heap site (the tool's site id).
    HeapSite(u64),
    /// Any thread's stack.
    Stack,
    /// A data symbol (an index into the symbol table).
    Global(usize),
    /// The rest of a loaded object's segments: constants, relocated tables
    /// (an index into the object list).
    Object(usize),
}

/// A region the trace must declare before its first reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRegion {
    /// The trace's region id.
    pub id: u16,
    /// The first byte (0 for regions whose blocks vary: heap sites, stacks).
    pub start: u64,
    /// The length in bytes (0 for regions whose blocks vary).
    pub len: u64,
    /// The name shown in the cache lens.
    pub name: String,
}

/// A resolved lookup: the region id and the address range it holds for (so the
/// caller can cache it per site until [`Regions::generation`] changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The trace's region id (0: none).
    pub id: u16,
    /// The first byte of the range the answer holds for.
    pub lo: u64,
    /// One past the last byte.
    pub hi: u64,
}

#[derive(Debug)]
struct Symbol {
    start: u64,
    end: u64,
    name: String,
}

/// The address map.
#[derive(Debug, Default)]
pub struct Regions {
    named: Vec<(u64, u64, String)>,
    heap: BTreeMap<u64, (u64, u64)>,
    heap_site_names: HashMap<u64, String>,
    stacks: Vec<(u64, u64)>,
    symbols: Vec<Symbol>,
    symbols_sorted: bool,
    objects: Vec<(u64, u64, String)>,
    heap_names_used: HashMap<String, u32>,
    ids: HashMap<Home, u16>,
    next_id: u32,
    pending: Vec<NewRegion>,
    generation: u64,
    /// Lookups that found no id because all 65,535 were taken.
    pub overflowed: u64,
}

impl Regions {
    /// An empty map.
    pub fn new() -> Regions {
        Regions {
            next_id: 1,
            ..Regions::default()
        }
    }

    /// Changes whenever a cached [`Hit`] may have become wrong (a free, a new name).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Regions to declare before the next reference.
    pub fn take_new(&mut self) -> Vec<NewRegion> {
        std::mem::take(&mut self.pending)
    }

    /// True when regions wait to be declared.
    pub fn has_new(&self) -> bool {
        !self.pending.is_empty()
    }

    /// `MEMLENS_NAME_REGION(start, len, name)`: declared at once, wins over
    /// everything else (a later name over an earlier one).
    pub fn name(&mut self, start: u64, len: u64, name: String) {
        self.named.push((start, start.saturating_add(len), name));
        self.generation += 1;
        self.id_of(Home::Named(self.named.len() - 1));
    }

    /// A heap site's name, announced before its first block. Sites that share a
    /// name (three `malloc`s on one line) are told apart by `#2`, `#3`, ….
    pub fn heap_site(&mut self, site: u64, name: String) {
        let seen = self.heap_names_used.entry(name.clone()).or_insert(0);
        *seen += 1;
        let name = if *seen > 1 {
            format!("{name} #{seen}")
        } else {
            name
        };
        self.heap_site_names.insert(site, name);
    }

    /// A loaded object's segment `[lo, hi)`: addresses in it that no symbol
    /// covers belong to `static: <name>`.
    pub fn object_segment(&mut self, lo: u64, hi: u64, name: &str) {
        self.objects.push((lo, hi, format!("static: {name}")));
    }

    /// A heap block became live.
    pub fn alloc(&mut self, addr: u64, size: u64, site: u64) {
        self.heap
            .insert(addr, (addr.saturating_add(size.max(1)), site));
    }

    /// A heap block was freed.
    pub fn free(&mut self, addr: u64) {
        if self.heap.remove(&addr).is_some() {
            self.generation += 1;
        }
    }

    /// A thread's stack `[lo, hi)`.
    pub fn stack(&mut self, lo: u64, hi: u64) {
        if !self.stacks.contains(&(lo, hi)) {
            self.stacks.push((lo, hi));
        }
    }

    /// Adds the data symbols of a loaded object (`name`, start, size), already
    /// relocated; `object` names libraries in the region names.
    pub fn symbols(&mut self, object: Option<&str>, symbols: Vec<(String, u64, u64)>) {
        for (name, start, size) in symbols {
            let name = match object {
                Some(o) => format!("global: {name} ({o})"),
                None => format!("global: {name}"),
            };
            self.symbols.push(Symbol {
                start,
                end: start.saturating_add(size),
                name,
            });
        }
        self.symbols_sorted = false;
    }

    fn id_of(&mut self, home: Home) -> u16 {
        if let Some(&id) = self.ids.get(&home) {
            return id;
        }
        let Ok(id) = u16::try_from(self.next_id) else {
            self.overflowed += 1;
            return 0;
        };
        self.next_id += 1;
        let (start, len, name) = match &home {
            Home::Named(i) => {
                let (s, e, n) = &self.named[*i];
                (*s, e - s, n.clone())
            }
            Home::HeapSite(site) => (
                0,
                0,
                (self.heap_site_names.get(site).cloned())
                    .unwrap_or_else(|| format!("heap: site {site}")),
            ),
            Home::Stack => (0, 0, "stack".to_owned()),
            Home::Global(i) => {
                let s = &self.symbols[*i];
                (s.start, s.end - s.start, s.name.clone())
            }
            Home::Object(i) => {
                let (lo, hi, name) = &self.objects[*i];
                (*lo, hi - lo, name.clone())
            }
        };
        self.ids.insert(home, id);
        self.pending.push(NewRegion {
            id,
            start,
            len,
            name,
        });
        id
    }

    /// The home region of `addr`.
    pub fn lookup(&mut self, addr: u64) -> Hit {
        if let Some(i) = (self.named.iter()).rposition(|&(s, e, _)| addr >= s && addr < e) {
            let (lo, hi) = (self.named[i].0, self.named[i].1);
            return Hit {
                id: self.id_of(Home::Named(i)),
                lo,
                hi,
            };
        }
        if let Some((&lo, &(hi, site))) = self.heap.range(..=addr).next_back()
            && addr < hi
        {
            return Hit {
                id: self.id_of(Home::HeapSite(site)),
                lo,
                hi,
            };
        }
        if let Some(&(lo, hi)) = self
            .stacks
            .iter()
            .find(|&&(lo, hi)| addr >= lo && addr < hi)
        {
            return Hit {
                id: self.id_of(Home::Stack),
                lo,
                hi,
            };
        }
        if !self.symbols_sorted {
            self.symbols
                .sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
            self.symbols.dedup_by_key(|s| s.start);
            self.symbols_sorted = true;
        }
        let i = self.symbols.partition_point(|s| s.start <= addr);
        if i > 0 && addr < self.symbols[i - 1].end {
            let (lo, hi) = (self.symbols[i - 1].start, self.symbols[i - 1].end);
            return Hit {
                id: self.id_of(Home::Global(i - 1)),
                lo,
                hi,
            };
        }
        if let Some(i) = (self.objects.iter()).position(|&(lo, hi, _)| addr >= lo && addr < hi) {
            // Not cached as a whole: a symbol inside the segment must still win.
            return Hit {
                id: self.id_of(Home::Object(i)),
                lo: addr,
                hi: addr + 1,
            };
        }
        Hit {
            id: 0,
            lo: addr,
            hi: addr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_regions_win_then_heap_then_stack_then_globals() {
        let mut r = Regions::new();
        r.symbols(None, vec![("table".into(), 0x1000, 0x100)]);
        r.stack(0x7000, 0x8000);
        r.heap_site(1, "heap: main m.c:3".into());
        r.alloc(0x5000, 0x40, 1);
        assert_eq!(r.lookup(0x1010).id, 1);
        assert_eq!(r.lookup(0x7ff0).id, 2);
        assert_eq!(
            r.lookup(0x5020),
            Hit {
                id: 3,
                lo: 0x5000,
                hi: 0x5040
            }
        );
        assert_eq!(r.lookup(0x5040).id, 0);
        r.object_segment(0x1000, 0x3000, "prog");
        assert_eq!(
            r.lookup(0x2000),
            Hit {
                id: 4,
                lo: 0x2000,
                hi: 0x2001
            }
        );
        assert_eq!(r.lookup(0x1010).id, 1);
        let g = r.generation();
        r.name(0x5000, 0x20, "A".into());
        assert_ne!(r.generation(), g);
        assert_eq!(r.lookup(0x5008).id, 5);
        assert_eq!(r.lookup(0x5028).id, 3);
        r.free(0x5000);
        assert_eq!(r.lookup(0x5028).id, 0);
        let names: Vec<String> = r.take_new().into_iter().map(|n| n.name).collect();
        assert_eq!(
            names,
            [
                "global: table",
                "stack",
                "heap: main m.c:3",
                "static: prog",
                "A"
            ]
        );
        r.heap_site(2, "heap: main m.c:3".into());
        r.alloc(0x9000, 8, 2);
        r.lookup(0x9000);
        assert_eq!(r.take_new()[0].name, "heap: main m.c:3 #2");
        assert!(!r.has_new());
    }

    #[test]
    fn a_symbol_past_the_last_id_gets_none() {
        let mut r = Regions::new();
        let symbols = (0..70_000u64)
            .map(|i| (format!("s{i}"), i * 16, 16))
            .collect();
        r.symbols(Some("libx.so"), symbols);
        for i in 0..70_000u64 {
            r.lookup(i * 16);
        }
        assert_eq!(r.lookup(69_999 * 16).id, 0);
        assert!(r.overflowed > 0);
        assert_eq!(r.take_new().len(), 65_535);
    }
}
