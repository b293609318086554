//! `f^α` by table lookup: the rasterizer raises millions of coverage fractions to the
//! bias α per frame, and `powf` costs ~20 ns. The table is indexed by the top 20 bits of
//! the `f32` (exponent and 11 mantissa bits) for `f` in `[2^-40, 1]`, each entry the
//! power at its bucket's centre: relative error ≤ α·2^-12. Below 2^-40 `powf` is used.
//! α = 1 bypasses the table (exact).

use std::sync::{Arc, Mutex};

const MIN_BITS: u32 = (127 - 40) << 23;
const ONE_BITS: u32 = 0x3f80_0000;
const SHIFT: u32 = 12;

/// The table for one α.
#[derive(Debug)]
pub struct PowLut {
    alpha: f64,
    exact: bool,
    table: Vec<f32>,
}

impl PowLut {
    /// The table for `alpha` (cached: rendering many tiles with one α builds it once).
    pub fn shared(alpha: f64) -> Arc<PowLut> {
        static CACHE: Mutex<Option<Arc<PowLut>>> = Mutex::new(None);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lut) = cache.as_ref()
            && lut.alpha.to_bits() == alpha.to_bits()
        {
            return Arc::clone(lut);
        }
        let lut = Arc::new(PowLut::new(alpha));
        *cache = Some(Arc::clone(&lut));
        lut
    }

    /// Builds the table.
    pub fn new(alpha: f64) -> PowLut {
        let exact = alpha == 1.0;
        let table = if exact {
            Vec::new()
        } else {
            let n = ((ONE_BITS - MIN_BITS) >> SHIFT) + 1;
            (0..n)
                .map(|i| {
                    let centre = f32::from_bits(MIN_BITS + (i << SHIFT) + (1 << (SHIFT - 1)));
                    f64::from(centre).powf(alpha) as f32
                })
                .collect()
        };
        PowLut {
            alpha,
            exact,
            table,
        }
    }

    /// `f^α` for `f` in `[0, 1]` (clamped).
    #[inline]
    pub fn pow(&self, f: f64) -> f32 {
        if self.exact {
            return f.clamp(0.0, 1.0) as f32;
        }
        if f >= 1.0 {
            return 1.0;
        }
        if f <= 0.0 {
            return 0.0;
        }
        let bits = (f as f32).to_bits();
        if bits < MIN_BITS {
            return f.powf(self.alpha) as f32;
        }
        self.table[((bits - MIN_BITS) >> SHIFT) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_powf_closely() {
        for alpha in [0.1, 0.5, 0.9, 2.0] {
            let lut = PowLut::new(alpha);
            let mut f: f64 = 1e-13;
            while f < 1.0 {
                let exact = f.powf(alpha);
                let got = f64::from(lut.pow(f));
                assert!(
                    ((got - exact) / exact).abs() < 1e-3,
                    "α {alpha}, f {f}: {got} vs {exact}"
                );
                f *= 1.37;
            }
            assert_eq!(lut.pow(1.0), 1.0);
            assert_eq!(lut.pow(0.0), 0.0);
        }
        assert_eq!(PowLut::new(1.0).pow(0.3), 0.3);
    }
}
