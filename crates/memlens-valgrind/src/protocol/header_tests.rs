//! Keeps [`crate::protocol`] equal to the tool's C side: parses every `#define ML_…`
//! of `tools/valgrind/ml_tool.h`, evaluates its value, and compares the set with the
//! Rust constants in both directions. The word layout's shifts are not macros in C
//! but written in the code, so the C lines that encode them are looked up too.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;

/// Every protocol constant of `ml_tool.h`, by its C name, with its Rust value.
const RUST_SIDE: &[(&str, u64)] = &[
    ("ML_READ", kind::READ as u64),
    ("ML_WRITE", kind::WRITE as u64),
    ("ML_MODIFY", kind::MODIFY as u64),
    ("ML_FETCH", kind::FETCH as u64),
    ("ML_REC_SITE", record_type::SITE as u64),
    ("ML_REC_ALLOC", record_type::ALLOC as u64),
    ("ML_REC_FREE", record_type::FREE as u64),
    ("ML_REC_HEAPSITE", record_type::HEAPSITE as u64),
    ("ML_REC_NAME", record_type::NAME as u64),
    ("ML_REC_START", record_type::START as u64),
    ("ML_REC_STOP", record_type::STOP as u64),
    ("ML_REC_STACK", record_type::STACK as u64),
    ("ML_REC_MODULE", record_type::MODULE as u64),
    ("ML_REC_END", record_type::END as u64),
    ("ML_REC_BIGREF", record_type::BIGREF as u64),
    ("ML_MAX_COMPACT_SITE", MAX_COMPACT_SITE),
    ("ML_ADDR_MASK", ADDRESS_MASK),
];

fn tool_source(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools/valgrind")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text without its `/* … */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("a closed comment");
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The value of every `#define ML_… value` (include guards, which have no value, are
/// left out), evaluated.
fn header_constants(header: &str) -> BTreeMap<String, u64> {
    let mut constants = BTreeMap::new();
    for line in without_comments(header).lines() {
        let Some(definition) = line.trim().strip_prefix("#define") else {
            continue;
        };
        let mut parts = definition.trim().splitn(2, char::is_whitespace);
        let name = parts.next().unwrap_or_default();
        let value = parts.next().unwrap_or_default().trim();
        if !name.starts_with("ML_") || value.is_empty() {
            continue;
        }
        let evaluated = Expression::new(value, &constants)
            .evaluate()
            .unwrap_or_else(|| panic!("cannot evaluate {name} = {value}"));
        constants.insert(name.to_owned(), evaluated);
    }
    constants
}

/// A C constant expression of integer literals (with `U`/`L` suffixes), earlier
/// macros, parentheses and the operators `+ - << >> & |`, as the header uses them.
struct Expression<'a> {
    tokens: Vec<String>,
    at: usize,
    known: &'a BTreeMap<String, u64>,
}

impl<'a> Expression<'a> {
    fn new(text: &str, known: &'a BTreeMap<String, u64>) -> Expression<'a> {
        let mut tokens = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
            } else if c.is_ascii_alphanumeric() || c == '_' {
                let mut word = String::new();
                while let Some(&c) = chars
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
                {
                    word.push(c);
                    chars.next();
                }
                tokens.push(word);
            } else if c == '<' || c == '>' {
                chars.next();
                chars.next();
                tokens.push(format!("{c}{c}"));
            } else {
                chars.next();
                tokens.push(c.to_string());
            }
        }
        Expression {
            tokens,
            at: 0,
            known,
        }
    }

    fn evaluate(mut self) -> Option<u64> {
        let value = self.binary(0)?;
        (self.at == self.tokens.len()).then_some(value)
    }

    /// Operators by C precedence, loosest first.
    const LEVELS: [&'static [&'static str]; 4] = [&["|"], &["&"], &["<<", ">>"], &["+", "-"]];

    fn binary(&mut self, level: usize) -> Option<u64> {
        if level == Self::LEVELS.len() {
            return self.primary();
        }
        let mut value = self.binary(level + 1)?;
        while let Some(op) = self.tokens.get(self.at).cloned() {
            if !Self::LEVELS[level].contains(&op.as_str()) {
                break;
            }
            self.at += 1;
            let right = self.binary(level + 1)?;
            value = match op.as_str() {
                "|" => value | right,
                "&" => value & right,
                "<<" => value.checked_shl(u32::try_from(right).ok()?)?,
                ">>" => value.checked_shr(u32::try_from(right).ok()?)?,
                "+" => value.checked_add(right)?,
                _ => value.checked_sub(right)?,
            };
        }
        Some(value)
    }

    fn primary(&mut self) -> Option<u64> {
        let token = self.tokens.get(self.at)?.clone();
        self.at += 1;
        if token == "(" {
            let value = self.binary(0)?;
            (self.tokens.get(self.at)? == ")").then_some(())?;
            self.at += 1;
            return Some(value);
        }
        if let Some(&value) = self.known.get(&token) {
            return Some(value);
        }
        let digits = token.trim_end_matches(['u', 'U', 'l', 'L']);
        match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => digits.parse().ok(),
        }
    }
}

