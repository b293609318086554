//! A value behind a plain pthread mutex that a forked child can take over.
//!
//! `std::sync::Mutex` cannot be reset in a forked child, where a thread that
//! held it may no longer exist; this one can. No allocation waits for one of
//! these locks: the only one an allocation hook takes is the writer's, with
//! `try_with`, in a sampled recording that writes from the program's threads
//! (`rounds.rs`), at most every 10 ms.

use core::cell::UnsafeCell;

/// A value and the mutex that guards it.
pub struct Locked<T> {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only touched with `lock` held (or in a single-threaded
// forked child, by `reset`).
unsafe impl<T> Sync for Locked<T> {}

impl<T> Locked<T> {
    /// An unlocked value (usable in a `static`).
    pub const fn new(value: T) -> Self {
        Locked {
            lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value with the lock held.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the mutex serialises access to `value`.
        unsafe {
            libc::pthread_mutex_lock(self.lock.get());
            let r = f(&mut *self.value.get());
            libc::pthread_mutex_unlock(self.lock.get());
            r
        }
    }

    /// Runs `f` on the value if the lock is free now; `None` (and `f` not run)
    /// when another thread, or this one further up its stack, holds it.
    pub fn try_with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        // SAFETY: the mutex serialises access to `value`; it is only used once
        // taken.
        unsafe {
            if libc::pthread_mutex_trylock(self.lock.get()) != 0 {
                return None;
            }
            let r = f(&mut *self.value.get());
            libc::pthread_mutex_unlock(self.lock.get());
            Some(r)
        }
    }

    /// Takes the lock and keeps it (`fork` prepare).
    pub fn lock(&self) {
        // SAFETY: statically initialised mutex.
        unsafe { libc::pthread_mutex_lock(self.lock.get()) };
    }

    /// Releases the lock taken by [`Locked::lock`] (`fork`, parent side).
    pub fn unlock(&self) {
        // SAFETY: called by the holder.
        unsafe { libc::pthread_mutex_unlock(self.lock.get()) };
    }

    /// In a forked child: the lock may have been held by a thread that does
    /// not exist here; start over with `value` (the old one is abandoned).
    pub fn reset(&self, value: T) {
        core::mem::forget(self.take_in_child(value));
    }

    /// As [`Locked::reset`], handing the old value to the caller.
    pub fn take_in_child(&self, value: T) -> T {
        // SAFETY: single-threaded child.
        unsafe {
            *self.lock.get() = libc::PTHREAD_MUTEX_INITIALIZER;
            core::mem::replace(&mut *self.value.get(), value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_lock_reset() {
        let l = Locked::new(vec![1]);
        l.with(|v| v.push(2));
        assert_eq!(l.with(|v| v.clone()), [1, 2]);
        // Held (here by this thread): `try_with` does not run.
        l.lock();
        assert_eq!(l.try_with(|v| v.len()), None);
        l.unlock();
        assert_eq!(l.try_with(|v| v.len()), Some(2));
        // A lock left taken (as a fork child can inherit it) is recovered.
        l.lock();
        l.reset(vec![3]);
        assert_eq!(l.with(|v| v.clone()), [3]);
    }
}
