//! The rasterizer: hand-computed pixels of formula (1) for blocks at sub-pixel sizes,
//! a property test against a brute-force supersampled reference on random
//! non-overlapping blocks, golden checksums of whole images, and tiles.

mod common;

use memlens_alloc::*;
use proptest::prelude::*;

const RED: [f32; 3] = [1.0, 0.0, 0.0];
const BLUE: [f32; 3] = [0.0, 0.0, 1.0];
const WHITE: [f32; 3] = [1.0, 1.0, 1.0];

fn one_pixel(alpha: f64, rects: &[([f64; 4], [f32; 3])]) -> [u8; 4] {
    let mut r = Rasterizer::new(1, 1, alpha, 3, CushionProfile::None);
    for (rect, c) in rects {
        r.add(rect[0], rect[1], rect[2], rect[3], c);
    }
    resolve(&r.finish(), WHITE).pixel(0, 0)
}

#[test]
fn alpha_one_is_area_weighted_averaging() {
    // Half the pixel red: half red, half white.
    assert_eq!(
        one_pixel(1.0, &[([0.25, 0.75, 0.0, 1.0], RED)]),
        [255, 128, 128, 255]
    );
    // A quarter red and a quarter blue: (0.75, 0.5, 0.75).
    assert_eq!(
        one_pixel(
            1.0,
            &[([0.0, 0.5, 0.0, 0.5], RED), ([0.5, 1.0, 0.5, 1.0], BLUE)]
        ),
        [191, 128, 191, 255]
    );
    // A tenth: 255 · 0.9 = 229.5 → 230 in green and blue.
    assert_eq!(
        one_pixel(1.0, &[([0.0, 0.1, 0.0, 1.0], RED)]),
        [255, 230, 230, 255]
    );
}

#[test]
fn smaller_alpha_makes_a_thin_isolated_block_darker() {
    // f = 0.1, α = 0.5: F = √0.1 = 0.3162, B = √0.9 = 0.9487, white share 0.75 → 191.
    let biased = one_pixel(0.5, &[([0.0, 0.1, 0.0, 1.0], RED)]);
    assert_eq!(biased, [255, 191, 191, 255]);
    let plain = one_pixel(1.0, &[([0.0, 0.1, 0.0, 1.0], RED)]);
    assert!(biased[1] + 30 < plain[1], "{biased:?} vs {plain:?}");
    // A fully covered pixel is the block's colour at any α.
    assert_eq!(
        one_pixel(0.3, &[([0.0, 1.0, 0.0, 1.0], BLUE)]),
        [0, 0, 255, 255]
    );
}

#[test]
fn a_thin_long_block_covers_its_row_exactly() {
    // 0.1 px tall, from x = 0.5 to 20.5 on a 32×1 image: the difference-array path.
    let mut r = Rasterizer::new(32, 1, 1.0, 3, CushionProfile::Plateau);
    r.add(0.5, 20.5, 0.0, 0.1, &RED);
    let c = r.finish();
    let f = |x| c.at(x, 0).coverage;
    assert!((f(0) - 0.05).abs() < 1e-6);
    assert!((f(5) - 0.1).abs() < 1e-6);
    assert!((f(20) - 0.05).abs() < 1e-6);
    assert_eq!(f(21), 0.0);
    assert!(
        (c.at(5, 0).luminance - 0.1).abs() < 1e-6,
        "thin blocks are flat"
    );
}

#[test]
fn big_blocks_get_cushions() {
    let mut r = Rasterizer::new(20, 20, 1.0, 3, CushionProfile::Parabolic);
    r.add(0.0, 20.0, 0.0, 20.0, &RED);
    let c = r.finish();
    let centre = c.at(10, 10).luminance;
    let rim = c.at(0, 10).luminance;
    assert!(centre > rim + 0.2, "{centre} vs {rim}");
    assert!((c.at(10, 10).coverage - 1.0).abs() < 1e-6);
}

