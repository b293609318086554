//! Replacement policies: which way of a full set gives up its line, and the eviction
//! order the ring view draws along each spiral arm.
//!
//! The state is kept apart from the slots so that ways keep a fixed physical position,
//! which the viewer needs to place glyphs. Every policy keeps, per set, a queue of its
//! ways ([`crate::order`]): LRU, Random and tree-PLRU in recency order (a demand
//! access or a fill moves the way to the front), FIFO in fill order. Emptied ways go
//! to the back, so empty ways always form the back of the queue and are filled first.
//! The victim is then the back of the queue for LRU and FIFO; Random draws a way from
//! a seeded generator and tree-PLRU follows its tree bits (one per inner node of a
//! binary tree over the ways, packed into a `u64` per set) once the set is full.
//! The front of the queue doubles as the lookup hint for the most recent line.

use crate::config::Replacement;
use crate::order::OrderQueues;

/// The policy family, without parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PolicyKind {
    Lru,
    Fifo,
    Random,
    TreePlru,
}

/// The replacement state of one level.
#[derive(Clone, Debug)]
pub(crate) struct ReplacementState {
    kind: PolicyKind,
    ways: usize,
    order: OrderQueues,
    /// Per set (tree-PLRU), node `k` (1-based heap order) is bit `k`. A set bit means
    /// "the victim is in the right subtree".
    plru: Vec<u64>,
    rng: u64,
}

