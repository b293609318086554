//! Level geometry (sets, ways, line size) and the errors for configurations that
//! cannot be built.
//!
//! A [`Geometry`] is the validated, precomputed form of a level's shape: it turns an
//! address into a line number and a line into a set index. Set counts need not be
//! powers of two (the set is `line % sets`, as in pycachesim); a power of two takes a
//! mask instead of a division. Every error names the level and says what is wrong.

use std::fmt;

use crate::config::{HierarchyConfig, Inclusion, LevelConfig, Replacement};

/// The most levels a hierarchy may have (outcomes keep one bit per level).
pub const MAX_LEVELS: usize = 16;

/// The validated shape of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// The number of sets.
    pub sets: u64,
    /// The number of ways per set.
    pub ways: u32,
    /// The line size in bytes.
    pub line_size: u32,
    /// `log2(line_size)`.
    pub line_shift: u32,
    /// `sets - 1` when `sets` is a power of two, else `u64::MAX` (use a division).
    set_mask: u64,
}

impl Geometry {
    /// Validates a level's shape.
    pub fn new(level: &LevelConfig) -> Result<Geometry, GeometryProblem> {
        if level.size == 0 {
            return Err(GeometryProblem::ZeroSize);
        }
        if level.ways == 0 {
            return Err(GeometryProblem::ZeroWays);
        }
        if !level.line_size.is_power_of_two() {
            return Err(GeometryProblem::LineSizeNotPowerOfTwo(level.line_size));
        }
        if level.line_size < 4 {
            return Err(GeometryProblem::LineSizeTooSmall);
        }
        let set_bytes = u64::from(level.ways) * u64::from(level.line_size);
        if level.size < set_bytes {
            return Err(GeometryProblem::SmallerThanOneSet {
                size: level.size,
                ways: level.ways,
                line_size: level.line_size,
            });
        }
        if !level.size.is_multiple_of(set_bytes) {
            return Err(GeometryProblem::FractionalSets {
                size: level.size,
                ways: level.ways,
                line_size: level.line_size,
            });
        }
        if level.replacement == Replacement::TreePlru
            && (!level.ways.is_power_of_two() || level.ways > 64)
        {
            return Err(GeometryProblem::PlruWays(level.ways));
        }
        let sets = level.size / set_bytes;
        if sets > u64::from(u32::MAX) || level.ways > 65_536 {
            return Err(GeometryProblem::TooLarge);
        }
        Ok(Geometry {
            sets,
            ways: level.ways,
            line_size: level.line_size,
            line_shift: level.line_size.trailing_zeros(),
            set_mask: if sets.is_power_of_two() {
                sets - 1
            } else {
                u64::MAX
            },
        })
    }

    /// Returns the line number holding `addr`.
    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.line_shift
    }

    /// Returns the first byte of line number `line`.
    #[inline]
    pub fn line_addr(&self, line: u64) -> u64 {
        line << self.line_shift
    }

    /// Returns the set a line maps to.
    #[inline]
    pub fn set_of(&self, line: u64) -> usize {
        if self.set_mask != u64::MAX {
            (line & self.set_mask) as usize
        } else {
            (line % self.sets) as usize
        }
    }
}

/// What is wrong with one level's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeometryProblem {
    /// The size is 0.
    ZeroSize,
    /// The number of ways is 0.
    ZeroWays,
    /// The line size is not a power of two.
    LineSizeNotPowerOfTwo(u32),
    /// The line size is 1 or 2 bytes; lines of at least 4 bytes are supported.
    LineSizeTooSmall,
    /// The size is smaller than one set (`ways × line_size`).
    SmallerThanOneSet {
        /// The configured size.
        size: u64,
        /// The configured ways.
        ways: u32,
        /// The configured line size.
        line_size: u32,
    },
    /// The size is not a whole number of sets.
    FractionalSets {
        /// The configured size.
        size: u64,
        /// The configured ways.
        ways: u32,
        /// The configured line size.
        line_size: u32,
    },
    /// Tree-PLRU needs a power-of-two number of ways, at most 64.
    PlruWays(u32),
    /// More than 2³² sets or 65,536 ways.
    TooLarge,
    /// The line size is smaller than the level above's; lines may only grow towards
    /// memory.
    LineShrinks {
        /// The level above's line size.
        above: u32,
        /// This level's line size.
        this: u32,
    },
    /// Exclusive hierarchies move whole lines between levels, so all line sizes must
    /// be equal.
    ExclusiveLineMismatch {
        /// The first level's line size.
        first: u32,
        /// This level's line size.
        this: u32,
    },
}

impl fmt::Display for GeometryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryProblem::ZeroSize => write!(f, "the size is 0 bytes"),
            GeometryProblem::ZeroWays => write!(f, "the number of ways is 0"),
            GeometryProblem::LineSizeNotPowerOfTwo(l) => {
                write!(f, "the line size {l} is not a power of two")
            }
            GeometryProblem::LineSizeTooSmall => {
                write!(f, "the line size is below 4 bytes; use at least 4")
            }
            GeometryProblem::SmallerThanOneSet {
                size,
                ways,
                line_size,
            } => write!(
                f,
                "the size {size} is smaller than one set of {ways} ways × {line_size}-byte lines"
            ),
            GeometryProblem::FractionalSets {
                size,
                ways,
                line_size,
            } => write!(
                f,
                "the size {size} is not a whole number of sets of {ways} ways × {line_size}-byte lines ({} bytes each)",
                u64::from(*ways) * u64::from(*line_size)
            ),
            GeometryProblem::PlruWays(w) => write!(
                f,
                "tree-PLRU needs a power-of-two number of ways up to 64, not {w}"
            ),
            GeometryProblem::TooLarge => {
                write!(f, "the level has more than 2^32 sets or 65536 ways")
            }
            GeometryProblem::LineShrinks { above, this } => write!(
                f,
                "its line size {this} is smaller than the level above's {above}; lines may only grow towards memory"
            ),
            GeometryProblem::ExclusiveLineMismatch { first, this } => write!(
                f,
                "exclusive hierarchies need equal line sizes, but this level has {this} and the first has {first}"
            ),
        }
    }
}

