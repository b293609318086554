//! The engine's image type: 8-bit RGBA pixels, rows top to bottom, and its PNG encoding
//! (in memory: writing the bytes anywhere is the caller's business).

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

    /// The image as an 8-bit RGBA PNG, with fast compression (the engine's images are
    /// mostly flat areas) and fixed settings, so the same image always gives the same
    /// bytes.
    ///
    /// # Panics
    ///
    /// If a side is 0 or `pixels` does not hold `width × height × 4` bytes; the engine's
    /// images never are so.
    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pixels.len() / 8 + 64);
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        // Writing to a Vec cannot fail, so the only errors are malformed images.
        let mut writer = encoder
            .write_header()
            .expect("a PNG header of an image with pixels");
        writer
            .write_image_data(&self.pixels)
            .expect("PNG data of an image with width × height × 4 bytes");
        writer.finish().expect("the PNG end, into memory");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_has_the_signature_and_the_image_header() {
        let mut img = RgbaImage::new(3, 2);
        img.set(1, 1, [10, 20, 30, 255]);
        let bytes = img.to_png();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height (big-endian), bit depth 8, colour type 6 (RGBA).
        assert_eq!(&bytes[12..16], b"IHDR");
        assert_eq!(&bytes[16..24], &[0, 0, 0, 3, 0, 0, 0, 2]);
        assert_eq!(&bytes[24..26], &[8, 6]);
        assert_eq!(bytes, img.to_png(), "the same image gives the same bytes");
    }
}
