//! Coalescing: a heap model whose memory is bounded by the live set and the unique
//! groups, not by the number of allocations.
//!
//! A memory tree at an instant `I` only asks, of each allocation, whether
//! `t_alloc <= I < t_free`. Given the sorted list of instants a model must answer for
//! (`I_0 < I_1 < …`), that question has the same answer for two allocations whose
//! `t_alloc` falls between the same two instants and whose `t_free` does too. So every
//! allocation segment (a block's life, cut where `realloc` changes its size) is replaced
//! by its *representative* times — the first instant at or after `t_alloc`, the first
//! instant at or after `t_free` — and segments sharing those and every attribute a
//! classifier reads (stack, thread, type, data structure, size classes, kind) become
//! one row carrying their total bytes and their count. Trees, the timeline and growth
//! computed on the rows are exact at every instant; between two instants the model
//! shows the earlier one (a block allocated and freed between two instants is never
//! shown: it was never live at an instant). `age` and `lifetime`, which read the times
//! themselves, are resolved to the spacing of the instants.
//!
//! The instants are the caller's grid (evenly spaced lines, marks, times a user asked
//! for) plus, for every bucket between two grid lines, the instants of the bucket's
//! highest and lowest live heap — so every peak and dip of the timeline is an instant
//! and its tree is exact. Those two are known only when the clock leaves the bucket;
//! until then the segments that ended in it wait in a pending list (bounded by one
//! bucket's frees).
//!
//! A run still being recorded ([`Coalescer::growing`]) has no end to space its grid
//! over: its lines are spaced over a *horizon*, and when the run passes it the horizon
//! doubles and every other line goes, the closed buckets merging in pairs
//! (`coalesce/coarsen.rs`). Each instant keeps the live heap it stands for, so a merged
//! bucket keeps the highest and lowest of its instants; the rows move to the first
//! instant still kept at or after theirs, which is what a coalescer on the coarser grid
//! from the start would have given them. The model stays exact at every instant left.
//!
//! Memory: the open blocks (the live set), the pending list, the distinct groups, and
//! one 32-byte row per distinct (group, instant of birth, instant of death) — bounded by
//! groups × instants², in practice tens to a few thousand rows per group, independent
//! of the run's length. A row's death instant belongs to the bucket in which the block
//! died, so a bucket's rows are summed in a small map when it closes and then only
//! appended: no map of all rows is kept.

mod coarsen;

use rustc_hash::FxHashMap;

use crate::classifiers::size_key;
use crate::ids::{AllocId, StackId, ThreadIndex, TypeId};
use crate::model::{HeapModel, NEVER_FREED};

/// A block that is live, as the coalescer knows it.
#[derive(Clone, Copy)]
struct Open {
    /// Start of the current segment (allocation, or the last size change).
    t_start: u64,
    /// One object's bytes.
    size: u64,
    group: GroupId,
    /// The objects the block stands for (1 unless the trace is sampled: see
    /// [`crate::sampling`]).
    objects: u32,
}

/// The index of a [`Group`] in [`Coalescer::groups`].
type GroupId = u32;

/// What a classifier can read of one allocation, besides its times and size.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Group {
    stack: StackId,
    thread: ThreadIndex,
    ty: TypeId,
    /// The data-structure key of the latest heap walk (0: none).
    container: u64,
    flags: u8,
    /// The size's classes ([`size_key`]): allocations of one row share them, so the
    /// row's mean size has them too.
    size_key: u32,
}

/// A segment that ended in the current bucket, waiting for the bucket's instants.
#[derive(Clone, Copy)]
struct Segment {
    t_start: u64,
    t_end: u64,
    size: u64,
    group: GroupId,
    objects: u32,
}

