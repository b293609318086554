//! Strongly connected components of a directed graph (Tarjan's algorithm): two
//! modules are in one component exactly when each depends on the other, directly or
//! through others, so every component of more than one node is an import cycle.

/// The strongly connected components of the graph whose node `v` has the edges
/// `successors[v]`. Every node is in exactly one component; components come in reverse
/// topological order (a component comes before every component that depends on it),
/// and nodes within a component in the order the search left them.
///
/// The search is recursive; the graphs it serves (the modules of one crate) are small.
pub fn strongly_connected_components(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let nodes = successors.len();
    let mut search = Tarjan {
        successors,
        index: vec![UNVISITED; nodes],
        lowlink: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        next_index: 0,
        components: Vec::new(),
    };
    for node in 0..nodes {
        if search.index[node] == UNVISITED {
            search.visit(node);
        }
    }
    search.components
}

const UNVISITED: usize = usize::MAX;

struct Tarjan<'g> {
    successors: &'g [Vec<usize>],
    /// The order in which the search reached each node (`UNVISITED` before).
    index: Vec<usize>,
    /// The smallest index reachable from the node through its subtree and one back edge.
    lowlink: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next_index: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, node: usize) {
        self.index[node] = self.next_index;
        self.lowlink[node] = self.next_index;
        self.next_index += 1;
        self.stack.push(node);
        self.on_stack[node] = true;

        for &next in &self.successors[node] {
            if self.index[next] == UNVISITED {
                self.visit(next);
                self.lowlink[node] = self.lowlink[node].min(self.lowlink[next]);
            } else if self.on_stack[next] {
                self.lowlink[node] = self.lowlink[node].min(self.index[next]);
            }
        }

        // A node whose lowlink is its own index is the root of a component: everything
        // above it on the stack belongs to that component.
        if self.lowlink[node] == self.index[node] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack[member] = false;
                component.push(member);
                if member == node {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut components: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        for c in &mut components {
            c.sort_unstable();
        }
        components.sort();
        components
    }

    #[test]
    fn a_chain_has_one_component_per_node() {
        let graph = vec![vec![1], vec![2], vec![]];
        assert_eq!(
            strongly_connected_components(&graph),
            vec![vec![2], vec![1], vec![0]]
        );
    }

    #[test]
    fn finds_two_cycles_joined_by_an_edge() {
        // 0 ⇄ 1 → 2 → 3 → 2, and 4 alone with a self-loop.
        let graph = vec![vec![1], vec![0, 2], vec![3], vec![2], vec![4]];
        assert_eq!(
            sorted(strongly_connected_components(&graph)),
            vec![vec![0, 1], vec![2, 3], vec![4]]
        );
    }
}