/// Why a hierarchy cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The hierarchy has no level.
    NoLevels,
    /// The hierarchy has more than [`MAX_LEVELS`] levels.
    TooManyLevels(usize),
    /// One level's shape is not realisable.
    Geometry {
        /// The level's name.
        level: String,
        /// What is wrong.
        problem: GeometryProblem,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoLevels => write!(f, "the cache hierarchy has no level"),
            ConfigError::TooManyLevels(n) => write!(
                f,
                "the cache hierarchy has {n} levels; at most {MAX_LEVELS} are supported"
            ),
            ConfigError::Geometry { level, problem } => {
                write!(f, "cache level {level} cannot be built: {problem}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Validates every level of a hierarchy and returns their geometries in order.
pub fn validate(config: &HierarchyConfig) -> Result<Vec<Geometry>, ConfigError> {
    if config.levels.is_empty() {
        return Err(ConfigError::NoLevels);
    }
    if config.levels.len() > MAX_LEVELS {
        return Err(ConfigError::TooManyLevels(config.levels.len()));
    }
    let mut geometries: Vec<Geometry> = Vec::with_capacity(config.levels.len());
    for level in &config.levels {
        let fail = |problem| ConfigError::Geometry {
            level: level.name.clone(),
            problem,
        };
        let geometry = Geometry::new(level).map_err(fail)?;
        if let Some(above) = geometries.last() {
            if geometry.line_size < above.line_size {
                return Err(fail(GeometryProblem::LineShrinks {
                    above: above.line_size,
                    this: geometry.line_size,
                }));
            }
            if config.inclusion == Inclusion::Exclusive
                && geometry.line_size != geometries[0].line_size
            {
                return Err(fail(GeometryProblem::ExclusiveLineMismatch {
                    first: geometries[0].line_size,
                    this: geometry.line_size,
                }));
            }
        }
        geometries.push(geometry);
    }
    Ok(geometries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_for(level: LevelConfig) -> String {
        validate(&HierarchyConfig::new(vec![level]))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn realisable_geometry_precomputes_sets_and_shift() {
        let g = Geometry::new(&LevelConfig::new("L1", 32 * 1024, 8, 64)).unwrap();
        assert_eq!((g.sets, g.line_shift), (64, 6));
        assert_eq!(g.set_of(g.line_of(0x1234_5678)), (0x1234_5678 >> 6) & 63);
        let odd = Geometry::new(&LevelConfig::new("L2", 3 * 64 * 4, 4, 64)).unwrap();
        assert_eq!(odd.sets, 3);
        assert_eq!(odd.set_of(7), 1);
    }

    #[test]
    fn every_unrealisable_geometry_names_the_level_and_the_problem() {
        let e = error_for(LevelConfig::new("L1", 30_000, 8, 64));
        assert!(
            e.contains("L1") && e.contains("not a whole number of sets"),
            "{e}"
        );
        let e = error_for(LevelConfig::new("L2", 32768, 0, 64));
        assert!(e.contains("L2") && e.contains("ways is 0"), "{e}");
        let e = error_for(LevelConfig::new("L3", 32768, 8, 48));
        assert!(e.contains("L3") && e.contains("not a power of two"), "{e}");
        let e = error_for(LevelConfig::new("X", 256, 8, 64));
        assert!(e.contains("smaller than one set"), "{e}");
        let e = error_for(LevelConfig::new("X", 0, 8, 64));
        assert!(e.contains("size is 0"), "{e}");
        let e = error_for(
            LevelConfig::new("P", 6 * 64 * 4, 6, 64).with_replacement(Replacement::TreePlru),
        );
        assert!(e.contains("P") && e.contains("tree-PLRU"), "{e}");
        let e = error_for(LevelConfig::new("T", 1024, 2, 2));
        assert!(e.contains("at least 4"), "{e}");
    }

    #[test]
    fn hierarchy_errors_cover_level_order_and_count() {
        let shrink = HierarchyConfig::new(vec![
            LevelConfig::new("L1", 32768, 8, 64),
            LevelConfig::new("L2", 262144, 8, 32),
        ]);
        let e = validate(&shrink).unwrap_err().to_string();
        assert!(e.contains("L2") && e.contains("grow towards memory"), "{e}");
        let mismatch = HierarchyConfig::new(vec![
            LevelConfig::new("L1", 32768, 8, 64),
            LevelConfig::new("L2", 262144, 8, 128),
        ])
        .with_inclusion(Inclusion::Exclusive);
        let e = validate(&mismatch).unwrap_err().to_string();
        assert!(e.contains("L2") && e.contains("equal line sizes"), "{e}");
        assert_eq!(
            validate(&HierarchyConfig::new(vec![])),
            Err(ConfigError::NoLevels)
        );
        let many = HierarchyConfig::new(vec![LevelConfig::new("L", 1024, 2, 64); 17]);
        assert_eq!(validate(&many), Err(ConfigError::TooManyLevels(17)));
    }
}
