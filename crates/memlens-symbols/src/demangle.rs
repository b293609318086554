//! Demangling of symbol names: Rust (legacy and v0) and C++ (Itanium ABI).
//!
//! Both the ELF symbol table and DWARF linkage names hold mangled names. Reports want
//! the readable form, while exports keep the raw one, so the symbolizer stores both and
//! calls [`demangle`] for the readable one.

use std::panic::{self, AssertUnwindSafe};

/// Which demangler to prefer, from the DWARF unit's `DW_AT_language` when known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LanguageHint {
    /// Unknown: try Rust, then C++.
    Unknown,
    /// The unit was written in Rust.
    Rust,
    /// The unit was written in C++.
    Cpp,
    /// The unit was written in a language without mangling (C, assembly): use the name
    /// as it is.
    Plain,
}

impl LanguageHint {
    /// Maps a DWARF language code to a hint.
    pub fn from_dwarf(language: Option<gimli::DwLang>) -> Self {
        match language {
            Some(gimli::DW_LANG_Rust) => LanguageHint::Rust,
            Some(
                gimli::DW_LANG_C_plus_plus
                | gimli::DW_LANG_C_plus_plus_03
                | gimli::DW_LANG_C_plus_plus_11
                | gimli::DW_LANG_C_plus_plus_14,
            ) => LanguageHint::Cpp,
            Some(
                gimli::DW_LANG_C
                | gimli::DW_LANG_C89
                | gimli::DW_LANG_C99
                | gimli::DW_LANG_C11
                | gimli::DW_LANG_Mips_Assembler,
            ) => LanguageHint::Plain,
            _ => LanguageHint::Unknown,
        }
    }
}

/// Returns the readable form of `raw`, or `raw` itself when it is not mangled.
///
/// Rust names drop their trailing hash (`core::ptr::drop_in_place<T>` rather than
/// `…::h0123456789abcdef`). C++ names keep their parameter lists, as `c++filt` prints
/// them. A name in a C unit is returned unchanged even if it looks mangled.
pub fn demangle(raw: &str, hint: LanguageHint) -> String {
    let demangled = match hint {
        LanguageHint::Plain => None,
        LanguageHint::Rust => demangle_rust(raw).or_else(|| demangle_cpp(raw)),
        // A C++ unit holds only C++ names; skipping the Rust demangler keeps a C++
        // name that happens to look like a legacy Rust one (`_ZN3foo3barE`) exact.
        LanguageHint::Cpp => demangle_cpp(raw),
        // Rust first: a legacy Rust name also parses as Itanium C++, but the C++
        // demangler would keep the `h0123…` hash component.
        LanguageHint::Unknown => demangle_rust(raw).or_else(|| demangle_cpp(raw)),
    };
    demangled.unwrap_or_else(|| raw.to_owned())
}

/// Demangles a Rust legacy (`_ZN…17h…E`) or v0 (`_R…`) symbol, without its hash.
fn demangle_rust(raw: &str) -> Option<String> {
    let demangled = rustc_demangle::try_demangle(raw).ok()?;
    Some(format!("{demangled:#}"))
}

/// Demangles an Itanium C++ symbol (`_Z…`).
fn demangle_cpp(raw: &str) -> Option<String> {
    if !raw.starts_with("_Z") {
        return None;
    }
    // cpp_demangle limits its own recursion, but it is a large parser fed with
    // untrusted bytes; a panic in it must cost one name, not the whole report.
    panic::catch_unwind(AssertUnwindSafe(|| {
        let symbol = cpp_demangle::Symbol::new(raw).ok()?;
        symbol.demangle().ok()
    }))
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_drops_hash() {
        assert_eq!(
            demangle(
                "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
                LanguageHint::Unknown
            ),
            "core::ptr::drop_in_place"
        );
    }

    #[test]
    fn rust_v0() {
        // From `rustc -C symbol-mangling-version=v0` on `impl<T> m::widgets::Gadget<T>`.
        assert_eq!(
            demangle(
                "_RNvMNtCskK7mfDs1mzF_1m7widgetsINtB2_6GadgethE5buildB4_",
                LanguageHint::Unknown
            ),
            "<m::widgets::Gadget<u8>>::build"
        );
        assert_eq!(
            demangle(
                "_ZN1m7widgets15Gadget$LT$T$GT$5build17h62620f22306bf2ceE",
                LanguageHint::Rust
            ),
            "m::widgets::Gadget<T>::build"
        );
    }

    #[test]
    fn cpp_itanium() {
        assert_eq!(
            demangle(
                "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
                LanguageHint::Unknown
            ),
            "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)"
        );
        assert_eq!(demangle("_Z3fooi", LanguageHint::Cpp), "foo(int)");
    }

    #[test]
    fn plain_and_odd_names_are_unchanged() {
        assert_eq!(demangle("malloc", LanguageHint::Unknown), "malloc");
        assert_eq!(demangle("_Z3fooi", LanguageHint::Plain), "_Z3fooi");
        assert_eq!(demangle("_Z", LanguageHint::Unknown), "_Z");
        assert_eq!(demangle("_ZZZZZZZZ", LanguageHint::Unknown), "_ZZZZZZZZ");
        assert_eq!(demangle("", LanguageHint::Unknown), "");
    }
}
