//! Per-thread stack interning on the allocating thread.
//!
//! Each thread maps a 128-bit hash of its captured return addresses to a
//! small *thread-local* stack id and sends a stack's frames to the writer
//! only the first time it sees it. The writer then maps (thread, local id)
//! to a global id in the trace's prefix tree. Nothing here is shared between
//! threads, so lookups never contend. Two independent 64-bit hashes make a
//! false match between different stacks practically impossible (about 2⁻¹²⁸
//! per pair).

/// A thread's table of known stacks: open addressing, linear probing,
/// power-of-two capacity, grown at half load.
pub struct LocalStacks {
    keys: Vec<(u64, u64)>,
    ids: Vec<u32>,
    len: usize,
    next_id: u32,
}

const EMPTY: (u64, u64) = (0, 0);

impl LocalStacks {
    /// An empty table.
    pub fn new() -> Self {
        LocalStacks {
            keys: vec![EMPTY; 256],
            ids: vec![0; 256],
            len: 0,
            next_id: 1,
        }
    }

    /// Forgets every stack (a forked child starts a new trace).
    pub fn clear(&mut self) {
        self.keys.iter_mut().for_each(|k| *k = EMPTY);
        self.len = 0;
        self.next_id = 1;
    }

    /// Returns the local id of `frames` and whether it is new.
    #[inline]
    pub fn intern(&mut self, frames: &[u64]) -> (u32, bool) {
        if frames.is_empty() {
            return (0, false);
        }
        let key = hash(frames);
        let mask = self.keys.len() - 1;
        let mut i = (key.0 as usize) & mask;
        loop {
            let k = self.keys[i];
            if k == key {
                return (self.ids[i], false);
            }
            if k == EMPTY {
                break;
            }
            i = (i + 1) & mask;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.keys[i] = key;
        self.ids[i] = id;
        self.len += 1;
        if self.len * 2 > self.keys.len() {
            self.grow();
        }
        (id, true)
    }

    fn grow(&mut self) {
        let cap = self.keys.len() * 2;
        let old_keys = std::mem::replace(&mut self.keys, vec![EMPTY; cap]);
        let old_ids = std::mem::replace(&mut self.ids, vec![0; cap]);
        let mask = cap - 1;
        for (k, id) in old_keys.into_iter().zip(old_ids) {
            if k == EMPTY {
                continue;
            }
            let mut i = (k.0 as usize) & mask;
            while self.keys[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.keys[i] = k;
            self.ids[i] = id;
        }
    }
}

#[inline]
fn hash(frames: &[u64]) -> (u64, u64) {
    let mut a: u64 = 0x9E37_79B9_7F4A_7C15 ^ frames.len() as u64;
    let mut b: u64 = 0xC2B2_AE3D_27D4_EB4F;
    for &f in frames {
        a = (a ^ f).wrapping_mul(0xFF51_AFD7_ED55_8CCD).rotate_left(31);
        b = (b ^ f.rotate_left(17))
            .wrapping_mul(0xC4CE_B9FE_1A85_EC53)
            .rotate_left(27);
    }
    // Never produce the empty marker.
    (a | 1, b)
}