/// A finished row: `objects` blocks of `bytes` in total.
#[derive(Clone, Copy)]
struct Row {
    key: RowKey,
    bytes: u64,
    objects: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct RowKey {
    group: GroupId,
    /// Index of the representative allocation instant.
    from: u32,
    /// Index of the representative free instant, `u32::MAX` for never freed.
    to: u32,
}

/// The highest and lowest live heap inside a bucket, strictly after its start.
#[derive(Clone, Copy, Default)]
struct Extremes {
    /// (bytes, time) of the highest value seen, when above the carried-in value.
    high: Option<(u64, u64)>,
    /// (bytes, time) of the lowest value seen, when below the carried-in value.
    low: Option<(u64, u64)>,
    /// The live heap when the bucket started.
    carried: u64,
}

/// A growing run's grid.
#[derive(Clone)]
struct Growing {
    /// The number of buckets between 0 and the horizon.
    lines: u64,
    /// The last regular line.
    horizon: u64,
    /// Times that stay instants at every resolution (marks, times asked for), sorted.
    pinned: Vec<u64>,
}

impl Growing {
    /// The regular lines up to the horizon and the pinned times, sorted, distinct.
    fn grid(&self) -> Vec<u64> {
        let (lines, horizon) = (self.lines, u128::from(self.horizon));
        let mut grid: Vec<u64> = (0..=lines)
            .map(|i| (horizon * u128::from(i) / u128::from(lines)) as u64)
            .chain(self.pinned.iter().copied())
            .filter(|&t| t != NEVER_FREED)
            .collect();
        grid.sort_unstable();
        grid.dedup();
        grid
    }
}

/// Turns block lifetimes into coalesced rows. Driven by
/// [`HeapModelBuilder::coalescing`](crate::HeapModelBuilder::coalescing).
#[derive(Clone)]
pub(crate) struct Coalescer {
    /// Bucket ends, ascending, distinct.
    grid: Vec<u64>,
    /// The current bucket is `(grid[next - 1], grid[next]]`.
    next: usize,
    /// Final instants so far, ascending, and the live heap at each.
    instants: Vec<u64>,
    live_at: Vec<u64>,
    /// The grid of a run still being recorded, which coarsens as the run grows.
    growing: Option<Growing>,
    extremes: Extremes,
    /// The last live-heap value settled, carried into the next bucket.
    live: u64,
    open: Vec<Open>,
    vacant: Vec<u32>,
    pending: Vec<Segment>,
    /// The finished rows: every row dying at an instant of a closed bucket. A row's
    /// death instant is one of its bucket's, so no row is added to once the bucket has
    /// closed and they need no map.
    rows: Vec<Row>,
    /// The rows of the bucket being closed (or, at the end, of the blocks never freed).
    batch: FxHashMap<RowKey, (u64, u64)>,
    /// The distinct groups, numbered in order of first use.
    groups: Vec<Group>,
    group_ids: FxHashMap<Group, GroupId>,
    /// Allocations per stack id not yet defined when they were made. Whether the table
    /// ever defines it is known only at the end, and an undefined stack must be counted
    /// once per allocation (as the exact model does), not per row: a row holds many
    /// allocations, a resized block spans several rows, and a block live at no instant
    /// has none.
    stack_uses: FxHashMap<StackId, u64>,
}

impl Coalescer {
    /// A coalescer exact at every time of `grid` (sorted and de-duplicated here).
    pub(crate) fn new(mut grid: Vec<u64>) -> Coalescer {
        grid.sort_unstable();
        grid.dedup();
        grid.retain(|&t| t != NEVER_FREED);
        Coalescer {
            grid,
            next: 0,
            instants: Vec::new(),
            live_at: Vec::new(),
            growing: None,
            extremes: Extremes::default(),
            live: 0,
            open: Vec::new(),
            vacant: Vec::new(),
            pending: Vec::new(),
            rows: Vec::new(),
            batch: FxHashMap::default(),
            groups: Vec::new(),
            group_ids: FxHashMap::default(),
            stack_uses: FxHashMap::default(),
        }
    }

    /// Opens a block; the id stays valid until [`close`](Self::close). `defined` says
    /// whether the stack table already holds `stack` (stacks are never removed).
    /// A sampled allocation's block stands for `objects` objects of `size` bytes.
    pub(crate) fn open(
        &mut self,
        t: u64,
        (size, objects): (u64, u64),
        (stack, defined): (StackId, bool),
        thread: ThreadIndex,
        flags: u8,
    ) -> AllocId {
        if !defined {
            *self.stack_uses.entry(stack).or_insert(0) += 1;
        }
        let block = Open {
            t_start: t,
            size,
            objects: objects.min(u64::from(u32::MAX)) as u32,
            group: self.group_id(Group {
                stack,
                thread,
                ty: TypeId::UNKNOWN,
                container: 0,
                flags,
                size_key: size_key(size),
            }),
        };
        match self.vacant.pop() {
            Some(id) => {
                self.open[id as usize] = block;
                AllocId(id)
            }
            None => {
                self.open.push(block);
                AllocId(self.open.len() as u32 - 1)
            }
        }
    }

    /// Sets the type of an open block.
    pub(crate) fn set_type(&mut self, id: AllocId, ty: TypeId) {
        if let Some(&block) = self.open.get(id.index()) {
            let group = Group {
                ty,
                ..self.groups[block.group as usize]
            };
            self.open[id.index()].group = self.group_id(group);
        }
    }

    /// Sets the data-structure key of an open block from `t` on: its current segment
    /// ends there when the key changes.
    pub(crate) fn set_container(&mut self, id: AllocId, t: u64, container: u64) {
        let Some(&block) = self.open.get(id.index()) else {
            return;
        };
        let group = self.groups[block.group as usize];
        if group.container == container {
            return;
        }
        self.end_segment(block, t);
        self.open[id.index()] = Open {
            t_start: t,
            group: self.group_id(Group { container, ..group }),
            ..block
        };
    }

