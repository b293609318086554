//! The lens's images at the edge: PNG encoding of the engine's RGBA images, and a
//! least-recently-used cache of recent answers (tiles, bars), so panning back and
//! forth, a second view of the same window, or a page reload cost a lookup.

use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use memlens_alloc::RgbaImage;

/// Encodes `img` as an 8-bit RGBA PNG ([`RgbaImage::to_png`]: fast compression, tiles
/// are mostly flat).
pub fn encode_png(img: &RgbaImage) -> Vec<u8> {
    img.to_png()
}

struct Inner {
    entries: LruCache<String, Arc<Vec<u8>>>,
    /// The bytes held by `entries`.
    total: usize,
}

/// Recent answers by their canonical request, up to a byte budget.
pub struct ImageCache {
    inner: Mutex<Inner>,
    budget: usize,
}

impl ImageCache {
    /// A cache holding at most `budget` bytes.
    pub fn new(budget: usize) -> ImageCache {
        ImageCache {
            inner: Mutex::new(Inner {
                // Bounded by bytes below, not by a count of answers.
                entries: LruCache::unbounded(),
                total: 0,
            }),
            budget,
        }
    }

    /// The answer for `key`, if cached (and marks it recently used).
    pub fn get(&self, key: &str) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.entries.get(key).map(Arc::clone)
    }

    /// Keeps `bytes` for `key`, dropping the least recently used answers beyond the budget.
    pub fn put(&self, key: String, bytes: Arc<Vec<u8>>) {
        if bytes.len() > self.budget {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.total += bytes.len();
        if let Some(old) = inner.entries.put(key, bytes) {
            inner.total -= old.len();
        }
        // The new answer is the most recently used, and fits alone: it stays.
        while inner.total > self.budget {
            let Some((_, oldest)) = inner.entries.pop_lru() else {
                break;
            };
            inner.total -= oldest.len();
        }
    }

    /// Answers cached now.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_answers_leave_first() {
        let cache = ImageCache::new(10);
        cache.put("a".into(), Arc::new(vec![0; 4]));
        cache.put("b".into(), Arc::new(vec![0; 4]));
        assert!(cache.get("a").is_some());
        cache.put("c".into(), Arc::new(vec![0; 4]));
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        cache.put("huge".into(), Arc::new(vec![0; 11]));
        assert!(cache.get("huge").is_none());
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn png_starts_with_its_signature() {
        let img = RgbaImage::new(3, 2);
        let bytes = encode_png(&img);
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    }
}
