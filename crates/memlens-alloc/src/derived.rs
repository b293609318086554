//! [`Derived`]: a slot for data that another module derives from a model and keeps with
//! it.
//!
//! The renderer keeps, per model, what every frame needs again (each colouring
//! attribute of every block, the overview's sums). Callers hold only the model, so the
//! model carries those caches; but their types belong to the renderer, and the model
//! does not depend on the renderer: it holds each cache as `dyn Any`, and the module
//! that owns the cache's type is the only one that fills and reads it.

use std::any::Any;
use std::sync::OnceLock;

/// One value of a type its owning module chooses, created on first use.
#[derive(Default)]
pub(crate) struct Derived {
    value: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl Derived {
    /// The value, created by `init` on first use (concurrent first uses wait for one
    /// `init`).
    ///
    /// # Panics
    ///
    /// If the slot was first filled with another type. Each slot has one owning module,
    /// which always asks for the same type, so this does not depend on any input.
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> &T {
        self.value
            .get_or_init(|| Box::new(init()))
            .downcast_ref()
            .expect("a derived-data slot is only used with its owner's type")
    }
}
