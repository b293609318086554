//! Formula (1) of the paper for one pixel: from the pixel's coverage sums to its
//! colour. A leaf shared by the plain path (`resolve`) and the rasterizer's final pass,
//! which resolves straight into the image.

use super::pow_lut::PowLut;
use crate::colormap::{Rgb, continuous_color, to_u8};

/// Formula (1) for one pixel's sums `px` (S0, S1, S3, then 1 or 3 colour sums).
#[inline]
pub(crate) fn resolve_pixel(px: &[f32], lut: &PowLut, background: Rgb) -> [u8; 4] {
    let (s0, s1, s3) = (px[0], px[1], px[2]);
    let rgb = if s1 <= 0.0 {
        background
    } else {
        let b = lut.pow(f64::from(1.0 - s0).max(0.0));
        let lum = s3 / s1;
        let base = if px.len() == 6 {
            [px[3] / s1, px[4] / s1, px[5] / s1]
        } else {
            continuous_color(px[3] / s1)
        };
        let total = s1 + b;
        [
            (s1 * base[0] * lum + b * background[0]) / total,
            (s1 * base[1] * lum + b * background[1]) / total,
            (s1 * base[2] * lum + b * background[2]) / total,
        ]
    };
    let [r, g, b] = to_u8(rgb);
    [r, g, b, 255]
}
