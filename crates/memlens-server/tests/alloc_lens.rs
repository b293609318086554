//! The allocation-map lens's API through [`LensApi::answer`] on small hand-built
//! models: the meta document, PNG tiles (valid, the engine's pixels exactly, grid tiles
//! that tile the whole picture, cached; coarse tiles from the overview the lens prepares
//! in the background), brushing answers, bars, metrics, pool replays,
//! and bad parameters (400 with one sentence naming the parameter).

use std::collections::HashMap;

use memlens_alloc::{
    AllocEvent, AllocModel, AllocModelBuilder, FreeEvent, ProcessInfo, RenderOptions, TimeRange,
    View, render,
};
use memlens_server::alloc::query::tile_bounds;
use memlens_server::{AllocLens, ApiBody, LensApi};
use serde_json::Value;

/// Main heap blocks of one process with two threads:
///
/// | block | thread | site | t | addr | size |
/// |---|---|---|---|---|---|
/// | A | main | make_list (list.c:12) | 1 000 – 6 000 | 0x55550000_1000 | 100 |
/// | B | main | make_list (list.c:12) | 2 000 – end | 0x55550000_1080 | 24 |
/// | C | worker | fill (fill.c:7) | 3 000 – 8 000 | 0x55550000_10a0 | 200 |
/// | D | worker | unknown | 7 000 – 9 000 | 0x55550000_1000 | 64 |
///
/// The run ends at 10 000 ns.
fn model() -> AllocModel {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 4242,
        ppid: 1,
        name: "demo".to_owned(),
    });
    let main = b.thread(p, 4242, "main");
    let worker = b.thread(p, 4243, "worker");
    let list = b.site(&memlens_vocab::Site::at("make_list", "list.c", 12));
    let fill = b.site(&memlens_vocab::Site::at("fill", "fill.c", 7));
    let base = 0x5555_0000_1000u64;
    let alloc = |b: &mut AllocModelBuilder, t, thread, addr, size, site| {
        b.alloc(AllocEvent {
            t,
            thread,
            addr,
            size,
            site,
            latency_ns: None,
        })
    };
    let free = |b: &mut AllocModelBuilder, t, thread, addr| {
        b.free(FreeEvent {
            t,
            thread,
            addr,
            site: memlens_alloc::SiteId::UNKNOWN,
            latency_ns: None,
        })
    };
    alloc(&mut b, 1_000, main, base, 100, list);
    alloc(&mut b, 2_000, main, base + 0x80, 24, list);
    alloc(&mut b, 3_000, worker, base + 0xa0, 200, fill);
    free(&mut b, 6_000, main, base);
    alloc(
        &mut b,
        7_000,
        worker,
        base,
        64,
        memlens_alloc::SiteId::UNKNOWN,
    );
    free(&mut b, 8_000, worker, base + 0xa0);
    free(&mut b, 9_000, worker, base);
    b.finish(10_000)
}

fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn ask(lens: &AllocLens, route: &str, pairs: &[(&str, &str)]) -> ApiBody {
    lens.answer(route, &query(pairs))
        .unwrap_or_else(|e| panic!("{route} {pairs:?}: {e}"))
}

fn json(lens: &AllocLens, route: &str, pairs: &[(&str, &str)]) -> Value {
    let body = ask(lens, route, pairs);
    assert_eq!(body.content_type, "application/json; charset=utf-8");
    serde_json::from_slice(&body.bytes).unwrap()
}

