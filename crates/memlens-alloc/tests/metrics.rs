//! Metrics on hand-made layouts: occupancy, waste, fragmentation and free runs of a
//! region of the real run, and of a pool bin after a replay.

mod common;

use memlens_alloc::*;

#[test]
fn fragmentation_of_a_hand_made_heap() {
    // Three blocks in the main heap; the middle one is freed at t = 60.
    // Reserved (glibc usable) sizes: 24, 24, 56. Extent [0x1000, 0x10d8) = 216 bytes.
    let m = common::model(
        &[
            (0, None, 0x5000_1000, 24, 1),
            (1, Some(60), 0x5000_1040, 24, 1),
            (2, None, 0x5000_10a0, 56, 1),
        ],
        100,
    );
    assert_eq!(m.bins().len(), 1);
    assert_eq!(m.bins()[0].kind, BinKind::MainHeap);
    let s = metric_series(&m, Some(BinId(0)), 2, None).unwrap();
    assert_eq!(s.interval_ns, 50);
    let p = &s.points[0]; // t = 25: all three live
    assert_eq!(p.t_ns, 25);
    assert_eq!(p.live_blocks, 3);
    assert_eq!(p.reserved_bytes, 104);
    assert_eq!(p.requested_bytes, 104);
    assert_eq!(p.capacity_bytes, 216);
    assert!((p.occupancy - 104.0 / 216.0).abs() < 1e-12);
    // Each block occupies its chunk, from the 8-byte size field below its address:
    // [0x0ff8, 0x1018), [0x1038, 0x1058), [0x1098, 0x10d8). Free runs:
    // [0x1018, 0x1038) = 32 and [0x1058, 0x1098) = 64.
    assert_eq!(p.free_runs, 2);
    assert_eq!(p.free_bytes, 96);
    assert_eq!(p.largest_free_bytes, 64);
    assert!((p.fragmentation - (1.0 - 64.0 / 96.0)).abs() < 1e-12);
    // Histogram: 32 in bucket 5 (32..64), 64 in bucket 6 (64..128).
    assert_eq!(p.free_run_histogram, vec![0, 0, 0, 0, 0, 1, 1]);
    assert_eq!(p.events, 3);
    let q = &s.points[1]; // t = 75: the middle block is gone, one run of 128
    assert_eq!(q.free_runs, 1);
    assert_eq!(q.free_bytes, 128);
    assert_eq!(q.fragmentation, 0.0);
    assert_eq!(q.events, 1);
    assert!((q.event_rate_per_s - 1.0 / 50e-9).abs() < 1.0);
}

#[test]
fn neighbouring_glibc_chunks_leave_no_free_run() {
    // Four 24-byte requests in consecutive 32-byte chunks, then a gap of one chunk,
    // then one more: the only free run is the missing chunk.
    let m = common::model(
        &[
            (0, None, 0x5000_1000, 24, 1),
            (1, None, 0x5000_1020, 24, 1),
            (2, None, 0x5000_1040, 24, 1),
            (3, None, 0x5000_1060, 24, 1),
            (4, None, 0x5000_10a0, 24, 1),
        ],
        10,
    );
    let p = &metric_series(&m, Some(BinId(0)), 1, None).unwrap().points[0];
    assert_eq!(p.live_blocks, 5);
    assert_eq!((p.free_runs, p.free_bytes), (1, 32));
    assert_eq!(p.fragmentation, 0.0);
}

#[test]
fn waste_and_occupancy_of_a_pool_bin() {
    let m = common::model(
        &[
            (0, None, 0xa000, 10, 1),
            (1, None, 0xb000, 30, 1),
            (2, Some(5), 0xc000, 3, 1),
        ],
        10,
    );
    let (r, _) = replay(
        &m,
        &PoolConfig::new(PoolConfig::parse_bins("16:4,32:4").unwrap()),
    )
    .unwrap();
    let s = metric_series(&r, Some(BinId(0)), 1, None).unwrap();
    let p = &s.points[0]; // t = 5: block of 10 in slot 0, block of 3 freed at 5
    assert_eq!(p.capacity_bytes, 64);
    assert_eq!(p.reserved_bytes, 16);
    assert_eq!(p.waste_bytes, 6);
    assert!((p.occupancy - 0.25).abs() < 1e-12);
    // Slots 1..4 free: one run of 48 bytes.
    assert_eq!((p.free_runs, p.free_bytes, p.fragmentation), (1, 48, 0.0));
    let all = metric_series(&r, None, 1, None).unwrap();
    assert_eq!(all.points[0].reserved_bytes, 16 + 32);
    assert_eq!(all.points[0].waste_bytes, 6 + 2);
    assert!(metric_series(&r, Some(BinId(9)), 1, None).is_err());
}

#[test]
fn the_occupancy_bar_shows_the_occupancy_metric() {
    // A region that grows: its capacity is its high-water extent at each instant, for
    // the metric and for the bar alike, so a flat bar's colour is the metric's.
    let m = common::model(
        &[
            (0, None, 0x5000_1000, 1000, 1),
            (40, Some(80), 0x5000_1400, 3000, 1),
            (60, None, 0x5000_2000, 200, 1),
        ],
        100,
    );
    let width = 10;
    let window = TimeRange {
        start_ns: 0,
        end_ns: 100,
    };
    let options = BarOptions {
        style: BarStyle::Flat,
        ..BarOptions::default()
    };
    let bar = render_occupancy_bar(&m, Some(BinId(0)), window, width, 1, &options).unwrap();
    let series = metric_series(&m, Some(BinId(0)), width as usize, Some(window)).unwrap();
    for (x, p) in series.points.iter().enumerate() {
        // Away from the columns where a block starts or ends, the column average is the
        // value at its midpoint.
        if [4, 6, 8].contains(&x) {
            continue;
        }
        let want = colormap_u8(p.occupancy);
        let got = bar.pixel(x as u32, 0);
        assert_eq!(
            &got[..3],
            &want[..],
            "column {x}: occupancy {}",
            p.occupancy
        );
    }
}

fn colormap_u8(v: f64) -> [u8; 3] {
    memlens_alloc::colormap::to_u8(continuous_color(v as f32))
}
