//! How long the cache lens's page waits for the next second of animation (issue 6:
//! ≤ 50 ms per batch), measured through the same `LensApi::answer` calls the server
//! makes, binary encoding included.
//!
//! Source: the standard 128×128 matrix multiply (4.2 M references). Hierarchies: the
//! trace default (L1 32 KiB 8-way, L2 256 KiB 8-way) and a big one for the 10 000-glyph
//! test (+ L3 1 MiB 16-way). One second of animation at 60 steps per second is 60
//! references at 1×, 3 840 at 64× and 15 360 at 256× time-lapse. Printed per case:
//! median and worst of consecutive batches (playback) and of batches after a random
//! jump (scrubbing: the state at the jump, then the batch), and the ratio of the 50 ms
//! budget to the worst.
//!
//! Run: `cargo bench -p memlens-server --bench cache_batch`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use memlens_server::{CacheLens, LensApi};

const BUDGET: Duration = Duration::from_millis(50);

fn query(pairs: &[(&str, String)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn stats(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], *times.last().expect("some times"))
}

fn main() {
    let lens = CacheLens::new(None);
    for (name, levels) in [
        ("L1 32K + L2 256K", "L1:32K:8:64:lru,L2:256K:8:64:lru"),
        (
            "L1 32K + L2 256K + L3 1M",
            "L1:32K:8:64:lru,L2:256K:8:64:lru,L3:1M:16:64:lru",
        ),
    ] {
        let base = vec![
            ("source", "matmul-standard".to_owned()),
            ("n", "128".to_owned()),
            ("levels", levels.to_owned()),
        ];
        let started = Instant::now();
        let body = lens.answer("session", &query(&base)).expect("session");
        let doc: serde_json::Value = serde_json::from_slice(&body.bytes).expect("json");
        let references = doc["references"].as_u64().expect("references") as usize;
        println!(
            "{name}: session of {references} references built in {:.2?} (checkpoint every {})",
            started.elapsed(),
            doc["every"]
        );
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (label, count) in [("1x", 60usize), ("64x", 3840), ("256x", 15_360)] {
            let mut sequential = Vec::new();
            let mut bytes = 0usize;
            let mut at = references / 3;
            for _ in 0..30 {
                let mut q = query(&base);
                q.insert("start".into(), at.to_string());
                q.insert("count".into(), count.to_string());
                let t = Instant::now();
                let body = lens.answer("batch", &q).expect("batch");
                sequential.push(t.elapsed());
                bytes += body.bytes.len();
                at += count;
            }
            let mut jumps = Vec::new();
            for _ in 0..30 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = (seed % references as u64) as usize;
                let t = Instant::now();
                let mut q = query(&base);
                q.insert("at".into(), at.to_string());
                lens.answer("state", &q).expect("state");
                q.insert("start".into(), at.to_string());
                q.insert("count".into(), count.to_string());
                lens.answer("batch", &q).expect("batch");
                jumps.push(t.elapsed());
            }
            let (p50, worst) = stats(sequential);
            let (j50, jworst) = stats(jumps);
            println!(
                "  {label:>4} ({count:>5} refs/s): playback median {p50:.2?} worst {worst:.2?} ({} B/ref); \
                 after a jump median {j50:.2?} worst {jworst:.2?}; budget/worst = {:.1}x",
                bytes / (30 * count),
                BUDGET.as_secs_f64() / worst.max(jworst).as_secs_f64()
            );
        }
    }
}
