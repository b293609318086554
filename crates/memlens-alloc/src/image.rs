//! The engine's image type: 8-bit RGBA pixels, rows top to bottom. Encoding (PNG) is
//! the caller's business.

/// An RGBA image, 4 bytes per pixel, row-major from the top-left corner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes: R, G, B, A per pixel.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    /// A fully transparent image.
    pub fn new(width: u32, height: u32) -> RgbaImage {
        RgbaImage {
            width,
            height,
            pixels: vec![0; width as usize * height as usize * 4],
        }
    }

    /// The pixel at column `x`, row `y` (0 = top).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }

    /// Sets the pixel at column `x`, row `y` (0 = top).
    pub fn set(&mut self, x: u32, y: u32, rgba: [u8; 4]) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.pixels[i..i + 4].copy_from_slice(&rgba);
    }

    /// Copies `other` into this image with its top-left corner at row `y` (rows past
    /// the bottom are cut). Both images must have the same width.
    pub fn paste_rows(&mut self, other: &RgbaImage, y: u32) {
        debug_assert_eq!(self.width, other.width);
        let start = y as usize * self.width as usize * 4;
        let end = (start + other.pixels.len()).min(self.pixels.len());
        if start < end {
            self.pixels[start..end].copy_from_slice(&other.pixels[..end - start]);
        }
    }
}