/// How the header's protocol constants differ from the Rust side, one sentence each.
fn differences(header_text: &str) -> Vec<String> {
    let header = header_constants(header_text);
    let rust: BTreeMap<&str, u64> = RUST_SIDE.iter().copied().collect();
    let mut out = Vec::new();
    for (name, &value) in &header {
        match rust.get(name.as_str()) {
            Some(&ours) if ours == value => {}
            Some(&ours) => out.push(format!("ml_tool.h has {name} = {value:#x}, Rust {ours:#x}")),
            None => out.push(format!(
                "ml_tool.h defines {name}, the Rust protocol does not"
            )),
        }
    }
    for name in rust.keys() {
        if !header.contains_key(*name) {
            out.push(format!(
                "the Rust protocol knows {name}, ml_tool.h does not"
            ));
        }
    }
    out
}

#[test]
fn every_protocol_constant_of_ml_tool_h_equals_the_rust_one() {
    let header = tool_source("ml_tool.h");
    assert_eq!(header_constants(&header).len(), RUST_SIDE.len());
    assert_eq!(differences(&header), Vec::<String>::new());
}

#[test]
fn a_changed_added_or_removed_constant_is_caught() {
    let header = tool_source("ml_tool.h");
    let changed = header.replace("ML_REC_BIGREF   11", "ML_REC_BIGREF   12");
    let added = format!("{header}\n#define ML_REC_LATER 12\n");
    let removed = header.replace("#define ML_FETCH  3", "");
    for (text, expected) in [
        (changed, "ml_tool.h has ML_REC_BIGREF = 0xc, Rust 0xb"),
        (
            added,
            "ml_tool.h defines ML_REC_LATER, the Rust protocol does not",
        ),
        (
            removed,
            "the Rust protocol knows ML_FETCH, ml_tool.h does not",
        ),
    ] {
        assert_eq!(differences(&text), [expected]);
    }
}

#[test]
fn the_c_code_lays_out_words_as_the_rust_protocol_does() {
    let stream = tool_source("ml_stream.c");
    let instrument = tool_source("ml_instrument.c");
    let sites = tool_source("ml_sites.c");
    for (file, text, needle) in [
        ("ml_stream.c", &stream, format!("(type << {TYPE_SHIFT})")),
        (
            "ml_instrument.c",
            &instrument,
            format!("site << {SITE_SHIFT}"),
        ),
        (
            "ml_instrument.c",
            &instrument,
            format!("word >> {SITE_SHIFT}"),
        ),
        (
            "ml_sites.c",
            &sites,
            format!("kind | ((UWord)size << {SIZE_SHIFT})"),
        ),
    ] {
        assert!(
            text.contains(&needle),
            "{file} no longer writes `{needle}`: update the protocol on both sides"
        );
    }
    // Every record type fits the bits the decoder reads (the kinds are checked
    // when `protocol.rs` compiles).
    let header = header_constants(&tool_source("ml_tool.h"));
    for (name, value) in &header {
        if name.starts_with("ML_REC_") {
            assert!(*value <= TYPE_MASK && *value > 0, "{name}");
        }
    }
}

#[test]
fn the_expression_reader_handles_what_headers_write() {
    let known = BTreeMap::from([("ML_A".to_owned(), 4)]);
    let eval = |text: &str| Expression::new(text, &known).evaluate();
    assert_eq!(eval("((1UL << 48) - 1)"), Some((1 << 48) - 1));
    assert_eq!(eval("0xFFFEUL"), Some(0xFFFE));
    assert_eq!(eval("ML_A | 1 << 8"), Some(0x104));
    assert_eq!(eval("10"), Some(10));
    assert_eq!(eval("(1"), None);
    assert_eq!(eval("ML_B"), None);
}
