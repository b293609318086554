//! The per-address cache: each unique address is symbolized once.
//!
//! A trace has millions of stack frames but only thousands of unique return addresses,
//! so the symbolizer remembers the frames of every address it has resolved, including
//! the unresolvable ones. Entries are shared (`Arc`), so a cache hit costs a hash lookup
//! and a reference-count increment.

use std::collections::HashMap;
use std::sync::Arc;

use crate::frame::Frame;

/// Frames per address, as the caller gave the address (not `address - 1`).
#[derive(Debug, Default)]
pub(crate) struct AddressCache {
    entries: HashMap<u64, Arc<[Frame]>>,
}

impl AddressCache {
    /// Returns the cached frames for `address`.
    pub fn get(&self, address: u64) -> Option<&Arc<[Frame]>> {
        self.entries.get(&address)
    }

    /// Returns `true` if `address` has been symbolized.
    pub fn contains(&self, address: u64) -> bool {
        self.entries.contains_key(&address)
    }

    /// Stores the frames for `address`.
    pub fn insert(&mut self, address: u64, frames: Arc<[Frame]>) {
        self.entries.insert(address, frames);
    }

    /// Forgets every address whose lookup address (`address - 1`) lies in
    /// `[start, end)`, because the module there changed.
    pub fn forget_range(&mut self, start: u64, end: u64) {
        self.entries.retain(|&address, _| {
            let lookup = address.wrapping_sub(1);
            !(start <= lookup && lookup < end)
        });
    }

    /// Returns the number of cached addresses.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forget_range_uses_lookup_address() {
        let mut cache = AddressCache::default();
        let frames: Arc<[Frame]> = Arc::from(vec![Frame::unresolved(None)]);
        for address in [0x1000, 0x1001, 0x2000, 0x2001] {
            cache.insert(address, frames.clone());
        }
        cache.forget_range(0x1000, 0x2000);
        // 0x1000 looks up 0xfff and 0x2000 looks up 0x1fff.
        assert!(cache.contains(0x1000));
        assert!(!cache.contains(0x1001));
        assert!(!cache.contains(0x2000));
        assert!(cache.contains(0x2001));
        assert_eq!(cache.len(), 2);
    }
}
