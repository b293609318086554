//! Colour maps: a categorical palette for thread, process and site ids, and the
//! paper's blue (low) → red (high) map for continuous attributes (size, waste, age,
//! latency, occupancy). Colours are RGB in 0..=1; blending happens in that space.

/// An RGB colour, each channel in 0..=1.
pub type Rgb = [f32; 3];

/// Twelve well-separated hues for the first categories (ids 0..12); later ids step
/// round the hue circle by the golden angle, so neighbours stay distinguishable.
const PALETTE: [Rgb; 12] = [
    [0.122, 0.471, 0.706],
    [0.890, 0.102, 0.110],
    [0.200, 0.627, 0.173],
    [1.000, 0.498, 0.000],
    [0.416, 0.239, 0.604],
    [0.651, 0.337, 0.157],
    [0.969, 0.506, 0.749],
    [0.090, 0.745, 0.812],
    [0.737, 0.741, 0.133],
    [0.400, 0.400, 0.400],
    [0.992, 0.749, 0.435],
    [0.792, 0.698, 0.839],
];

/// The colour of category `id` (deterministic; the same id always gets the same colour).
pub fn categorical_color(id: u32) -> Rgb {
    if let Some(c) = PALETTE.get(id as usize) {
        return *c;
    }
    let hue = (f64::from(id) * 0.618_033_988_749_895).fract() as f32 * 6.0;
    let (sat, val) = if id.is_multiple_of(2) {
        (0.65, 0.85)
    } else {
        (0.8, 0.65)
    };
    hsv(hue, sat, val)
}

/// Hue in 0..6 (sextants), saturation and value in 0..=1.
fn hsv(h: f32, s: f32, v: f32) -> Rgb {
    let i = h.floor();
    let f = h - i;
    let p = v * (1.0 - s);
    let q = v * (1.0 - s * f);
    let t = v * (1.0 - s * (1.0 - f));
    match i as u32 % 6 {
        0 => [v, t, p],
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        _ => [v, p, q],
    }
}

/// Stops of the continuous map: blue, cyan, green, yellow, red.
const STOPS: [Rgb; 5] = [
    [0.12, 0.20, 0.85],
    [0.10, 0.75, 0.90],
    [0.25, 0.80, 0.25],
    [0.98, 0.85, 0.15],
    [0.88, 0.12, 0.10],
];

/// The continuous map at `v` in 0..=1 (clamped): blue for low, red for high.
pub fn continuous_color(v: f32) -> Rgb {
    let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    let x = v * (STOPS.len() - 1) as f32;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    [
        a[0] + (b[0] - a[0]) * f,
        a[1] + (b[1] - a[1]) * f,
        a[2] + (b[2] - a[2]) * f,
    ]
}

/// Converts a colour in 0..=1 to 8-bit channels (rounded, clamped).
pub fn to_u8(c: Rgb) -> [u8; 3] {
    let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    [q(c[0]), q(c[1]), q(c[2])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuous_map_runs_from_blue_to_red() {
        let low = continuous_color(0.0);
        let high = continuous_color(1.0);
        assert!(low[2] > low[0], "{low:?}");
        assert!(high[0] > high[2], "{high:?}");
        assert_eq!(continuous_color(2.0), high);
        assert_eq!(continuous_color(f32::NAN), low);
    }

    #[test]
    fn categories_are_distinct_and_stable() {
        let colors: Vec<[u8; 3]> = (0..40).map(|i| to_u8(categorical_color(i))).collect();
        for (i, a) in colors.iter().enumerate() {
            for b in &colors[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(categorical_color(17), categorical_color(17));
    }
}
