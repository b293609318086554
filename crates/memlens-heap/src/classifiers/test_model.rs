//! Helpers that build small hand-made models for the classifier and tree tests.

use crate::builder::HeapModelBuilder;
use crate::context::FrameInfo;
use crate::ids::StackId;

/// Adds a stack of `(function, module)` frames given outermost first and returns its
/// innermost node. Each call adds fresh nodes, like distinct return addresses would.
pub(crate) fn stack_in(b: &mut HeapModelBuilder, frames: &[(&str, &str)]) -> StackId {
    let mut node = StackId::ROOT;
    for &(function, module) in frames {
        let frame = b.add_frame(FrameInfo {
            function,
            module,
            ..FrameInfo::default()
        });
        node = b.add_stack(node, frame);
    }
    node
}

/// Adds a stack of functions in module `app`, outermost first.
pub(crate) fn stack(b: &mut HeapModelBuilder, functions: &[&str]) -> StackId {
    let frames: Vec<(&str, &str)> = functions.iter().map(|&f| (f, "app")).collect();
    stack_in(b, &frames)
}