    /// The id of `group`, numbering it if it is new.
    fn group_id(&mut self, group: Group) -> GroupId {
        if let Some(&id) = self.group_ids.get(&group) {
            return id;
        }
        let id = self.groups.len() as GroupId;
        self.groups.push(group);
        self.group_ids.insert(group, id);
        id
    }

    /// Changes an open block's size at `t`: its current segment ends there.
    pub(crate) fn resize(&mut self, id: AllocId, t: u64, size: u64) {
        let block = self.open[id.index()];
        self.end_segment(block, t);
        self.open[id.index()] = Open {
            t_start: t,
            size,
            group: self.group_id(Group {
                size_key: size_key(size),
                ..self.groups[block.group as usize]
            }),
            objects: block.objects,
        };
    }

    /// Ends an open block at `t`.
    pub(crate) fn close(&mut self, id: AllocId, t: u64) {
        let block = self.open[id.index()];
        self.end_segment(block, t);
        self.vacant.push(id.0);
    }

    /// The live heap after every event at time `t` is `live_bytes`.
    pub(crate) fn settle(&mut self, t: u64, live_bytes: u64) {
        self.advance_to(t);
        let e = &mut self.extremes;
        if live_bytes > e.high.map_or(e.carried, |h| h.0) {
            e.high = Some((live_bytes, t));
        }
        if live_bytes < e.low.map_or(e.carried, |l| l.0) {
            e.low = Some((live_bytes, t));
        }
        self.live = live_bytes;
    }

    /// Makes `t`, at or after the start of the current bucket, an instant (a mark
    /// placed while the run is fed), at every resolution of a growing grid.
    pub(crate) fn pin(&mut self, t: u64) {
        if t == NEVER_FREED {
            return;
        }
        if let Some(growing) = self.growing.as_mut()
            && let Err(at) = growing.pinned.binary_search(&t)
        {
            growing.pinned.insert(at, t);
        }
        let ahead = &self.grid[self.next.min(self.grid.len())..];
        if let Err(at) = ahead.binary_search(&t) {
            self.grid.insert(self.next + at, t);
        }
    }

    /// Closes every bucket that ends before `t` (coarsening a growing grid first when
    /// `t` is past its horizon).
    pub(crate) fn advance_to(&mut self, t: u64) {
        while self.growing.as_ref().is_some_and(|g| t > g.horizon) {
            self.coarsen();
        }
        if self.next >= self.grid.len() {
            // Past the caller's grid: extend it by the last bucket's width.
            let last = self.grid.last().copied().unwrap_or(0);
            let width = match self.grid.len() {
                0 | 1 => 1_000_000_000,
                n => (self.grid[n - 1] - self.grid[n - 2]).max(1),
            };
            if t > last {
                let lines = (t - last).div_ceil(width);
                self.grid
                    .push(last.saturating_add(lines.saturating_mul(width)));
            }
        }
        while self.next < self.grid.len() && self.grid[self.next] < t {
            self.close_bucket();
        }
    }

    /// Ends the run at `end`: closes the buckets up to it and returns the rows, the
    /// blocks still open counted as never freed.
    pub(crate) fn finish(mut self, end: u64, model: &mut HeapModel) {
        self.grid.truncate(self.grid.partition_point(|&g| g < end));
        self.grid.push(end);
        while self.next < self.grid.len() {
            self.close_bucket();
        }
        let mut open = std::mem::take(&mut self.open);
        let mut vacant = std::mem::take(&mut self.vacant);
        vacant.sort_unstable();
        vacant.dedup();
        for id in vacant.into_iter().rev() {
            open.swap_remove(id as usize);
        }
        for block in open {
            self.add_row(Segment {
                t_start: block.t_start,
                t_end: NEVER_FREED,
                size: block.size,
                group: block.group,
                objects: block.objects,
            });
        }
        self.flush_batch();
        self.into_model(model);
    }

    fn end_segment(&mut self, block: Open, t_end: u64) {
        self.pending.push(Segment {
            t_start: block.t_start,
            t_end,
            size: block.size,
            group: block.group,
            objects: block.objects,
        });
    }