/// Random non-overlapping rectangles on a grid of 1/8 pixel, in a 12×10 image.
fn rects() -> impl Strategy<Value = Vec<[u32; 4]>> {
    prop::collection::vec((0u32..96, 1u32..60, 0u32..80, 1u32..30), 1..25).prop_map(|raw| {
        let mut kept: Vec<[u32; 4]> = Vec::new();
        for (x, w, y, h) in raw {
            let r = [x, (x + w).min(96), y, (y + h).min(80)];
            let overlaps = kept
                .iter()
                .any(|k| r[0] < k[1] && k[0] < r[1] && r[2] < k[3] && k[2] < r[3]);
            if !overlaps && r[0] < r[1] && r[2] < r[3] {
                kept.push(r);
            }
        }
        kept
    })
}

proptest! {
    #[test]
    fn coverage_matches_supersampling(rs in rects(), alpha in 0.1f64..1.5, cushion in 0u8..3) {
        let profile = [CushionProfile::None, CushionProfile::Plateau, CushionProfile::Parabolic][cushion as usize];
        let (w, h) = (12u32, 10u32);
        let mut r = Rasterizer::new(w, h, alpha, 1, profile);
        let values: Vec<f32> = (0..rs.len()).map(|i| (i as f32 + 1.0) / rs.len() as f32).collect();
        for (k, q) in rs.iter().enumerate() {
            r.add(q[0] as f64 / 8.0, q[1] as f64 / 8.0, q[2] as f64 / 8.0, q[3] as f64 / 8.0, &[values[k]]);
        }
        let c = r.finish();
        for py in 0..h {
            for px in 0..w {
                // Reference: 8×8 samples per pixel, exact on the 1/8 grid.
                let mut counts = vec![0u32; rs.len()];
                for sy in 0..8 {
                    for sx in 0..8 {
                        let gx = px * 8 + sx;
                        let gy = py * 8 + sy;
                        for (k, q) in rs.iter().enumerate() {
                            if q[0] <= gx && gx < q[1] && q[2] <= gy && gy < q[3] {
                                counts[k] += 1;
                            }
                        }
                    }
                }
                let (mut s0, mut s1, mut s2) = (0f64, 0f64, 0f64);
                for (k, &n) in counts.iter().enumerate() {
                    if n > 0 {
                        let f = n as f64 / 64.0;
                        s0 += f;
                        s1 += f.powf(alpha);
                        s2 += f.powf(alpha) * values[k] as f64;
                    }
                }
                // Image rows count from the top; the rasterizer's y from the bottom.
                let got = c.at(px, h - 1 - py);
                prop_assert!((got.coverage as f64 - s0).abs() < 1e-5, "S0 at {px},{py}: {} vs {s0}", got.coverage);
                prop_assert!((got.weight as f64 - s1).abs() < 1e-3 * s1 + 1e-5, "S1 at {px},{py}: {} vs {s1}", got.weight);
                prop_assert!((got.color[0] as f64 - s2).abs() < 1e-3 * s1 + 1e-5, "S2 at {px},{py}: {} vs {s2}", got.color[0]);
                prop_assert!(got.luminance <= got.weight * 1.0001 + 1e-6);
            }
        }
    }
}

/// FNV-1a of an image's pixels.
fn checksum(img: &RgbaImage) -> u64 {
    img.pixels.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A fixed model: 400 blocks of two threads in a main heap, plus an mmap'd chunk.
fn fixed_model() -> AllocModel {
    let mut specs = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..400u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let size = 16 + (x % 200);
        let life = 5 + (x >> 20) % 400;
        let addr = 0x5555_0000_0000 + (i % 50) * 256;
        let t = (i / 50) * 500 + (i % 7);
        specs.push((t, Some(t + life.min(490)), addr, size, 1 + (i % 2) as u32));
    }
    specs.push((100, Some(3000), 0x7f00_0000_0010, 300_000, 1));
    common::model(&specs, 4000)
}

