//! Routing a running program's calls to the recorder by rewriting its GOT
//! entries (`memlens attach`), and putting them back (`memlens detach`).
//!
//! A library `dlopen`ed into a running process interposes nothing: every
//! module already bound its `malloc` to the allocator's. What a module calls
//! through is its global offset table: a `JUMP_SLOT` relocation (the PLT's
//! entry) or a `GLOB_DAT` one (a `-fno-plt` call or an address taken) per
//! imported function. [`patch`] walks every loaded module (`dl_iterate_phdr`,
//! which holds the loader's list lock, so no module is unmapped under us),
//! reads its `PT_DYNAMIC` (symbol and string tables, the `RELA` and PLT
//! relocation tables), and for each relocation of a function in the caller's
//! list stores the replacement in the slot, keeping the slot's original
//! value. Slots in RELRO pages (read-only after relocation) are made
//! writable for the store and read-only again after it. [`restore`] writes
//! the originals back in the modules still loaded; [`forget_unloaded`]
//! drops the slots of modules unloaded since (the program's `dlclose`), so a
//! new module at the same address never gets another's original.
//!
//! Every store is one aligned 8-byte write, which other threads see either
//! before or after, never torn: the program keeps running while its slots
//! change. The recorder's own module and the dynamic loader are left alone
//! (the recorder calls the real allocator through `real.rs`, and the loader's
//! few allocations happen under its lock).
//!
//! Limits: a relocation of type `R_X86_64_64` (a function's address stored
//! in data) is not rewritten, since programs compare such pointers; calls
//! inside a module that defines the function itself (a statically linked
//! allocator) have no slot to rewrite, which `memlens attach` refuses up
//! front. Little-endian 64-bit ELF only (x86-64, aarch64).

use core::ffi::{CStr, c_int, c_void};

use crate::locked::Locked;

/// One rewritten slot.
#[derive(Clone, Copy)]
struct Patched {
    /// The slot's address.
    slot: usize,
    /// What it held before.
    original: usize,
    /// What we stored.
    replacement: usize,
    /// The module's load bias, to tell it from a later module at the same place.
    bias: usize,
}

/// Every slot rewritten and not yet restored.
static PATCHED: Locked<Vec<Patched>> = Locked::new(Vec::new());

/// A function to route: its symbol name and the address to store.
pub type Route = (&'static CStr, usize);

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Slots rewritten in this pass.
    pub patched: usize,
    /// Of those, `malloc`'s slots: zero means the program's allocations cannot
    /// be seen.
    pub malloc_slots: usize,
    /// Modules whose tables were read.
    pub modules: usize,
}

const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_STRSZ: i64 = 10;
const DT_JMPREL: i64 = 23;
const PT_DYNAMIC: u32 = 2;
const PT_LOAD: u32 = 1;
const SYM_SIZE: usize = 24;
const RELA_SIZE: usize = 24;
#[cfg(target_arch = "x86_64")]
const GLOB_DAT: u32 = 6;
#[cfg(target_arch = "x86_64")]
const JUMP_SLOT: u32 = 7;
#[cfg(target_arch = "aarch64")]
const GLOB_DAT: u32 = 1025;
#[cfg(target_arch = "aarch64")]
const JUMP_SLOT: u32 = 1026;

/// A module's dynamic tables, as addresses in this process.
#[derive(Default)]
struct Tables {
    symtab: usize,
    strtab: usize,
    strsz: usize,
    /// (address, byte length) of the two relocation tables.
    rela: [(usize, usize); 2],
}

/// A table address from `PT_DYNAMIC`: glibc relocates them in place when it
/// loads a module, other loaders do not; an address below the bias is
/// still an offset.
fn table_address(value: u64, bias: usize) -> usize {
    let v = value as usize;
    if v < bias { v + bias } else { v }
}

/// Reads the dynamic section at `dynamic`.
///
/// # Safety
///
/// `dynamic` is the `PT_DYNAMIC` of a loaded module (an array of 16-byte
/// entries ending with `DT_NULL`).
unsafe fn tables(dynamic: usize, bias: usize) -> Tables {
    let mut t = Tables::default();
    let (mut jmprel, mut pltrelsz, mut rela, mut relasz) = (0, 0, 0, 0);
    let mut entry = dynamic as *const [u64; 2];
    loop {
        // SAFETY: within the dynamic section, which ends with DT_NULL.
        let [tag, value] = unsafe { entry.read() };
        match tag as i64 {
            DT_NULL => break,
            DT_SYMTAB => t.symtab = table_address(value, bias),
            DT_STRTAB => t.strtab = table_address(value, bias),
            DT_STRSZ => t.strsz = value as usize,
            DT_JMPREL => jmprel = table_address(value, bias),
            DT_PLTRELSZ => pltrelsz = value as usize,
            DT_RELA => rela = table_address(value, bias),
            DT_RELASZ => relasz = value as usize,
            _ => {}
        }
        // SAFETY: the next entry (the section has not ended).
        entry = unsafe { entry.add(1) };
    }
    t.rela = [(jmprel, pltrelsz), (rela, relasz)];
    t
}

