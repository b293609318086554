//! Two halves of one job on two threads: the model's index and the overview's sums
//! split their work this way once there is enough of it.

/// Runs `a` and `b`: when `parallel`, `b` on a thread of its own (a panic in either is
/// resumed here), else one after the other.
pub(crate) fn both<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let b = scope.spawn(b);
        let a = a();
        (a, b.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}