/// Decodes a PNG answer into (width, height, RGBA bytes).
fn png(body: &ApiBody) -> (u32, u32, Vec<u8>) {
    assert_eq!(body.content_type, "image/png");
    let decoder = png::Decoder::new(std::io::Cursor::new(&body.bytes));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// The error of a request that must fail.
fn refused(lens: &AllocLens, route: &str, pairs: &[(&str, &str)]) -> (u16, String) {
    match lens.answer(route, &query(pairs)) {
        Ok(_) => panic!("{route} {pairs:?} was answered"),
        Err(e) => (e.status, e.message),
    }
}

#[test]
fn meta_lists_bins_threads_sites_and_attributes() {
    let lens = AllocLens::new(model());
    let doc = json(&lens, "meta", &[]);
    assert_eq!(doc["blocks"], 4);
    assert_eq!(doc["run"]["start_ns"], 1_000);
    assert_eq!(doc["run"]["end_ns"], 10_000);
    assert_eq!(doc["pool"], Value::Null);
    assert_eq!(doc["has_latency"], false);
    let bins = doc["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 1);
    assert_eq!(bins[0]["kind"], "main-heap");
    assert_eq!(bins[0]["pid"], 4242);
    assert_eq!(bins[0]["start_hex"], "0x555500001000");
    assert_eq!(bins[0]["axis_start"], 0);
    assert_eq!(doc["axis_len"], bins[0]["axis_end"]);
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0]["name"], "main");
    assert_eq!(threads[0]["blocks"], 2);
    assert_eq!(threads[1]["blocks"], 2);
    assert_ne!(threads[0]["color"], threads[1]["color"]);
    assert!(threads[0]["color"].as_str().unwrap().starts_with('#'));
    let sites: Vec<&str> = doc["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(sites[0], "make_list (list.c:12)");
    assert!(sites.contains(&"fill (fill.c:7)") && sites.contains(&""));
    let latency = doc["color_by"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "latency")
        .unwrap();
    assert_eq!(latency["available"], false);
    assert_eq!(lens.descriptor().id, "alloc");
}

#[test]
fn tiles_are_the_engines_pictures_as_png() {
    let lens = AllocLens::new(model());
    let m = lens.model();
    let axis = m.axis().len();
    let body = ask(
        &lens,
        "tile",
        &[
            ("t0", "0"),
            ("t1", "12000"),
            ("a0", "0"),
            ("a1", &axis.to_string()),
            ("w", "120"),
            ("h", "40"),
            ("color", "site"),
            ("alpha", "0.7"),
            ("cushion", "parabolic"),
        ],
    );
    let (w, h, pixels) = png(&body);
    assert_eq!((w, h), (120, 40));
    let view = View {
        time: TimeRange {
            start_ns: 0,
            end_ns: 12_000,
        },
        addr: (0, axis),
        width: 120,
        height: 40,
    };
    let options = RenderOptions {
        alpha: 0.7,
        cushion: memlens_alloc::CushionProfile::Parabolic,
        color_by: memlens_alloc::ColorBy::Site,
        ..RenderOptions::default()
    };
    let expected = render(m, &view, &options).unwrap();
    assert_eq!(pixels, expected.pixels);
    // Block B lives from 2 000 ns to the end at the axis position 0x80..0x98: drawn.
    let x = (5_000 * 120 / 12_000) as u32;
    let y = 40 - 1 - ((0x88 * 40) / axis) as u32;
    let p = expected.pixel(x, y);
    assert!(p[0] < 250 || p[1] < 250 || p[2] < 250, "{p:?}");
}

#[test]
fn grid_tiles_cover_the_whole_picture_and_are_cached() {
    let lens = AllocLens::new(model());
    let m = lens.model();
    let whole = View::whole(m, 512, 512);
    let picture = render(m, &whole, &RenderOptions::default()).unwrap();
    // Level 1 on both axes: four 256×256 tiles, each the engine's picture of the
    // window `tile_bounds` gives (x counts from the left, y from the bottom).
    let before = lens.cached_answers();
    for (x, y) in [(0u64, 0u64), (1, 0), (0, 1), (1, 1)] {
        let (w, h, pixels) = png(&ask(
            &lens,
            "tile",
            &[
                ("zx", "1"),
                ("zy", "1"),
                ("x", &x.to_string()),
                ("y", &y.to_string()),
            ],
        ));
        assert_eq!((w, h), (256, 256));
        let (t0, t1) = tile_bounds(whole.time.start_ns, whole.time.duration_ns(), 1, x);
        let (a0, a1) = tile_bounds(0, whole.addr.1, 1, y);
        let tile_view = View {
            time: TimeRange {
                start_ns: t0,
                end_ns: t1,
            },
            addr: (a0, a1),
            width: 256,
            height: 256,
        };
        let expected = render(m, &tile_view, &RenderOptions::default()).unwrap();
        assert_eq!(pixels, expected.pixels, "tile ({x}, {y})");
    }
    assert_eq!(lens.cached_answers(), before + 4);
    // Asking again is answered from the cache: same bytes, nothing added.
    let again = ask(
        &lens,
        "tile",
        &[("zx", "1"), ("zy", "1"), ("x", "0"), ("y", "0")],
    );
    let first = ask(
        &lens,
        "tile",
        &[("y", "0"), ("x", "0"), ("zy", "1"), ("zx", "1")],
    );
    assert_eq!(again.bytes, first.bytes);
    assert_eq!(lens.cached_answers(), before + 4);
    // The whole picture's top-left quadrant (early times, high addresses) is tile (0, 1).
    let (_, _, top_left) = png(&ask(
        &lens,
        "tile",
        &[("zx", "1"), ("zy", "1"), ("x", "0"), ("y", "1")],
    ));
    let nonwhite = |px: &[u8]| {
        px.chunks(4)
            .filter(|p| p[0] < 250 || p[1] < 250 || p[2] < 250)
            .count()
    };
    let quadrant: Vec<u8> = (0..256)
        .flat_map(|row| picture.pixels[row * 512 * 4..row * 512 * 4 + 256 * 4].to_vec())
        .collect();
    assert_eq!(nonwhite(&top_left) > 0, nonwhite(&quadrant) > 0);
}

#[test]
fn brushing_answers_the_block_under_the_mouse() {
    let lens = AllocLens::new(model());
    // Block C: worker, fill (fill.c:7), 200 bytes at +0xa0, 3 000 – 8 000 ns.
    let doc = json(
        &lens,
        "block",
        &[("t", "4000"), ("y", &(0xa0 + 10).to_string())],
    );
    let b = &doc["block"];
    assert_eq!(b["requested"], 200);
    assert_eq!(b["reserved"], 200);
    assert_eq!(b["waste"], 0);
    assert_eq!(b["t_alloc"], 3_000);
    assert_eq!(b["t_free"], 8_000);
    assert_eq!(b["tid"], 4243);
    assert_eq!(b["thread_name"], "worker");
    assert_eq!(b["pid"], 4242);
    assert_eq!(b["process_name"], "demo");
    assert_eq!(b["function"], "fill");
    assert_eq!(b["location"], "fill.c:7");
    assert_eq!(b["addr_hex"], "0x5555000010a0");
    assert_eq!(b["y0"], 0xa0);
    assert_eq!(b["y1"], 0xa0 + 200);
    // Block B is never freed: no free time, its rectangle runs to the end.
    let doc = json(
        &lens,
        "block",
        &[("t", "9500"), ("y", &(0x80 + 4).to_string())],
    );
    assert_eq!(doc["block"]["t_free"], Value::Null);
    assert_eq!(doc["block"]["t_end"], 10_000);
    assert_eq!(doc["block"]["function"], "make_list");
    // Before anything was allocated there: nothing; within a pixel's reach: the block.
    let empty = json(
        &lens,
        "block",
        &[("t", "1500"), ("y", &(0xa0 + 10).to_string())],
    );
    assert_eq!(empty["block"], Value::Null);
    let near = json(
        &lens,
        "block",
        &[
            ("t", "2800"),
            ("y", &(0xa0 + 10).to_string()),
            ("dt", "400"),
            ("dy", "4"),
        ],
    );
    assert_eq!(near["block"]["t_alloc"], 3_000);
    // A size filter that hides C hides it from brushing too.
    let hidden = json(
        &lens,
        "block",
        &[
            ("t", "4000"),
            ("y", &(0xa0 + 10).to_string()),
            ("smax", "100"),
        ],
    );
    assert_eq!(hidden["block"], Value::Null);
}

#[test]
fn bars_and_metrics_cover_the_window() {
    let lens = AllocLens::new(model());
    let (w, h, _) = png(&ask(
        &lens,
        "bar",
        &[
            ("w", "300"),
            ("h", "20"),
            ("style", "cushioned"),
            ("profile", "parabolic"),
        ],
    ));
    assert_eq!((w, h), (300, 20));
    let (w, h, _) = png(&ask(
        &lens,
        "bars",
        &[("w", "200"), ("bar_h", "10"), ("gap", "2")],
    ));
    assert_eq!((w, h), (200, 10));
    let doc = json(
        &lens,
        "metrics",
        &[
            ("samples", "9"),
            ("t0", "1000"),
            ("t1", "10000"),
            ("bin", "0"),
        ],
    );
    assert_eq!(doc["bin"], 0);
    assert_eq!(doc["interval_ns"], 1_000);
    for column in [
        "t_ns",
        "occupancy",
        "waste_bytes",
        "fragmentation",
        "event_rate",
        "free_run_histogram",
    ] {
        assert_eq!(doc[column].as_array().unwrap().len(), 9, "{column}");
    }
    assert!(
        doc["occupancy"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| (0.0..=1.0).contains(&v.as_f64().unwrap()))
    );
    // At 4 500 ns blocks A, B and C are live.
    assert_eq!(doc["live_blocks"][3], 3);
    assert_eq!(doc["alloc_latency_ns"], Value::Null);
    // The same request again is the same document (from the cache).
    let again = json(
        &lens,
        "metrics",
        &[
            ("samples", "9"),
            ("t0", "1000"),
            ("t1", "10000"),
            ("bin", "0"),
        ],
    );
    assert_eq!(doc, again);
}

#[test]
fn a_pool_replay_is_drawn_and_reported() {
    let lens = AllocLens::new(model());
    let doc = json(
        &lens,
        "meta",
        &[("pool", "32:2,128:2"), ("overflow", "best-fit")],
    );
    assert_eq!(doc["pool"], "32:2,128:2");
    let kinds: Vec<&str> = doc["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["pool", "pool", "heap"]);
    assert_eq!(doc["bins"][0]["block_size"], 32);
    assert_eq!(doc["bins"][0]["slots"], 2);
    let report = &doc["replay"];
    assert_eq!(report["requests"], 4);
    // 100 → bin 1, 24 → bin 0, 200 → too large for every bin, 64 → bin 1.
    assert_eq!(report["too_large"], 1);
    assert_eq!(report["bins"][1]["served"], 2);
    let (w, h, _) = png(&ask(
        &lens,
        "tile",
        &[
            ("pool", "32:2,128:2"),
            ("overflow", "best-fit"),
            ("zx", "0"),
            ("zy", "0"),
            ("x", "0"),
            ("y", "0"),
            ("size", "64"),
        ],
    ));
    assert_eq!((w, h), (64, 64));
    // The real run is still there.
    assert_eq!(json(&lens, "meta", &[])["pool"], Value::Null);
}

/// A route, its parameters and a word the error must contain.
type BadCase<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn bad_parameters_get_400_and_one_sentence_naming_them() {
    let lens = AllocLens::new(model());
    let cases: &[BadCase] = &[
        ("tile", &[("alpha", "0")], "alpha"),
        ("tile", &[("alpha", "fast")], "alpha"),
        ("tile", &[("alpha", "-1")], "alpha"),
        ("tile", &[("t0", "5000"), ("t1", "5000")], "t1"),
        ("tile", &[("a0", "10"), ("a1", "3")], "a1"),
        ("tile", &[("w", "0")], "w"),
        ("tile", &[("h", "99999")], "h"),
        (
            "tile",
            &[("zx", "60"), ("zy", "0"), ("x", "0"), ("y", "0")],
            "zx",
        ),
        (
            "tile",
            &[("zx", "1"), ("zy", "1"), ("x", "2"), ("y", "0")],
            "x",
        ),
        ("tile", &[("zx", "1"), ("zy", "1"), ("x", "0")], "y"),
        ("tile", &[("color", "rainbow")], "color"),
        ("tile", &[("color", "latency")], "--latency"),
        ("tile", &[("cushion", "round")], "cushion"),
        ("tile", &[("bins", "7")], "bin 7"),
        ("tile", &[("smin", "10K"), ("smax", "1K")], "smin"),
        ("tile", &[("smax", "lots")], "smax"),
        ("tile", &[("pool", "64:10,32:10")], "strictly increase"),
        ("tile", &[("pool", "64")], "BLOCK_SIZE:COUNT"),
        (
            "tile",
            &[("pool", "64:10"), ("overflow", "worst-fit")],
            "overflow",
        ),
        ("block", &[("t", "10")], "y"),
        ("block", &[("t", "x"), ("y", "1")], "t=x"),
        ("bar", &[("style", "wavy")], "style"),
        ("bar", &[("bin", "0,1")], "bin"),
        ("metrics", &[("samples", "0")], "samples"),
        ("metrics", &[("t0", "9"), ("t1", "2")], "t1"),
    ];
    for (route, pairs, needle) in cases {
        let (status, message) = refused(&lens, route, pairs);
        assert_eq!(status, 400, "{route} {pairs:?}: {message}");
        assert!(
            message.contains(needle),
            "{route} {pairs:?}: `{message}` does not name `{needle}`"
        );
        assert!(!message.contains('\n') && !message.is_empty(), "{message}");
        // A second sentence would start with a capital after a full stop.
        let two = message
            .split(". ")
            .skip(1)
            .any(|rest| rest.starts_with(|c: char| c.is_uppercase()));
        assert!(!two, "more than one sentence: {message}");
    }
    let (status, message) = refused(&lens, "nothing", &[]);
    assert_eq!(status, 404);
    assert!(message.contains("nothing"));
}

/// A model big enough for an overview: `MIN_BLOCKS` + 5 000 short-lived blocks of two
/// threads cycling through 64 slots of a heap, and a few long-lived ones.
fn busy_model() -> AllocModel {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "busy".to_owned(),
    });
    let threads = [b.thread(p, 7, "main"), b.thread(p, 8, "worker")];
    let base = 0x5555_0000_0000u64;
    let n = memlens_alloc::MIN_BLOCKS as u64 + 5_000;
    for i in 0..n {
        let (t, thread) = (10 * i + 1, threads[(i % 2) as usize]);
        let addr = base + (i % 64) * 96;
        b.alloc(AllocEvent {
            t,
            thread,
            addr,
            size: 40 + i % 40,
            site: memlens_alloc::SiteId::UNKNOWN,
            latency_ns: None,
        });
        if i % 64 != 0 || i + 64 < n {
            b.free(FreeEvent {
                t: t + 5,
                thread,
                addr,
                site: memlens_alloc::SiteId::UNKNOWN,
                latency_ns: None,
            });
        }
    }
    b.finish(10 * n + 100)
}