/// The protection of each mapping of this process: `(start, end, PROT_*)`.
fn protections() -> Vec<(usize, usize, c_int)> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|line| {
            let (range, rest) = line.split_once(' ')?;
            let (start, end) = range.split_once('-')?;
            let perms = rest.as_bytes();
            let mut prot = 0;
            for (i, (c, p)) in [
                (b'r', libc::PROT_READ),
                (b'w', libc::PROT_WRITE),
                (b'x', libc::PROT_EXEC),
            ]
            .into_iter()
            .enumerate()
            {
                if perms.get(i) == Some(&c) {
                    prot |= p;
                }
            }
            Some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
                prot,
            ))
        })
        .collect()
}

/// Stores `value` into the slot at `slot`, making its page writable for the
/// store when `prot` (the page's protection) is not; false when it cannot.
///
/// # Safety
///
/// `slot` is an aligned GOT entry of a loaded module.
unsafe fn store(slot: usize, value: usize, prot: c_int) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let page = (slot & !(page_size - 1)) as *mut c_void;
    let writable = prot & libc::PROT_WRITE != 0;
    // SAFETY: changing the protection of one page of a loaded module, and
    // back; the page stays readable throughout.
    if !writable && unsafe { libc::mprotect(page, page_size, prot | libc::PROT_WRITE) } != 0 {
        return false;
    }
    // SAFETY: an aligned, mapped, now writable 8-byte slot; other threads
    // read it with plain loads and see the old or the new value.
    unsafe { core::ptr::write_volatile(slot as *mut usize, value) };
    if !writable {
        // SAFETY: as above.
        unsafe { libc::mprotect(page, page_size, prot) };
    }
    true
}

/// What the `dl_iterate_phdr` callbacks work on.
struct Pass<'a> {
    routes: &'a [Route],
    protections: Vec<(usize, usize, c_int)>,
    /// An address inside the recorder, whose module is skipped.
    own: usize,
    counts: Counts,
    /// Load biases of the modules seen.
    loaded: Vec<usize>,
    patching: bool,
}

impl Pass<'_> {
    fn protection(&self, addr: usize) -> c_int {
        self.protections
            .iter()
            .find(|&&(s, e, _)| addr >= s && addr < e)
            .map_or(libc::PROT_READ, |&(_, _, p)| p)
    }
}

/// The routed function a relocation names, if any, and its index.
///
/// # Safety
///
/// `t` are a loaded module's tables and `sym` an index into its symbol table.
unsafe fn routed(t: &Tables, sym: usize, routes: &[Route]) -> Option<usize> {
    // SAFETY: the relocation names a symbol of the table.
    let name_offset = unsafe { ((t.symtab + sym * SYM_SIZE) as *const u32).read() } as usize;
    if name_offset >= t.strsz {
        return None;
    }
    // SAFETY: a NUL-terminated name inside the string table.
    let name = unsafe { CStr::from_ptr((t.strtab + name_offset) as *const libc::c_char) };
    routes.iter().position(|(n, _)| *n == name)
}

unsafe extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the `Pass` handed to dl_iterate_phdr, and `info` the
    // loader's description of a loaded module.
    let (pass, info) = unsafe { (&mut *(data as *mut Pass), &*info) };
    let bias = info.dlpi_addr as usize;
    let name = if info.dlpi_name.is_null() {
        &[][..]
    } else {
        // SAFETY: the loader's NUL-terminated module name.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
    };
    // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
    let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let own = headers.iter().any(|h| {
        h.p_type == PT_LOAD
            && (bias + h.p_vaddr as usize..bias + (h.p_vaddr + h.p_memsz) as usize)
                .contains(&pass.own)
    });
    let loader = name.windows(6).any(|w| w == b"/ld-li") || name.ends_with(b"ld.so.1");
    pass.loaded.push(bias);
    if !pass.patching || own || loader {
        return 0;
    }
    let Some(dynamic) = headers.iter().find(|h| h.p_type == PT_DYNAMIC) else {
        return 0;
    };
    // SAFETY: the module's own PT_DYNAMIC.
    let t = unsafe { tables(bias + dynamic.p_vaddr as usize, bias) };
    if t.symtab == 0 || t.strtab == 0 {
        return 0;
    }
    pass.counts.modules += 1;
    for (table, len) in t.rela {
        if table == 0 {
            continue;
        }
        for i in 0..len / RELA_SIZE {
            // SAFETY: inside the relocation table: offset, info, addend.
            let [offset, r_info, _] =
                unsafe { ((table + i * RELA_SIZE) as *const [u64; 3]).read() };
            let kind = r_info as u32;
            if kind != JUMP_SLOT && kind != GLOB_DAT {
                continue;
            }
            // SAFETY: the relocation's symbol index.
            let Some(route) = (unsafe { routed(&t, (r_info >> 32) as usize, pass.routes) }) else {
                continue;
            };
            let slot = bias + offset as usize;
            let replacement = pass.routes[route].1;
            // SAFETY: a GOT slot of this loaded module.
            let original = unsafe { (slot as *const usize).read_volatile() };
            if original == replacement || original == 0 {
                continue;
            }
            // SAFETY: as above.
            if unsafe { store(slot, replacement, pass.protection(slot)) } {
                PATCHED.with(|p| {
                    p.retain(|q| q.slot != slot);
                    p.push(Patched {
                        slot,
                        original,
                        replacement,
                        bias,
                    });
                });
                pass.counts.patched += 1;
                if pass.routes[route].0 == c"malloc" {
                    pass.counts.malloc_slots += 1;
                }
            }
        }
    }
    0
}

