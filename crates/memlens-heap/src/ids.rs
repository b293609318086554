//! Typed `u32` handles into the model's columnar tables.
//!
//! Every table in the model is a set of parallel `Vec`s indexed by one of these handles,
//! so a handle is four bytes and never owns anything. Each type states what index 0
//! means: for stacks, frames, strings and types, 0 is a reserved "root" or "unknown"
//! entry that always exists, so a handle of 0 is always valid.

use std::fmt;

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);

        impl $name {
            /// The handle as a `usize`, for indexing the table's columns.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }
    };
}

typed_id!(
    /// One allocation (one block, followed through `realloc`).
    ///
    /// Allocation ids are dense and given in allocation order, which is time order:
    /// `t_alloc` never decreases with the id. There is no reserved value.
    AllocId
);

typed_id!(
    /// A node of the stack prefix tree.
    ///
    /// 0 means the root: the empty stack, used for allocations without a stack. Every
    /// other node has a parent with a smaller id ("parents come before children").
    StackId
);

typed_id!(
    /// One symbolized frame.
    ///
    /// 0 means the unknown frame (empty function, file and module). A frame that was
    /// inlined names the frame it was inlined into, which always has a smaller id.
    FrameId
);

typed_id!(
    /// An interned string.
    ///
    /// 0 means the empty string, which stands for "unknown" in names and files.
    StringId
);

typed_id!(
    /// A dense index of one recorded thread, in order of first appearance.
    ///
    /// There is no reserved value; the operating-system thread id is kept beside it in
    /// the thread table.
    ThreadIndex
);

typed_id!(
    /// An allocated type (for traces that know types, such as Java traces).
    ///
    /// 0 means "type unknown"; it is what every allocation carries unless the caller sets
    /// a type.
    TypeId
);

impl StackId {
    /// The empty stack, the root of the prefix tree.
    pub const ROOT: StackId = StackId(0);
}

impl FrameId {
    /// The unknown frame.
    pub const UNKNOWN: FrameId = FrameId(0);
}

impl StringId {
    /// The empty string.
    pub const EMPTY: StringId = StringId(0);
}

impl TypeId {
    /// The unknown type.
    pub const UNKNOWN: TypeId = TypeId(0);
}