/// Waits up to 30 s for `ready`.
fn wait_for(ready: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the overview was not prepared in 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The lens's answer for the grid tile of the whole model (level 0), with `options`.
fn whole_tile(lens: &AllocLens, options: &[(&str, &str)]) -> ApiBody {
    let mut q = vec![("zx", "0"), ("zy", "0"), ("x", "0"), ("y", "0")];
    q.extend_from_slice(options);
    ask(lens, "tile", &q)
}

/// The largest difference of two RGBA buffers' channels.
fn max_difference(a: &[u8], b: &[u8]) -> u8 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[test]
fn coarse_tiles_come_from_the_overview_prepared_in_the_background() {
    let lens = AllocLens::new(busy_model());
    let m = lens.model();
    let whole = View::whole(m, 256, 256);
    let view_of = |zx: u32, zy: u32, x: u64, y: u64| View {
        time: {
            let (start_ns, end_ns) =
                tile_bounds(whole.time.start_ns, whole.time.duration_ns(), zx, x);
            TimeRange { start_ns, end_ns }
        },
        addr: tile_bounds(0, whole.addr.1, zy, y),
        width: 256,
        height: 256,
    };
    // The default options' overview is prepared as soon as the lens exists.
    wait_for(|| m.overview_ready(&RenderOptions::default()));
    for (zx, zy, x, y) in [(0, 0, 0, 0), (1, 2, 1, 3), (0, 7, 0, 100)] {
        let view = view_of(zx, zy, x, y);
        assert!(memlens_alloc::overview_serves(m, &view));
        let from_overview =
            memlens_alloc::render_from_overview(m, &view, &RenderOptions::default())
                .unwrap()
                .expect("prepared");
        let (_, _, pixels) = png(&ask(
            &lens,
            "tile",
            &[
                ("zx", &zx.to_string()),
                ("zy", &zy.to_string()),
                ("x", &x.to_string()),
                ("y", &y.to_string()),
            ],
        ));
        // The lens answers with the overview's pixels, which are formula (1)'s up to rounding.
        assert_eq!(pixels, from_overview.pixels, "tile {zx}/{zy}/{x}/{y}");
        let plain = render(m, &view, &RenderOptions::default()).unwrap();
        assert!(max_difference(&pixels, &plain.pixels) <= 1);
        assert!(plain.pixels.chunks(4).any(|p| p[..3] != [255, 255, 255]));
    }
    // Another option set: its first coarse tile starts the preparation (the tile itself
    // is drawn the plain way unless the preparation is already done).
    let options = RenderOptions {
        alpha: 0.8,
        color_by: memlens_alloc::ColorBy::Size,
        ..RenderOptions::default()
    };
    assert!(!m.overview_ready(&options));
    let (_, _, pixels) = png(&whole_tile(&lens, &[("alpha", "0.8"), ("color", "size")]));
    let plain = render(m, &view_of(0, 0, 0, 0), &options).unwrap();
    assert!(max_difference(&pixels, &plain.pixels) <= 1);
    wait_for(|| m.overview_ready(&options));
    // Deep time levels are not served: drawn the plain way.
    assert!(!memlens_alloc::overview_serves(m, &view_of(5, 0, 3, 0)));
}

#[test]
fn a_viewer_finds_the_other_colourings_prepared_ahead_and_a_report_does_not() {
    use memlens_alloc::ColorBy;
    let colouring = |by| RenderOptions {
        color_by: by,
        ..RenderOptions::default()
    };
    let lens = AllocLens::interactive(busy_model());
    let m = lens.model();
    for by in [
        ColorBy::Thread,
        ColorBy::Site,
        ColorBy::Size,
        ColorBy::Waste,
        ColorBy::Age,
    ] {
        wait_for(|| m.overview_ready(&colouring(by)));
    }
    // One process and no latencies: nothing to see there, so not prepared.
    assert!(!m.overview_ready(&colouring(ColorBy::Process)));
    // The site tile then comes from the sums prepared ahead.
    let (_, _, pixels) = png(&whole_tile(&lens, &[("color", "site")]));
    let view = View::whole(m, 256, 256);
    let ahead = memlens_alloc::render_from_overview(m, &view, &colouring(ColorBy::Site))
        .unwrap()
        .expect("prepared ahead");
    assert_eq!(pixels, ahead.pixels);

    // A lens for a report prepares the default options only.
    let report = AllocLens::new(busy_model());
    let m = report.model();
    wait_for(|| m.overview_ready(&RenderOptions::default()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!m.overview_ready(&colouring(ColorBy::Site)));
}