fn iterate(pass: &mut Pass) {
    // SAFETY: `visit` matches the callback signature and `pass` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (pass as *mut Pass).cast()) };
}

/// Routes every loaded module's calls of `routes` (name, replacement) to
/// their replacements, except in the module containing `own` and in the
/// loader; slots already routed are left alone, so calling it again after a
/// `dlopen` patches only the new modules.
pub fn patch(routes: &[Route], own: usize) -> Counts {
    let mut pass = Pass {
        routes,
        protections: protections(),
        own,
        counts: Counts::default(),
        loaded: Vec::new(),
        patching: true,
    };
    iterate(&mut pass);
    pass.counts
}

/// Drops the slots of modules that are no longer loaded (after a `dlclose`).
pub fn forget_unloaded() {
    let mut pass = Pass {
        routes: &[],
        protections: Vec::new(),
        own: 0,
        counts: Counts::default(),
        loaded: Vec::new(),
        patching: false,
    };
    iterate(&mut pass);
    PATCHED.with(|p| p.retain(|q| pass.loaded.contains(&q.bias)));
}

/// Puts every rewritten slot back to its original value (in the modules
/// still loaded, where the slot still holds our replacement); returns how
/// many it restored.
pub fn restore() -> usize {
    forget_unloaded();
    let protections = protections();
    let patched = PATCHED.with(std::mem::take);
    let mut restored = 0;
    for p in patched {
        let prot = protections
            .iter()
            .find(|&&(s, e, _)| p.slot >= s && p.slot < e)
            .map_or(libc::PROT_READ, |&(_, _, prot)| prot);
        // SAFETY: a slot of a module still loaded (just checked), which we
        // rewrote ourselves.
        unsafe {
            if (p.slot as *const usize).read_volatile() == p.replacement
                && store(p.slot, p.original, prot)
            {
                restored += 1;
            }
        }
    }
    restored
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replacement that counts its calls.
    static CALLS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

    unsafe extern "C" fn counting_getpid() -> libc::pid_t {
        CALLS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        4242
    }

    #[inline(never)]
    fn call_getpid() -> libc::pid_t {
        // SAFETY: getpid has no preconditions.
        unsafe { libc::getpid() }
    }

    #[test]
    fn table_addresses_are_relocated_once() {
        assert_eq!(table_address(0x1000, 0x5555_0000_0000), 0x5555_0000_1000);
        assert_eq!(
            table_address(0x5555_0000_1000, 0x5555_0000_0000),
            0x5555_0000_1000
        );
        assert_eq!(table_address(0x40_1000, 0), 0x40_1000);
    }

    #[test]
    fn protections_are_read_from_the_maps() {
        let probe = &CALLS as *const _ as usize;
        let found = protections()
            .into_iter()
            .find(|&(s, e, _)| probe >= s && probe < e)
            .expect("a static lies in a mapping");
        assert_ne!(found.2 & libc::PROT_WRITE, 0);
    }

    /// Routes this test binary's own `getpid` slot (its GOT, in RELRO) to a
    /// counter and back: the call goes through the replacement only while
    /// routed, and the program's slot holds its original value afterwards.
    #[test]
    fn a_routed_call_reaches_the_replacement_until_restored() {
        // SAFETY: getpid has no preconditions.
        let real = unsafe { libc::getpid() };
        let routes: [Route; 1] = [(c"getpid", counting_getpid as *const () as usize)];
        // Skip libc (the module that defines getpid): only callers' slots change.
        let counts = patch(&routes, libc::getpid as *const () as usize);
        if counts.patched == 0 {
            // Linked so that getpid is called without a slot (static or
            // fully inlined): nothing to check here.
            return;
        }
        assert_eq!(call_getpid(), 4242);
        assert!(restore() >= counts.patched.min(1));
        assert_eq!(call_getpid(), real);
        assert!(CALLS.load(core::sync::atomic::Ordering::Relaxed) >= 1);
    }
}