/// Mixes a seed into a non-zero generator state (splitmix64 finaliser).
fn seed_state(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

impl ReplacementState {
    /// Makes the state for `sets × ways` empty slots (at most 65,536 ways).
    pub(crate) fn new(replacement: Replacement, sets: usize, ways: usize) -> ReplacementState {
        let (kind, seed) = match replacement {
            Replacement::Lru => (PolicyKind::Lru, 0),
            Replacement::Fifo => (PolicyKind::Fifo, 0),
            Replacement::Random { seed } => (PolicyKind::Random, seed),
            Replacement::TreePlru => (PolicyKind::TreePlru, 0),
        };
        ReplacementState {
            kind,
            ways,
            order: OrderQueues::new(sets, ways),
            plru: if kind == PolicyKind::TreePlru {
                vec![0; sets]
            } else {
                Vec::new()
            },
            rng: seed_state(seed),
        }
    }

    /// Returns, for LRU and FIFO levels of at most 16 ways, whether the policy is LRU
    /// and the packed queues, which is all the lean fast path needs.
    #[inline(always)]
    pub(crate) fn lean_parts(&mut self) -> Option<(bool, &mut [u64])> {
        let lru = match self.kind {
            PolicyKind::Lru => true,
            PolicyKind::Fifo => false,
            PolicyKind::Random | PolicyKind::TreePlru => return None,
        };
        self.order.packed_mut().map(|queues| (lru, queues))
    }

    /// Returns the way at the front of the set's queue: the most recently used (or,
    /// for FIFO, filled) way, a good first guess for a lookup.
    #[inline(always)]
    pub(crate) fn front(&self, set: usize) -> usize {
        self.order.front(set)
    }

    /// Records a demand access that hit `way` of `set`.
    #[inline(always)]
    pub(crate) fn on_hit(&mut self, set: usize, way: usize) {
        match self.kind {
            PolicyKind::Lru | PolicyKind::Random => self.order.move_to_front(set, way),
            PolicyKind::Fifo => {}
            PolicyKind::TreePlru => {
                self.order.move_to_front(set, way);
                plru_touch(&mut self.plru[set], self.ways, way);
            }
        }
    }

    /// Records that a line was just placed in `way` of `set`.
    #[inline(always)]
    pub(crate) fn on_fill(&mut self, set: usize, way: usize) {
        // The filled way is almost always the victim at the back of the queue.
        if self.order.back(set) == way {
            self.order.back_to_front(set);
        } else {
            self.order.move_to_front(set, way);
        }
        if self.kind == PolicyKind::TreePlru {
            plru_touch(&mut self.plru[set], self.ways, way);
        }
    }

    /// Records that `way` of `set` was emptied: it becomes the next to be filled.
    pub(crate) fn on_invalidate(&mut self, set: usize, way: usize) {
        self.order.move_to_back(set, way);
    }

    /// Chooses the way of `set` to fill next: an empty way if there is one, else the
    /// policy's victim. `tags` are the set's slots, `empty` the tag of an empty slot.
    #[inline(always)]
    pub(crate) fn victim(&mut self, set: usize, tags: &[u64], empty: u64) -> usize {
        let back = self.order.back(set);
        match self.kind {
            PolicyKind::Lru | PolicyKind::Fifo => back,
            _ if tags[back] == empty => back,
            PolicyKind::Random => (self.next_random() % self.ways as u64) as usize,
            PolicyKind::TreePlru => plru_victim(self.plru[set], self.ways),
        }
    }

    /// Returns the eviction rank of `way` in `set`: 0 for the line that would be
    /// evicted last, `ways - 1` for the next victim. Empty ways rank as if they were
    /// evicted first. For Random, whose victims have no order, the rank is recency.
    pub(crate) fn rank(&self, set: usize, way: usize) -> u32 {
        match self.kind {
            PolicyKind::Lru | PolicyKind::Random | PolicyKind::Fifo => {
                self.order.position(set, way) as u32
            }
            PolicyKind::TreePlru => {
                let mut bits = self.plru[set];
                for step in 0..self.ways {
                    let next = plru_victim(bits, self.ways);
                    if next == way {
                        return (self.ways - 1 - step) as u32;
                    }
                    plru_touch(&mut bits, self.ways, next);
                }
                0
            }
        }
    }

    /// Returns the rank of a line that was just accessed, cheaply where the policy
    /// makes it obvious (an access makes the line the last LRU, Random or PLRU victim).
    #[inline]
    pub(crate) fn rank_after_access(&self, set: usize, way: usize) -> u32 {
        match self.kind {
            PolicyKind::Lru | PolicyKind::Random | PolicyKind::TreePlru => 0,
            PolicyKind::Fifo => self.rank(set, way),
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: small, fast and good enough to spread victims over the ways.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Points every node on the path to `way` away from it.
#[inline]
fn plru_touch(bits: &mut u64, ways: usize, way: usize) {
    let depth = ways.trailing_zeros();
    let mut node = 1usize;
    for level in (0..depth).rev() {
        let right = (way >> level) & 1;
        if right == 1 {
            *bits &= !(1u64 << node);
        } else {
            *bits |= 1u64 << node;
        }
        node = node * 2 + right;
    }
}

/// Follows the tree bits from the root to the way they point at.
#[inline]
fn plru_victim(bits: u64, ways: usize) -> usize {
    let mut node = 1usize;
    while node < ways {
        node = node * 2 + ((bits >> node) & 1) as usize;
    }
    node - ways
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: u64 = u64::MAX;

    #[test]
    fn plru_cycles_through_every_way_when_each_victim_is_touched() {
        let mut bits = 0;
        let mut seen = Vec::new();
        for _ in 0..8 {
            let v = plru_victim(bits, 8);
            seen.push(v);
            plru_touch(&mut bits, 8, v);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn plru_victim_avoids_the_most_recent_half() {
        // Touch ways 0,1,2,3 in order: the root points right (ways 4..8) and, after
        // touching 4, it points back left, away from 4.
        let mut bits = 0;
        for way in 0..4 {
            plru_touch(&mut bits, 8, way);
        }
        assert!(plru_victim(bits, 8) >= 4);
        plru_touch(&mut bits, 8, 4);
        assert!(plru_victim(bits, 8) < 4);
        // Ranks form a permutation, with the touched way safest.
        let mut state = ReplacementState::new(Replacement::TreePlru, 1, 8);
        state.plru[0] = bits;
        for way in 0..8 {
            state.order.move_to_front(0, way);
        }
        let mut ranks: Vec<u32> = (0..8).map(|w| state.rank(0, w)).collect();
        assert_eq!(state.rank(0, 4), 0);
        assert_eq!(state.rank(0, plru_victim(bits, 8)), 7);
        ranks.sort_unstable();
        assert_eq!(ranks, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn lru_and_fifo_pick_empty_ways_first_then_the_back_of_the_queue() {
        for policy in [Replacement::Lru, Replacement::Fifo] {
            let mut state = ReplacementState::new(policy, 1, 4);
            let mut tags = [EMPTY; 4];
            for (way, tag) in tags.iter_mut().enumerate().take(3) {
                assert_eq!(state.victim(0, &[EMPTY; 4], EMPTY), way);
                state.on_fill(0, way);
                *tag = way as u64;
            }
            assert_eq!(state.rank(0, 2), 0);
            assert_eq!(state.rank(0, 0), 2);
            assert_eq!(state.victim(0, &tags, EMPTY), 3);
            state.on_fill(0, 3);
            tags[3] = 3;
            state.on_hit(0, 0);
            let expected = if policy == Replacement::Lru { 1 } else { 0 };
            assert_eq!(state.victim(0, &tags, EMPTY), expected, "{policy:?}");
            state.on_invalidate(0, 2);
            assert_eq!(state.victim(0, &tags, EMPTY), 2);
        }
    }

    #[test]
    fn random_is_reproducible_for_a_seed_and_fills_empty_ways_first() {
        let tags = [1, 2, 3, 4];
        let draw = |seed| {
            let mut state = ReplacementState::new(Replacement::Random { seed }, 1, 4);
            (0..32)
                .map(|_| state.victim(0, &tags, EMPTY))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
        assert!(draw(5).iter().all(|&w| w < 4));
        let mut state = ReplacementState::new(Replacement::Random { seed: 5 }, 1, 4);
        state.on_fill(0, 0);
        state.on_fill(0, 2);
        assert_eq!(state.victim(0, &[1, EMPTY, 3, EMPTY], EMPTY), 1);
    }
}
