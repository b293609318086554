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

    /// Doubles the table (rare: kept out of line so the lookup stays small).
    #[cold]
    #[inline(never)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_stack_is_id_zero_and_never_sent() {
        let mut t = LocalStacks::new();
        assert_eq!(t.intern(&[]), (0, false));
    }

    #[test]
    fn ids_are_dense_and_stable() {
        let mut t = LocalStacks::new();
        assert_eq!(t.intern(&[1, 2, 3]), (1, true));
        assert_eq!(t.intern(&[1, 2]), (2, true));
        assert_eq!(t.intern(&[3, 2, 1]), (3, true));
        assert_eq!(t.intern(&[1, 2, 3]), (1, false));
        assert_eq!(t.intern(&[1, 2]), (2, false));
    }

    #[test]
    fn growing_keeps_every_id() {
        let mut t = LocalStacks::new();
        let stacks: Vec<Vec<u64>> = (0..5_000u64).map(|i| vec![i, i * 7 + 1, 0x4000]).collect();
        for (i, s) in stacks.iter().enumerate() {
            assert_eq!(t.intern(s), (i as u32 + 1, true));
        }
        assert!(t.keys.len() >= 2 * stacks.len());
        for (i, s) in stacks.iter().enumerate() {
            assert_eq!(t.intern(s), (i as u32 + 1, false));
        }
    }

    #[test]
    fn clear_starts_over() {
        let mut t = LocalStacks::new();
        t.intern(&[1]);
        t.intern(&[2]);
        t.clear();
        assert_eq!(t.intern(&[2]), (1, true));
    }

    #[test]
    fn hash_is_never_the_empty_marker() {
        assert_ne!(hash(&[0]), EMPTY);
        assert_ne!(hash(&[]), EMPTY);
    }
}
