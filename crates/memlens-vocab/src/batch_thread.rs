//! A value added up on a thread of its own, fed in batches ([`BatchThread`]): a pass
//! reading a trace's events (one thread, the slowest of its pipeline) pays a push per
//! item, not the additions, which run beside it. The engines use it for what a pass
//! adds up beside its main model (the allocation map's whole run at a glance, the
//! summary beside the heap model).
//!
//! Nothing is started until a batch is full: fewer items than a batch are added up
//! here, at the end. The queue holds a few batches at most, each given back emptied to
//! be filled again: a pass faster than the additions waits for them, so memory stays
//! bounded by `(queued + 2) × batch` items. A copy ([`Clone`]) asks the thread for a
//! copy of its value, so the copy holds exactly what the original has been fed.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

/// What adds up items of type `T`.
pub trait AddUp<T>: Send + 'static {
    /// Adds `items`, in order.
    fn add(&mut self, items: &[T]);
}

/// A value of type `A` adding up items of type `T` on a thread of its own, fed in
/// batches (see the module documentation).
pub struct BatchThread<A: AddUp<T>, T: Send + 'static> {
    batch: usize,
    queued: usize,
    pending: Vec<T>,
    place: Place<A, T>,
}

/// Where the value is.
enum Place<A, T> {
    /// Here (no batch was full yet).
    Here(Box<A>),
    /// Moving to its thread (only within `hand_over`).
    Moving,
    /// On its thread.
    Away {
        asks: SyncSender<Ask<A, T>>,
        /// Batches the thread is done with, to be filled again.
        spent: Receiver<Vec<T>>,
        thread: JoinHandle<A>,
    },
}

/// What the thread is asked.
enum Ask<A, T> {
    /// Add these items.
    Add(Vec<T>),
    /// Look at the value so far (to send a copy of it back).
    Look(Box<dyn FnOnce(&A) + Send>),
}

impl<A: AddUp<T>, T: Send + 'static> BatchThread<A, T> {
    /// `value`, fed batches of `batch` items (at least 1), at most `queued` of them
    /// waiting for the thread.
    pub fn new(value: A, batch: usize, queued: usize) -> BatchThread<A, T> {
        BatchThread {
            batch: batch.max(1),
            queued,
            pending: Vec::new(),
            place: Place::Here(Box::new(value)),
        }
    }

    /// Feeds one item.
    #[inline]
    pub fn push(&mut self, item: T) {
        self.pending.push(item);
        if self.pending.len() >= self.batch {
            self.hand_over();
        }
    }

    /// Hands the pending items to the thread, starting it the first time.
    fn hand_over(&mut self) {
        if let Place::Here(_) = self.place {
            let Place::Here(value) = std::mem::replace(&mut self.place, Place::Moving) else {
                unreachable!("the value was here")
            };
            let (asks, received) = sync_channel(self.queued);
            let (give_back, spent) = channel();
            let thread = std::thread::spawn(move || add_up(*value, received, give_back));
            self.place = Place::Away {
                asks,
                spent,
                thread,
            };
        }
        let Place::Away { asks, spent, .. } = &self.place else {
            unreachable!("the value is on its thread")
        };
        let empty = spent
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.batch));
        let batch = std::mem::replace(&mut self.pending, empty);
        // The thread only stops when the sender is dropped (in `finish`).
        let _ = asks.send(Ask::Add(batch));
    }

    /// Whether the value is on its thread (a batch was full).
    pub fn on_its_thread(&self) -> bool {
        matches!(self.place, Place::Away { .. })
    }

    /// The value, every item fed added up.
    pub fn finish(self) -> A {
        let mut value = match self.place {
            Place::Here(value) => *value,
            Place::Away { asks, thread, .. } => {
                drop(asks);
                match thread.join() {
                    Ok(value) => value,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Place::Moving => unreachable!("only within `hand_over`"),
        };
        value.add(&self.pending);
        value
    }
}

impl<A: AddUp<T> + Clone, T: Send + Clone + 'static> Clone for BatchThread<A, T> {
    /// A feed that has been fed the same items, its value here.
    fn clone(&self) -> BatchThread<A, T> {
        let value = match &self.place {
            Place::Here(value) => value.clone(),
            Place::Away { asks, .. } => {
                let (reply, copy) = sync_channel(1);
                let look = move |value: &A| {
                    let _ = reply.send(value.clone());
                };
                let copied = asks
                    .send(Ask::Look(Box::new(look)))
                    .ok()
                    .and_then(|()| copy.recv().ok());
                let Some(value) = copied else {
                    unreachable!("the thread answers while its feed lives")
                };
                Box::new(value)
            }
            Place::Moving => unreachable!("only within `hand_over`"),
        };
        BatchThread {
            batch: self.batch,
            queued: self.queued,
            pending: self.pending.clone(),
            place: Place::Here(value),
        }
    }
}

/// The thread: adds up the batches, giving each back emptied, and lets copies look,
/// until the feed hangs up; then hands back the value.
fn add_up<A: AddUp<T>, T>(mut value: A, asks: Receiver<Ask<A, T>>, give_back: Sender<Vec<T>>) -> A {
    for ask in asks {
        match ask {
            Ask::Add(mut batch) => {
                value.add(&batch);
                batch.clear();
                // The feed may be finishing and no longer take it back.
                let _ = give_back.send(batch);
            }
            Ask::Look(look) => look(&value),
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items added, in order.
    #[derive(Clone, Default, Debug, PartialEq)]
    struct Seen(Vec<u64>);

    impl AddUp<u64> for Seen {
        fn add(&mut self, items: &[u64]) {
            self.0.extend_from_slice(items);
        }
    }

    #[test]
    fn items_added_on_the_thread_are_every_item_in_order_and_a_copy_goes_on_alone() {
        let mut feed = BatchThread::new(Seen::default(), 7, 2);
        let mut copy = None;
        for i in 0..100u64 {
            feed.push(i);
            if i == 50 {
                copy = Some(feed.clone());
            }
        }
        assert!(feed.on_its_thread());
        assert_eq!(feed.finish(), Seen((0..100).collect()));
        let mut copy = copy.expect("a copy was made");
        copy.push(1000);
        assert_eq!(copy.finish(), Seen((0..=50).chain([1000]).collect()));
    }

    #[test]
    fn fewer_items_than_a_batch_start_no_thread() {
        let mut feed = BatchThread::new(Seen::default(), 7, 2);
        (0..6).for_each(|i| feed.push(i));
        assert!(!feed.on_its_thread());
        assert_eq!(feed.finish(), Seen((0..6).collect()));
    }
}
