//! Addresses the recorder named itself (Java frames) resolve to those names, win over
//! the module map, and produce no "outside every module" diagnostic.

use memlens_symbols::{Frame, Symbolizer, SymbolizerOptions};

#[test]
fn named_addresses_take_precedence_and_stay_quiet() {
    let mut symbolizer = Symbolizer::new(Vec::new(), SymbolizerOptions::default());
    let ip = 0xffff_f000_0000_0007;
    symbolizer.name_address(
        ip,
        Frame {
            function: Some("com.example.Cache.lookup".into()),
            raw_name: None,
            file: Some("Cache.java".into()),
            line: Some(42),
            column: None,
            inlined: false,
            module: None,
        },
    );
    let got = symbolizer.symbolize_all(&[ip, ip]);
    assert_eq!(got.len(), 2);
    for s in &got {
        assert_eq!(s.address, ip);
        assert_eq!(s.frames.len(), 1);
        assert_eq!(
            s.frames[0].function.as_deref(),
            Some("com.example.Cache.lookup")
        );
        assert_eq!(s.frames[0].line, Some(42));
        assert_eq!(s.frames[0].file_name(), Some("Cache.java"));
    }
    assert!(
        symbolizer.diagnostics().is_empty(),
        "{:?}",
        symbolizer.diagnostics()
    );
    // An unnamed address outside every module still gets its diagnostic.
    let other = symbolizer.symbolize(0x1234);
    assert!(!other.is_resolved());
    assert!(!symbolizer.diagnostics().is_empty());
}
