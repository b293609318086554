//! Source-statement labels and the per-trace tables that give handles their meaning.
//!
//! Every reference a built-in kernel produces carries a [`LabelId`] naming the
//! statement and operand that made it (`C[i][j] += A[i][k]*B[k][j]: load A[i][k]`), so
//! a viewer can show the code behind a glyph's motion. [`TraceInfo`] bundles the label
//! table with the region table: it is everything needed to interpret a reference
//! stream beyond the raw addresses.

use crate::reference::LabelId;
use crate::region::RegionTable;

/// Interned label strings.
///
/// Invariant: label `i` (1-based) has id `LabelId(i)`; id 0 means "no label".
#[derive(Clone, Debug, Default)]
pub struct LabelTable {
    labels: Vec<String>,
}

impl LabelTable {
    /// Makes an empty table.
    pub fn new() -> LabelTable {
        LabelTable::default()
    }

    /// Adds a label (or finds an equal one) and returns its id.
    ///
    /// Returns `None` when the table is full (65,535 labels).
    pub fn intern(&mut self, text: &str) -> Option<LabelId> {
        if let Some(i) = self.labels.iter().position(|l| l == text) {
            return Some(LabelId((i + 1) as u16));
        }
        let id = LabelId(u16::try_from(self.labels.len() + 1).ok()?);
        self.labels.push(text.to_owned());
        Some(id)
    }

    /// Returns the text of a label, or `None` for [`LabelId::NONE`] and unknown ids.
    pub fn get(&self, id: LabelId) -> Option<&str> {
        usize::from(id.0)
            .checked_sub(1)
            .and_then(|i| self.labels.get(i))
            .map(String::as_str)
    }

    /// Returns the number of labels.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Returns true when the table holds no label.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Iterates over `(id, text)` pairs in id order.
    pub fn iter(&self) -> impl Iterator<Item = (LabelId, &str)> {
        self.labels
            .iter()
            .enumerate()
            .map(|(i, l)| (LabelId((i + 1) as u16), l.as_str()))
    }
}

/// What a reference stream's handles mean: its regions and its labels.
#[derive(Clone, Debug, Default)]
pub struct TraceInfo {
    /// The named address ranges.
    pub regions: RegionTable,
    /// The source-statement labels.
    pub labels: LabelTable,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_returns_stable_one_based_ids() {
        let mut table = LabelTable::new();
        let a = table.intern("load A").unwrap();
        let b = table.intern("load B").unwrap();
        assert_eq!(a, LabelId(1));
        assert_eq!(table.intern("load A"), Some(a));
        assert_eq!(table.get(b), Some("load B"));
        assert_eq!(table.get(LabelId::NONE), None);
    }
}
