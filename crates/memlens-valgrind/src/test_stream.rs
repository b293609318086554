//! Builds word streams as the tool writes them, for the tests of the decoder and
//! the encoder.

use crate::protocol::{SITE_SHIFT, TYPE_SHIFT};

/// A stream under construction.
#[derive(Default)]
pub(crate) struct TestStream {
    pub words: Vec<u64>,
}

impl TestStream {
    /// Appends a control record: `words`, then `text` as a string if given.
    pub fn control(&mut self, record: u8, words: &[u64], text: Option<&str>) -> &mut Self {
        let mut payload = words.to_vec();
        if let Some(text) = text {
            payload.push(text.len() as u64);
            for chunk in text.as_bytes().chunks(8) {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                payload.push(u64::from_le_bytes(word));
            }
        }
        self.words
            .push(u64::from(record) << TYPE_SHIFT | payload.len() as u64);
        self.words.extend(payload);
        self
    }

    /// Appends a reference word.
    pub fn reference(&mut self, site: u64, address: u64) -> &mut Self {
        self.words.push(site << SITE_SHIFT | address);
        self
    }

    /// The stream's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
