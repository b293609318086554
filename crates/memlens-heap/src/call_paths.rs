//! The dominant call path of each growth suspect, for the `memlens growth` table: the
//! same classifiers followed by `call-path`, as unpruned trees at the window's start
//! and end, ordered by growth; below each suspect we follow the child that grew most.
//! Only the blocks live at those two times are classified, so this costs far less
//! than the ranking itself.
//!
//! The path is trimmed by the frame policy: from the allocation site (the innermost
//! frame that can be a site) out to the outermost such frame, so the allocator's
//! frames at one end and the C runtime's start-up code at the other are left out.

use rustc_hash::FxHashSet;

use crate::SortStrategy;
use crate::classifiers::parse_classifiers;
use crate::error::HeapError;
use crate::growth::GrowthQuery;
use crate::ids::FrameId;
use crate::model::HeapModel;
use crate::output::{Node, Suspect};
use crate::query::{TreeQuery, memory_trees};
use crate::skeleton::TreeOptions;
use crate::snapshots::SnapshotTimes;

/// The dominant call path of each of `suspects` (ranked under `query`), innermost frame
/// first, at most `max_frames` frames each.
pub fn dominant_call_paths(
    model: &HeapModel,
    query: &GrowthQuery,
    suspects: &[Suspect],
    max_frames: usize,
) -> Result<Vec<Vec<String>>, HeapError> {
    if suspects.is_empty() {
        return Ok(Vec::new());
    }
    let classifiers = &query.classifiers;
    let names = classifiers.names().join(",");
    let with_paths =
        parse_classifiers(&format!("{names},call-path"), classifiers.options().clone())?;
    let window = query.window.unwrap_or(model.run());
    let tree_query = TreeQuery {
        classifiers: with_paths,
        times: SnapshotTimes::Explicit(vec![window.start_ns, window.end_ns]),
        window: None,
        options: TreeOptions {
            sort: SortStrategy::AbsoluteGrowth,
            prune: None,
            ..TreeOptions::default()
        },
    };
    let trees = memory_trees(model, &tree_query)?;
    let Some(last) = trees.trees.last() else {
        return Ok(vec![Vec::new(); suspects.len()]);
    };
    // Call-path keys are function names: a name is a possible site when some frame of
    // that name can be one under the frame policy.
    let cx = model.context();
    let site_functions: FxHashSet<&str> = (0..cx.frames.len())
        .map(|f| FrameId(f as u32))
        .filter(|&f| cx.frames.kind(f).can_be_site())
        .map(|f| cx.function(f))
        .filter(|name| !name.is_empty())
        .collect();
    let can_be_site = |f: &String| site_functions.contains(f.as_str());
    Ok(suspects
        .iter()
        .map(|s| {
            let mut frames = Vec::new();
            let mut node: Option<&Node> = last.root.find(&s.full_key);
            // Children are ordered by growth, largest first.
            while let Some(child) = node
                .and_then(|n| n.children.first())
                .filter(|c| c.growth_bytes > 0)
            {
                frames.push(child.key.clone());
                node = Some(child);
            }
            // Outermost first so far: drop the runtime's frames around `main`, then
            // turn the path round and drop the allocator's frames at the inner end.
            let outer = frames.iter().position(can_be_site).unwrap_or(0);
            frames.drain(..outer);
            frames.reverse();
            let inner = frames.iter().position(can_be_site).unwrap_or(0);
            frames.drain(..inner);
            frames.truncate(max_frames);
            frames
        })
        .collect())
}
