//! Symbolizing return addresses recorded from a C++ program: demangled names of class
//! templates, and the libstdc++ template code that calls `operator new`.
//!
//! The program replaces the global `operator new` to capture its return address, which
//! is what the recorder sees for a C++ allocation: the caller of `operator new` inside
//! `std::vector`'s growth path.

mod support;

use memlens_symbols::{Symbolizer, SymbolizerOptions};
use support::{Lang, compile};

const PROGRAM: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

static void *last_new_caller;

void *operator new(std::size_t size) {
    last_new_caller = __builtin_return_address(0);
    void *p = std::malloc(size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

volatile void *sink;

__attribute__((noinline)) void *where_am_i() { return __builtin_return_address(0); }

namespace shapes {
template <typename T> struct Widget {
    T value;
    __attribute__((noinline)) void *build(std::vector<T> &out) {
        void *ret = where_am_i(); /* MEMBER_CALL_LINE */
        sink = ret;
        out.push_back(value);
        return ret;
    }
};
}

int main() {
    memlens_print_module_map();
    std::vector<int> numbers;
    shapes::Widget<int> widget{7};
    std::printf("addr member %p\n", widget.build(numbers));
    numbers.clear();
    numbers.shrink_to_fit();
    numbers.push_back(1);
    std::printf("addr vector_new %p\n", last_new_caller);
    return 0;
}
"#;

#[test]
fn member_function_of_class_template_is_demangled() {
    let program = compile(Lang::Cpp, PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    let options = SymbolizerOptions {
        main_executable: Some(program.exe.clone()),
        ..SymbolizerOptions::default()
    };
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options);

    let result = symbolizer.symbolize(recording.address("member"));
    let frame = result.outer_frame().expect("a frame");
    assert_eq!(
        frame.function.as_deref(),
        Some("shapes::Widget<int>::build(std::vector<int, std::allocator<int> >&)"),
        "{:#?}",
        result.frames
    );
    assert!(
        frame
            .raw_name
            .as_deref()
            .is_some_and(|raw| raw.starts_with("_ZN6shapes6WidgetIiE5build"))
    );
    assert_eq!(frame.file_name(), Some("prog.cpp"));
    assert_eq!(frame.line, Some(program.line_of("MEMBER_CALL_LINE")));
}

#[test]
fn operator_new_caller_in_std_vector_is_demangled() {
    let program = compile(Lang::Cpp, PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    let options = SymbolizerOptions {
        main_executable: Some(program.exe.clone()),
        ..SymbolizerOptions::default()
    };
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options);

    let result = symbolizer.symbolize(recording.address("vector_new"));
    let names: Vec<&str> = result
        .frames
        .iter()
        .filter_map(|frame| frame.function.as_deref())
        .collect();
    // The allocator call is inlined into the growth path; the out-of-line function is
    // `_M_realloc_insert` (or, with other libstdc++ versions, a function inlining it).
    assert!(
        names
            .iter()
            .any(|name| name.contains("std::vector<int, std::allocator<int> >::_M_realloc_insert")),
        "{names:#?}"
    );
    assert!(
        names.iter().all(|name| !name.starts_with("_Z")),
        "every name is demangled: {names:#?}"
    );
    assert!(result.frames.iter().all(|frame| frame.line.is_some()));
}