#[test]
fn golden_images_are_stable() {
    let m = fixed_model();
    assert_eq!(m.bins().len(), 2);
    let view = View::whole(&m, 160, 90);
    let mut sums = Vec::new();
    for (color_by, cushion, alpha) in [
        (ColorBy::Thread, CushionProfile::Plateau, 0.5),
        (ColorBy::Size, CushionProfile::Parabolic, 1.0),
        (ColorBy::Waste, CushionProfile::None, 0.25),
    ] {
        let opts = RenderOptions {
            alpha,
            cushion,
            color_by,
            ..RenderOptions::default()
        };
        let a = render(&m, &view, &opts).unwrap();
        let b = render(&m, &view, &opts).unwrap();
        assert_eq!(a, b, "rendering is deterministic");
        sums.push(checksum(&a));
    }
    assert_eq!(sums, GOLDEN, "golden checksums changed: {sums:#x?}");
}

const GOLDEN: [u64; 3] = [
    0xe88c_bda7_a8b0_966b,
    0x546e_100e_d893_ad84,
    0xd85f_45a1_6dc2_ca4a,
];

#[test]
fn tiles_agree_with_the_whole_picture() {
    let m = fixed_model();
    let whole = View::whole(&m, 256, 256);
    let opts = RenderOptions::default();
    let big = render(&m, &whole, &opts).unwrap();
    // The top-left 128×128 quarter as a tile at the same scale.
    let (t0, t1) = (whole.time.start_ns, whole.time.end_ns);
    let (a0, a1) = whole.addr;
    let tile = View {
        time: TimeRange {
            start_ns: t0,
            end_ns: t0 + (t1 - t0) / 2,
        },
        addr: (a0 + (a1 - a0) / 2, a1),
        width: 128,
        height: 128,
    };
    let t = render(&m, &tile, &opts).unwrap();
    let mut differing = 0;
    for y in 0..128 {
        for x in 0..128 {
            let (p, q) = (big.pixel(x, y), t.pixel(x, y));
            if p.iter().zip(q.iter()).any(|(a, b)| a.abs_diff(*b) > 2) {
                differing += 1;
            }
        }
    }
    assert!(
        differing < 128,
        "{differing} pixels differ between tile and whole"
    );
}

#[test]
fn brushing_finds_the_block_under_the_mouse() {
    let m = common::model(
        &[
            (10, Some(50), 0x5000_0000, 100, 7),
            (60, None, 0x5000_0000, 8, 8),
        ],
        100,
    );
    let y = m.axis_position(BlockId(0)) + 50;
    let info = m.block_at(30, y).unwrap();
    assert_eq!(
        (
            info.requested,
            info.reserved,
            info.t_alloc,
            info.t_free,
            info.tid
        ),
        (100, 104, 10, Some(50), 7)
    );
    assert!(m.block_at(55, y).is_none());
    let later = m.block_at(70, m.axis_position(BlockId(1))).unwrap();
    assert_eq!((later.tid, later.t_free), (8, None));
}

#[test]
fn bad_views_and_options_are_refused() {
    let m = fixed_model();
    let mut v = View::whole(&m, 10, 10);
    let o = RenderOptions {
        alpha: 0.0,
        ..RenderOptions::default()
    };
    assert!(matches!(render(&m, &v, &o), Err(AllocError::BadAlpha(_))));
    v.time.end_ns = v.time.start_ns;
    assert!(matches!(
        render(&m, &v, &RenderOptions::default()),
        Err(AllocError::EmptyTimeWindow { .. })
    ));
    let o = RenderOptions {
        color_by: ColorBy::Latency,
        ..RenderOptions::default()
    };
    let e = render(&m, &View::whole(&m, 10, 10), &o).unwrap_err();
    assert!(e.to_string().contains("record --latency"), "{e}");
}