    /// Makes the current bucket's extremes and end instants, and turns its pending
    /// segments into rows.
    fn close_bucket(&mut self) {
        let end = self.grid[self.next];
        let first_new = self.instants.len();
        let e = std::mem::take(&mut self.extremes);
        let mut inside: Vec<(u64, u64)> = [e.high, e.low]
            .into_iter()
            .flatten()
            .map(|(bytes, t)| (t, bytes))
            .filter(|&(t, _)| t < end && self.instants.last().is_none_or(|&l| t > l))
            .collect();
        inside.sort_unstable();
        inside.dedup_by_key(|&mut (t, _)| t);
        for (t, bytes) in inside {
            self.instants.push(t);
            self.live_at.push(bytes);
        }
        if self.instants.last().is_none_or(|&l| end > l) {
            self.instants.push(end);
            self.live_at.push(self.live);
        }
        self.next += 1;
        self.extremes.carried = self.live;
        // Every pending segment ended inside this bucket, so its end's instant is one of
        // the (at most three) just added, and so is its start's unless it began in an
        // earlier bucket: most segments resolve without a search, and the many that are
        // live at no instant without touching the rows.
        let first_new = first_new as u32;
        let mut pending = std::mem::take(&mut self.pending);
        for s in pending.drain(..) {
            let new = &self.instants[first_new as usize..];
            let to = first_new + new.partition_point(|&i| i < s.t_end) as u32;
            let from = if first_new == 0 || s.t_start > self.instants[first_new as usize - 1] {
                first_new + new.partition_point(|&i| i < s.t_start) as u32
            } else {
                self.instants[..first_new as usize].partition_point(|&i| i < s.t_start) as u32
            };
            if from != to {
                self.add(s.group, from, to, s);
            }
        }
        self.pending = pending;
        self.flush_batch();
    }

    /// Adds a segment that may have started and ended anywhere (or never ended).
    fn add_row(&mut self, s: Segment) {
        let index = |t: u64| self.instants.partition_point(|&i| i < t) as u32;
        let from = index(s.t_start);
        let to = if s.t_end == NEVER_FREED {
            u32::MAX
        } else {
            index(s.t_end)
        };
        if from == to || from as usize >= self.instants.len() {
            // Never live at an instant.
            return;
        }
        self.add(s.group, from, to, s);
    }

    /// Adds segment `s` (one block, or the objects a sampled one stands for) to the
    /// row of `group` born at instant `from` and dead at instant `to`.
    fn add(&mut self, group: GroupId, from: u32, to: u32, s: Segment) {
        let sum = self
            .batch
            .entry(RowKey { group, from, to })
            .or_insert((0, 0));
        sum.0 += s.size * u64::from(s.objects);
        sum.1 += u64::from(s.objects);
    }

    /// Moves the batch's rows to the finished rows.
    fn flush_batch(&mut self) {
        self.rows
            .extend(self.batch.drain().map(|(key, (bytes, objects))| Row {
                key,
                bytes,
                objects,
            }));
    }

    /// Writes the rows into `model`'s columns, in order of their allocation instant.
    fn into_model(self, m: &mut HeapModel) {
        let mut rows = self.rows;
        // Group ids are numbered in order of first use: deterministic for one trace.
        rows.sort_unstable_by_key(|r| (r.key.from, r.key.to, r.key.group));
        let groups = self.groups;
        let instants = self.instants;
        // Undefined stacks become the root here, counted per allocation, so that the
        // builder's per-row check finds none left.
        let stacks = m.context.stacks.len();
        m.diagnostics.invalid_stack_refs += self
            .stack_uses
            .iter()
            .filter(|(stack, _)| stack.index() >= stacks)
            .map(|(_, &n)| n)
            .sum::<u64>();
        let has_types = groups.iter().any(|g| g.ty != TypeId::UNKNOWN);
        let has_containers = groups.iter().any(|g| g.container != 0);
        for Row {
            key,
            bytes,
            objects: count,
        } in rows
        {
            let group = groups[key.group as usize];
            // A row counts at most u32::MAX objects; split bigger ones evenly.
            let parts = count.div_ceil(u64::from(u32::MAX)).max(1);
            for p in 0..parts {
                let objects = count / parts + u64::from(p < count % parts);
                let size = bytes / parts + u64::from(p < bytes % parts);
                m.t_alloc.push(instants[key.from as usize]);
                m.t_free.push(match key.to {
                    u32::MAX => NEVER_FREED,
                    to => instants[to as usize],
                });
                m.size.push(size);
                m.objects.push(objects as u32);
                m.stack.push(if group.stack.index() < stacks {
                    group.stack
                } else {
                    StackId::ROOT
                });
                m.thread.push(group.thread);
                m.flags.push(group.flags);
                if has_types {
                    m.types.push(group.ty);
                }
                if has_containers {
                    m.containers.push(group.container);
                }
            }
        }
        let mut order: Vec<AllocId> = (0..m.t_free.len() as u32)
            .map(AllocId)
            .filter(|a| m.t_free[a.index()] != NEVER_FREED)
            .collect();
        order.sort_by_key(|a| (m.t_free[a.index()], *a));
        m.free_order = order;
        m.instants = instants;
    }
}
