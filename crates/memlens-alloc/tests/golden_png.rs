//! The allocation map's rendering, byte for byte: a fixed hand-made model drawn at 64×32
//! with formula (1) and cushions, encoded as PNG, must keep its checksum. A change to
//! the rasterizer, the colour maps or the PNG encoding shows up here first.

use memlens_alloc::*;

#[test]
fn golden_png_of_a_fixed_model() {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 1,
        ppid: 0,
        name: "t".into(),
    });
    let th = [b.thread(p, 1, ""), b.thread(p, 2, "")];
    for i in 0..64u64 {
        b.alloc(AllocEvent {
            t: i * 10,
            thread: th[(i % 2) as usize],
            addr: 0x5000_0000 + (i % 16) * 64,
            size: 8 + i % 40,
            site: SiteId::UNKNOWN,
            latency_ns: None,
        });
        b.free(FreeEvent {
            t: i * 10 + 9,
            thread: th[0],
            addr: 0x5000_0000 + (i % 16) * 64,
            site: SiteId::UNKNOWN,
            latency_ns: None,
        });
    }
    let m = b.finish(700);
    let img = render(&m, &View::whole(&m, 64, 32), &RenderOptions::default()).unwrap();
    let bytes = img.to_png();
    let sum = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(sum, GOLDEN_PNG, "golden PNG checksum changed: {sum:#x}");
}

const GOLDEN_PNG: u64 = 0x9d30_9321_4529_ceaa;
