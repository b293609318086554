//! The overview's coarse tiles against the plain rasterizer: for random models whose
//! axes do not divide evenly into the grid (so tile and pixel bounds are rounded),
//! grid tiles of time levels 0..=K, drawn from the cell sums (address levels 0..=K)
//! or from the stacks (deeper address levels, any address window), must equal
//! `render` of the same window to within 1/255 per channel (rounding: the f^α table
//! applied to cell shares, summation order, and float slivers the plain path gives to
//! blocks whose edge lies exactly on a pixel boundary), for several option sets.

use memlens_alloc::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` blocks of three threads in a heap of size classes with LIFO reuse: mostly
/// short-lived, some long-lived, a few never freed; times in whole ns at uneven steps.
fn random_model(seed: u64, n: u64) -> AllocModel {
    random_model_with(seed, n, false)
}

/// [`random_model`], with, when `huge`, every 5000th block a never-freed one of 5 GiB
/// (a requested size the index's records cannot hold).
fn random_model_with(seed: u64, n: u64, huge: bool) -> AllocModel {
    const CLASSES: [u64; 6] = [16, 32, 48, 96, 256, 1024];
    let mut rng = Rng(seed);
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "test".into(),
    });
    let threads: Vec<_> = (0..3).map(|i| b.thread(p, 10 + i, "")).collect();
    let sites: Vec<_> = (0..20)
        .map(|i| b.site(&memlens_vocab::Site::at(&format!("f{i}"), "t.c", i as u32)))
        .collect();
    let mut free: Vec<Vec<u64>> = vec![Vec::new(); CLASSES.len()];
    let mut next = vec![0u64; CLASSES.len()];
    let mut due: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, usize)>> =
        Default::default();
    let mut t = 1000u64;
    for i in 0..n {
        t += 1 + rng.next() % 37;
        if huge && i % 5000 == 4999 {
            b.alloc(AllocEvent {
                t,
                thread: threads[0],
                addr: 0x7000_0000_0000 + i * (8 << 30),
                size: 5 << 30,
                site: sites[0],
                latency_ns: None,
            });
            continue;
        }
        while let Some(&std::cmp::Reverse((when, addr, class))) = due.peek() {
            if when > t {
                break;
            }
            due.pop();
            b.free(FreeEvent {
                t: when,
                thread: threads[(addr as usize >> 4) % 3],
                addr,
                site: memlens_alloc::SiteId::UNKNOWN,
                latency_ns: None,
            });
            free[class].push(addr);
        }
        let r = rng.next();
        let class = (r % CLASSES.len() as u64) as usize;
        let addr = free[class].pop().unwrap_or_else(|| {
            next[class] += 1;
            0x5555_0000_0000 + class as u64 * 0x10_0000 + (next[class] - 1) * (CLASSES[class] + 16)
        });
        b.alloc(AllocEvent {
            t,
            thread: threads[(r >> 8) as usize % 3],
            addr,
            size: CLASSES[class] - (r >> 12) % 9,
            site: sites[(r >> 16) as usize % 20],
            latency_ns: None,
        });
        let life = match (r >> 24) % 50 {
            0 => continue,
            1..=5 => 1 + (r >> 32) % (n * 5),
            _ => 1 + (r >> 32) % 400,
        };
        due.push(std::cmp::Reverse((t + life, addr, class)));
    }
    b.finish(t + 1 + rng.next() % 1000)
}

/// The largest per-channel difference and the number of differing pixels.
fn compare(a: &RgbaImage, b: &RgbaImage) -> (u8, usize) {
    let mut max = 0;
    let mut differing = 0;
    for (p, q) in a.pixels.chunks(4).zip(b.pixels.chunks(4)) {
        let d = p.iter().zip(q).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
        max = max.max(d);
        differing += usize::from(d > 0);
    }
    (max, differing)
}

fn tile(model: &AllocModel, zx: u32, zy: u32, x: u64, y: u64) -> View {
    let whole = View::whole(model, TILE_SIDE, TILE_SIDE);
    let (t0, t1) = grid_bounds(whole.time.start_ns, whole.time.duration_ns(), zx, x);
    let (a0, a1) = grid_bounds(whole.addr.0, whole.addr.1 - whole.addr.0, zy, y);
    View {
        time: TimeRange {
            start_ns: t0,
            end_ns: t1,
        },
        addr: (a0, a1),
        width: TILE_SIDE,
        height: TILE_SIDE,
    }
}

#[test]
fn coarse_tiles_from_the_overview_equal_the_plain_rasterizer() {
    let option_sets = [
        RenderOptions::default(),
        RenderOptions {
            alpha: 1.0,
            color_by: ColorBy::Size,
            cushion: CushionProfile::Parabolic,
            ..RenderOptions::default()
        },
        RenderOptions {
            alpha: 0.3,
            color_by: ColorBy::Site,
            size: SizeFilter { min: 20, max: 100 },
            ..RenderOptions::default()
        },
        RenderOptions {
            alpha: 0.7,
            color_by: ColorBy::Age,
            cushion: CushionProfile::None,
            bins: vec![BinId(0)],
            ..RenderOptions::default()
        },
    ];
    let mut compared = 0;
    let mut differing_total = 0;
    let mut drawn = 0;
    for seed in [3u64, 1234, 987_654_321] {
        let model = random_model(seed, 70_000);
        for options in &option_sets {
            assert!(!model.overview_ready(options));
            assert!(model.prepare_overview(options).unwrap());
            assert!(model.overview_ready(options));
            for zx in 0..=OVERVIEW_LEVELS {
                // Address levels up to K come from the cells, deeper ones (and windows
                // that are not grid tiles) from the stacks.
                for zy in 0..=OVERVIEW_LEVELS + 4 {
                    for x in 0..1u64 << zx {
                        for y in (0..1u64 << zy).filter(|y| (x + y) % 2 == 0 || zx + zy < 3) {
                            if zy > 3 && y % 5 != 1 {
                                continue;
                            }
                            let mut view = tile(&model, zx, zy, x, y);
                            if zy == OVERVIEW_LEVELS + 4 {
                                // Any address window and height, not only grid tiles.
                                let len = view.addr.1 - view.addr.0;
                                view.addr = (view.addr.0 + len / 3, view.addr.1 + 7 * len);
                                view.height = 100 + (y as u32 % 300);
                            }
                            assert!(overview_serves(&model, &view));
                            let fast = render_from_overview(&model, &view, options)
                                .unwrap()
                                .expect("the overview serves this tile");
                            let plain = render(&model, &view, options).unwrap();
                            let (max, differing) = compare(&fast, &plain);
                            assert!(
                                max <= 1,
                                "seed {seed}, {options:?}, tile {zx}/{zy}/{x}/{y}: a channel differs by {max}"
                            );
                            drawn += usize::from(
                                plain.pixels.chunks(4).any(|p| p[..3] != [255, 255, 255]),
                            );
                            compared += 1;
                            differing_total += differing;
                        }
                    }
                }
            }
        }
    }
    assert!(
        drawn * 2 > compared,
        "only {drawn} of {compared} tiles show blocks"
    );
    // Rounding flips a channel by one on a small share of pixels at most.
    let pixels = compared * (TILE_SIDE * TILE_SIDE) as usize;
    assert!(
        differing_total * 10_000 < pixels,
        "{differing_total} of {pixels} pixels differ"
    );
    eprintln!("{compared} tiles compared, {differing_total} of {pixels} pixels differ by 1/255");
}

/// A size filter keeps or drops the blocks the overview draws one by one (long-lived,
/// not in its sums) by their own requested size, also beyond what an index record
/// holds (4 GiB).
#[test]
fn size_filters_read_the_requested_size_of_every_block() {
    let model = random_model_with(5, 70_000, true);
    for size in [
        SizeFilter {
            min: 1 << 31,
            max: u64::MAX,
        },
        SizeFilter { min: 0, max: 40 },
    ] {
        let options = RenderOptions {
            color_by: ColorBy::Waste,
            size,
            ..RenderOptions::default()
        };
        assert!(model.prepare_overview(&options).unwrap());
        let mut shown = 0;
        for z in 0..=OVERVIEW_LEVELS {
            for x in 0..1u64 << z {
                let view = tile(&model, z, z, x, 0);
                let fast = render_from_overview(&model, &view, &options)
                    .unwrap()
                    .expect("the overview serves this tile");
                let plain = render(&model, &view, &options).unwrap();
                let (max, _) = compare(&fast, &plain);
                assert!(
                    max <= 1,
                    "{size:?}, tile {z}/{x}: a channel differs by {max}"
                );
                shown += usize::from(plain.pixels.chunks(4).any(|p| p[..3] != [255, 255, 255]));
            }
        }
        assert!(shown > 0, "{size:?}: every tile is empty");
    }
}

#[test]
fn other_views_fall_back_to_the_plain_path() {
    let model = random_model(77, MIN_BLOCKS as u64 + 100);
    let options = RenderOptions::default();
    assert!(model.prepare_overview(&options).unwrap());
    let deep = tile(&model, OVERVIEW_LEVELS + 1, 0, 3, 0);
    assert!(!overview_serves(&model, &deep));
    assert_eq!(render_from_overview(&model, &deep, &options).unwrap(), None);
    assert_eq!(
        render_tile(&model, &deep, &options).unwrap(),
        render(&model, &deep, &options).unwrap()
    );
    let mut odd = tile(&model, 0, 0, 0, 0);
    odd.width = 300;
    assert!(!overview_serves(&model, &odd));
    let other = RenderOptions {
        alpha: 0.9,
        ..RenderOptions::default()
    };
    let coarse = tile(&model, 1, 1, 0, 1);
    assert!(!model.overview_ready(&other));
    assert_eq!(render_from_overview(&model, &coarse, &other).unwrap(), None);
    // Bad options are refused as `render` refuses them.
    let bad = RenderOptions {
        alpha: 0.0,
        ..RenderOptions::default()
    };
    assert!(model.prepare_overview(&bad).is_err());
    assert!(render_tile(&model, &coarse, &bad).is_err());
    // A model of fewer blocks has none: plain rendering is fast there.
    let small = random_model(5, 2000);
    assert!(!small.prepare_overview(&options).unwrap());
}

#[test]
fn the_other_colourings_are_prepared_ahead_into_the_same_pictures() {
    let model = random_model(41, MIN_BLOCKS as u64 + 5_000);
    let options = RenderOptions {
        alpha: 0.6,
        ..RenderOptions::default()
    };
    // Nothing ahead of the option set itself.
    assert_eq!(model.prepare_overview_ahead(&options), None);
    assert!(model.prepare_overview(&options).unwrap());
    let mut prepared = Vec::new();
    while let Some(by) = model.prepare_overview_ahead(&options) {
        assert!(!prepared.contains(&by), "{by:?} prepared twice");
        prepared.push(by);
    }
    // One process and no latencies: those colourings would say nothing.
    let worth = [ColorBy::Site, ColorBy::Size, ColorBy::Waste, ColorBy::Age];
    assert_eq!(prepared, worth);
    let coarse = tile(&model, 1, 0, 1, 0);
    for by in worth {
        let other = RenderOptions {
            color_by: by,
            ..options.clone()
        };
        assert!(model.overview_ready(&other), "{by:?}");
        // The same pixels as sums prepared when asked for, on a fresh model.
        let fresh = random_model(41, MIN_BLOCKS as u64 + 5_000);
        assert!(fresh.prepare_overview(&other).unwrap());
        assert_eq!(
            render_from_overview(&model, &coarse, &other).unwrap(),
            render_from_overview(&fresh, &coarse, &other).unwrap(),
            "{by:?}"
        );
    }
    // Another α has its own colourings to prepare.
    let sharper = RenderOptions {
        alpha: 0.9,
        ..options
    };
    assert!(!model.overview_ready(&sharper));
}
