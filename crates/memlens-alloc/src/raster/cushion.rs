//! Shaded cushions (van Wijk & van de Wetering, "Cushion Treemaps", 1999): each block is
//! a bump whose height profile across each axis is a ridge, lit by a light from the
//! upper right; dark rims and a bright centre make neighbours of one colour distinct.
//!
//! With `t ∈ [0, 1]` the position across the block and `h` the cushion height, the
//! slope of the height profile is, in pixel units (so cushions look alike at any size):
//!
//! - **parabolic**: the ridge `z = 4h·t(1 − t)·width`, slope `4h(1 − 2t)`;
//! - **plateau**: flat in the middle `|2t − 1| ≤ p`, then the parabola's rim: slope
//!   `4h·sign(1 − 2t)·(|2t − 1| − p)/(1 − p)` (same edge slope, a bevelled look).
//!
//! The normal is `n = (−∂z/∂x, −∂z/∂y, 1)` and the intensity
//! `I = Ia + Is·max(0, n·L)/|n|` with `L = (1, 2, 10)/√105`, `Ia = 40/255`,
//! `Is = 215/255` (the paper's constants); the pixel colour is `I ×` the block colour.

/// The luminance profile of the cushions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CushionProfile {
    /// Flat shading (no cushions).
    None,
    /// Parabolic ridges: strongest structure, darkest long blocks.
    Parabolic,
    /// Plateau with bevelled rims: readable colours, softer contrast.
    #[default]
    Plateau,
}

/// Cushion height: the edge slope is `4h`.
pub const HEIGHT: f64 = 0.5;
/// Width of the plateau's flat part, as a fraction of the block.
pub const PLATEAU: f64 = 0.7;
const AMBIENT: f64 = 40.0 / 255.0;
const DIFFUSE: f64 = 215.0 / 255.0;
const SQRT_105: f64 = 10.246_950_765_959_598;
const LIGHT: [f64; 3] = [1.0 / SQRT_105, 2.0 / SQRT_105, 10.0 / SQRT_105];

/// The slope of the profile at position `t ∈ [0, 1]` across a block.
#[inline]
pub fn slope(profile: CushionProfile, t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    match profile {
        CushionProfile::None => 0.0,
        CushionProfile::Parabolic => 4.0 * HEIGHT * (1.0 - 2.0 * t),
        CushionProfile::Plateau => {
            let u = 2.0 * t - 1.0;
            if u.abs() <= PLATEAU {
                0.0
            } else {
                -4.0 * HEIGHT * u.signum() * (u.abs() - PLATEAU) / (1.0 - PLATEAU)
            }
        }
    }
}

/// The intensity for slopes `sx` (along x) and `sy` (along y, upwards).
#[inline]
pub fn intensity(sx: f64, sy: f64) -> f32 {
    let dot = -sx * LIGHT[0] - sy * LIGHT[1] + LIGHT[2];
    let norm = (sx * sx + sy * sy + 1.0).sqrt();
    (AMBIENT + DIFFUSE * (dot / norm).max(0.0)) as f32
}

/// The intensity of a flat surface (the centre of a cushion).
pub fn flat_intensity() -> f32 {
    intensity(0.0, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cushions_are_bright_in_the_middle_and_dark_at_the_rims() {
        for p in [CushionProfile::Parabolic, CushionProfile::Plateau] {
            let centre = intensity(slope(p, 0.5), slope(p, 0.5));
            let rim = intensity(slope(p, 0.02), slope(p, 0.5));
            assert!(centre > rim + 0.2, "{p:?}: {centre} vs {rim}");
            assert!((centre - flat_intensity()).abs() < 1e-6);
        }
        // The plateau is flat over its middle, the parabola is not.
        assert_eq!(slope(CushionProfile::Plateau, 0.3), 0.0);
        assert!(slope(CushionProfile::Parabolic, 0.3) > 0.0);
        assert_eq!(slope(CushionProfile::None, 0.0), 0.0);
        // The light comes from the upper right: the left rim is darker than the right.
        let left = intensity(slope(CushionProfile::Parabolic, 0.0), 0.0);
        let right = intensity(slope(CushionProfile::Parabolic, 1.0), 0.0);
        assert!(left < right);
    }
}
