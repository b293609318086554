//! The lens's images at the edge: PNG encoding of the engine's RGBA images, and a
//! least-recently-used cache of recent answers (tiles, bars), so panning back and
//! forth, a second view of the same window, or a page reload cost a lookup.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use memlens_alloc::RgbaImage;

/// Encodes `img` as an 8-bit RGBA PNG (fast compression: tiles are mostly flat).
pub fn encode_png(img: &RgbaImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(img.pixels.len() / 8 + 64);
    {
        let mut enc = png::Encoder::new(&mut out, img.width, img.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        // Writing to a Vec cannot fail, and the engine's images always have
        // width × height × 4 bytes.
        let mut writer = enc.write_header().expect("PNG header into memory");
        writer
            .write_image_data(&img.pixels)
            .expect("PNG data of a well-formed image");
        writer.finish().expect("PNG end into memory");
    }
    out
}

struct Entry {
    used: u64,
    bytes: Arc<Vec<u8>>,
}

struct Inner {
    entries: HashMap<String, Entry>,
    clock: u64,
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
                entries: HashMap::new(),
                clock: 0,
                total: 0,
            }),
            budget,
        }
    }

    /// The answer for `key`, if cached (and marks it recently used).
    pub fn get(&self, key: &str) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.entries.get_mut(key)?;
        entry.used = now;
        Some(Arc::clone(&entry.bytes))
    }

    /// Keeps `bytes` for `key`, dropping the least recently used answers beyond the budget.
    pub fn put(&self, key: String, bytes: Arc<Vec<u8>>) {
        if bytes.len() > self.budget {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        let used = inner.clock;
        inner.total += bytes.len();
        if let Some(old) = inner.entries.insert(key, Entry { used, bytes }) {
            inner.total -= old.bytes.len();
        }
        while inner.total > self.budget {
            let Some(oldest) = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = inner.entries.remove(&oldest) {
                inner.total -= e.bytes.len();
            }
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
