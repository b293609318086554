//! Symbolizing addresses in Rust programs, with legacy and v0 symbol mangling.
//!
//! The program is built as a non-PIE executable (`-C relocation-model=static`), so its
//! load bias is 0 and the module map can be computed from the file itself with
//! `module_info_from_file`. It prints the address of one of its generic methods; the
//! test passes that address + 1, as if it were a return address, so the lookup at
//! `address - 1` lands on the method's first instruction.

mod support;

use std::process::Command;

use memlens_symbols::{
    LanguageHint, Symbolizer, SymbolizerOptions, demangle, module_info_from_file,
};

const PROGRAM: &str = r#"
mod widgets {
    pub struct Gadget<T>(pub T);
    impl<T: Copy> Gadget<T> {
        #[inline(never)]
        pub fn build(&self) -> Vec<T> { /* BUILD_LINE */
            vec![self.0; 3]
        }
    }
}

fn main() {
    let gadget = widgets::Gadget(7u8);
    let build: fn(&widgets::Gadget<u8>) -> Vec<u8> = widgets::Gadget::<u8>::build;
    println!("{}", gadget.build().len());
    println!("addr build {:#x}", build as usize);
}
"#;

/// Compiles the program with the `-C symbol-mangling-version` given (none: the stable
/// default, legacy) and returns the symbolized method address and its line.
fn symbolize_method(mangling: Option<&str>) -> (memlens_symbols::SymbolizedAddress, u32) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let source = dir.path().join("prog.rs");
    std::fs::write(&source, PROGRAM).expect("write the program");
    let exe = dir.path().join("prog");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let mut command = Command::new(rustc);
    command.args(["-g", "-C", "relocation-model=static"]);
    if let Some(mangling) = mangling {
        command
            .arg("-C")
            .arg(format!("symbol-mangling-version={mangling}"));
    }
    let output = command
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("run rustc");
    assert!(
        output.status.success(),
        "rustc failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = Command::new(&exe).output().expect("run the program").stdout;
    let recording = support::parse_recording(&String::from_utf8_lossy(&stdout));

    let module = module_info_from_file(&exe, 0).expect("read the program's headers");
    let mut symbolizer = Symbolizer::new(vec![module], SymbolizerOptions::default());
    let result = symbolizer.symbolize(recording.address("build") + 1);
    (result, support::line_of(PROGRAM, "BUILD_LINE"))
}

#[test]
fn v0_mangled_method_is_demangled() {
    let (result, line) = symbolize_method(Some("v0"));
    let frame = result.outer_frame().expect("a frame");
    assert_eq!(
        frame.function.as_deref(),
        Some("<prog::widgets::Gadget<u8>>::build"),
        "{:#?}",
        result.frames
    );
    assert!(
        frame
            .raw_name
            .as_deref()
            .is_some_and(|raw| raw.starts_with("_R"))
    );
    assert_eq!(frame.file_name(), Some("prog.rs"));
    assert_eq!(frame.line, Some(line));
}

#[test]
fn legacy_mangled_method_is_demangled_without_hash() {
    let (result, line) = symbolize_method(None);
    let frame = result.outer_frame().expect("a frame");
    assert_eq!(
        frame.function.as_deref(),
        Some("prog::widgets::Gadget<T>::build"),
        "{:#?}",
        result.frames
    );
    assert!(
        frame
            .raw_name
            .as_deref()
            .is_some_and(|raw| raw.starts_with("_ZN"))
    );
    assert_eq!(frame.line, Some(line));
}

#[test]
fn demangle_is_usable_on_its_own() {
    assert_eq!(
        demangle(
            "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
            LanguageHint::Unknown
        ),
        "core::ptr::drop_in_place"
    );
}
