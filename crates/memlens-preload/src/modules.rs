//! The module map, read in-process with `dl_iterate_phdr`: path, load bias,
//! `PT_LOAD` segments, GNU build id (from the loaded `PT_NOTE`s) and the
//! location of `.eh_frame_hdr` (`PT_GNU_EH_FRAME`) for the DWARF unwinder.

use core::ffi::{CStr, c_int, c_void};

use memlens_trace::{Module, Segment};

/// One loaded object as found by a scan.
#[derive(Clone)]
pub struct Scanned {
    /// Path, build id and segments, as recorded in the trace.
    pub module: Module,
    /// `PT_GNU_EH_FRAME`: (vaddr, memsz).
    pub eh_frame_hdr: Option<(u64, u64)>,
}

const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
const NT_GNU_BUILD_ID: u32 = 3;

fn read_self_exe() -> String {
    let mut buf = [0u8; 4096];
    // SAFETY: readlink writes at most buf.len() bytes into buf.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n <= 0 {
        return String::new();
    }
    String::from_utf8_lossy(&buf[..n as usize]).into_owned()
}

/// Parses the notes of one `PT_NOTE` segment in memory for a GNU build id.
///
/// # Safety
/// `[start, start + len)` must be readable memory of a loaded object.
unsafe fn build_id_in(start: usize, len: usize) -> Option<Vec<u8>> {
    let mut at = start;
    let end = start + len;
    while at + 12 <= end {
        // SAFETY: at + 12 <= end, inside the note segment.
        let (namesz, descsz, kind) = unsafe {
            (
                *(at as *const u32) as usize,
                *((at + 4) as *const u32) as usize,
                *((at + 8) as *const u32),
            )
        };
        let name_at = at + 12;
        let desc_at = name_at + namesz.next_multiple_of(4);
        let next = desc_at + descsz.next_multiple_of(4);
        if next > end || next <= at {
            return None;
        }
        if kind == NT_GNU_BUILD_ID && namesz == 4 {
            // SAFETY: both ranges lie inside the note segment.
            let name = unsafe { core::slice::from_raw_parts(name_at as *const u8, 4) };
            if name == b"GNU\0" {
                // SAFETY: `desc_at + descsz <= next <= end`: inside the note segment.
                let desc = unsafe { core::slice::from_raw_parts(desc_at as *const u8, descsz) };
                return Some(desc.to_vec());
            }
        }
        at = next;
    }
    None
}

unsafe extern "C" fn collect(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid info; data is our Vec.
    let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<Scanned>)) };
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's names are NUL-terminated.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let path = if name.is_empty() && out.is_empty() {
        read_self_exe()
    } else {
        name
    };
    let mut segments = Vec::new();
    let mut build_id = Vec::new();
    let mut eh_frame_hdr = None;
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr has dlpi_phnum entries.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        match ph.p_type {
            PT_LOAD => segments.push(Segment {
                vaddr: ph.p_vaddr,
                memsz: ph.p_memsz,
                file_offset: ph.p_offset,
                flags: ph.p_flags,
            }),
            PT_NOTE if build_id.is_empty() => {
                let start = (info.dlpi_addr + ph.p_vaddr) as usize;
                // SAFETY: PT_NOTE segments are mapped (they lie in a PT_LOAD).
                if let Some(id) = unsafe { build_id_in(start, ph.p_memsz as usize) } {
                    build_id = id;
                }
            }
            PT_GNU_EH_FRAME => eh_frame_hdr = Some((ph.p_vaddr, ph.p_memsz)),
            _ => {}
        }
    }
    if !segments.is_empty() {
        out.push(Scanned {
            module: Module {
                path,
                load_bias: info.dlpi_addr,
                segments,
                build_id,
            },
            eh_frame_hdr,
        });
    }
    0
}

/// Scans every loaded object. Must not be called from inside an allocation
/// hook while the loader lock may be held; the recorder calls it at start-up,
/// from the writer thread and right after `dlopen`/`dlclose` return.
pub fn scan() -> Vec<Scanned> {
    let mut out: Vec<Scanned> = Vec::new();
    // SAFETY: `collect` matches the callback signature and `out` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut out as *mut Vec<Scanned>).cast()) };
    out
}

/// The executable address range `[start, end)` of the loaded object that
/// contains `addr`, if any.
pub fn text_range_containing(mods: &[Scanned], addr: u64) -> Option<(u64, u64)> {
    for m in mods {
        for s in &m.module.segments {
            let start = m.module.load_bias + s.vaddr;
            let end = start + s.memsz;
            if s.flags & 1 != 0 && addr >= start && addr < end {
                return Some((start, end));
            }
        }
    }
    None
}
