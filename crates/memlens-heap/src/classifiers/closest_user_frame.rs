//! `closest-user-frame`: the innermost frame that is not in libc, the C++ or Rust
//! standard libraries, the unwinder, an allocator wrapper or (in Java traces) the Java
//! platform's classes: the analogue of AntTracks' "closest domain call site" that needs
//! no `--domain`.
//!
//! What counts as library code is a [`UserFrameFilter`]: a list of function-name
//! prefixes and a list of module-name substrings. A frame is a *user frame* when its
//! function matches no prefix and its module matches no pattern. Frames with an unknown
//! function name are skipped too (nothing useful can be shown for them). A stack with no
//! user frame at all falls into the group `<no user frame>`.

use super::{Classifier, ClassifierEntry, ClassifierOptions, ClosestFrame};
use crate::ids::FrameId;
use crate::model::HeapModel;

/// The registry entry of `closest-user-frame`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "closest-user-frame",
    title: "Closest User Frame",
    summary: "the innermost frame outside libc, libstdc++, Rust std and allocator wrappers",
    build,
};

/// Which frames are library frames, for `closest-user-frame`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFrameFilter {
    /// A frame whose (demangled) function name starts with one of these is skipped.
    pub function_prefixes: Vec<String>,
    /// A frame whose module path contains one of these is skipped.
    pub module_patterns: Vec<String>,
}

impl Default for UserFrameFilter {
    /// Allocator entry points and wrappers, the C and C++ runtimes, and Rust's `std`,
    /// `alloc` and `core` (which are linked into the program's own module, so only their
    /// function names identify them).
    fn default() -> Self {
        let prefixes = [
            "malloc",
            "calloc",
            "realloc",
            "memalign",
            "posix_memalign",
            "aligned_alloc",
            "valloc",
            "pvalloc",
            "reallocarray",
            "__libc_",
            "_int_",
            "operator new",
            "operator delete",
            "std::",
            "__gnu_cxx::",
            "__cxxabiv1::",
            "__cxa_",
            "_Unwind_",
            "__gxx_",
            "alloc::",
            "core::",
            "<alloc::",
            "<core::",
            "<std::",
            "__rust_",
            "__rdl_",
            "__rg_",
            "_ZN5alloc",
            "_ZN4core",
            "_ZN3std",
            "memlens_",
            // The Java platform's own classes (Java frames are `package.Class.method`;
            // no native symbol contains a dot this early).
            "java.",
            "javax.",
            "jdk.",
            "sun.",
            "com.sun.",
        ];
        let modules = [
            "libc.so",
            "libc-",
            "libstdc++",
            "libc++",
            "libgcc_s",
            "ld-linux",
            "libpthread",
            "libjemalloc",
            "libtcmalloc",
            "libmimalloc",
            "libmemlens",
        ];
        UserFrameFilter {
            function_prefixes: prefixes.iter().map(|s| (*s).to_owned()).collect(),
            module_patterns: modules.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

impl UserFrameFilter {
    /// Whether a frame with this function and module is user code.
    pub fn is_user_frame(&self, function: &str, module: &str) -> bool {
        !function.is_empty()
            && !self
                .function_prefixes
                .iter()
                .any(|p| function.starts_with(p.as_str()))
            && !self
                .module_patterns
                .iter()
                .any(|p| module.contains(p.as_str()))
    }
}

fn build<'m>(model: &'m HeapModel, options: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let cx = &model.context;
    let filter = &options.user_frames;
    let is_user = |f: FrameId| filter.is_user_frame(cx.function(f), cx.module(f));
    ClosestFrame::boxed(&ENTRY, model, is_user, "<no user frame>")
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack_in;
    use crate::classifiers::{ClassifierOptions, UserFrameFilter, parse_classifiers};
    use crate::context::FrameInfo;
    use crate::model::AllocKind;

    #[test]
    fn skips_library_and_allocator_frames() {
        let mut b = HeapModelBuilder::new();
        let cpp = stack_in(
            &mut b,
            &[
                ("main", "/bin/app"),
                ("Cache::insert(Key const&)", "/bin/app"),
                (
                    "std::_Rb_tree<Key, Value>::_M_emplace_hint_unique",
                    "/bin/app",
                ),
                ("operator new(unsigned long)", "/usr/lib/libstdc++.so.6"),
            ],
        );
        let rust = stack_in(
            &mut b,
            &[
                ("app::main", "/bin/app"),
                ("app::store::Store::put", "/bin/app"),
                (
                    "<alloc::vec::Vec<T> as core::clone::Clone>::clone",
                    "/bin/app",
                ),
                ("alloc::raw_vec::finish_grow", "/bin/app"),
                ("__rust_alloc", "/bin/app"),
            ],
        );
        let libc_only = stack_in(
            &mut b,
            &[
                ("_dl_start", "/lib/ld-linux-x86-64.so.2"),
                ("malloc", "/lib/libc.so.6"),
            ],
        );
        let a = b.alloc(1, 1, 0x10, 8, cpp, AllocKind::New);
        let r = b.alloc(2, 1, 0x20, 8, rust, AllocKind::Malloc);
        let l = b.alloc(3, 1, 0x30, 8, libc_only, AllocKind::Malloc);
        let model = b.end(10);
        let chain = parse_classifiers("closest-user-frame", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let label = |id| c.label(c.class_of(id, 8, 5));
        assert_eq!(label(a), "Cache::insert(Key const&)");
        assert_eq!(label(r), "app::store::Store::put");
        assert_eq!(label(l), "<no user frame>");
    }

    #[test]
    fn looks_inside_inline_chains_and_obeys_a_custom_filter() {
        let mut b = HeapModelBuilder::new();
        let outer = b.add_frame(FrameInfo {
            function: "app::run",
            module: "/bin/app",
            ..Default::default()
        });
        let inlined = b.add_frame(FrameInfo {
            function: "helpers::make_buffer",
            module: "/bin/app",
            inlined_into: Some(outer),
            ..Default::default()
        });
        let s = b.add_stack(crate::StackId::ROOT, inlined);
        let a = b.alloc(1, 1, 0x10, 8, s, AllocKind::Malloc);
        let model = b.end(10);
        let default =
            parse_classifiers("closest-user-frame", ClassifierOptions::default()).unwrap();
        let c = &default.bind(&model)[0];
        assert_eq!(c.label(c.class_of(a, 8, 5)), "helpers::make_buffer");
        let mut filter = UserFrameFilter::default();
        filter.function_prefixes.push("helpers::".into());
        let custom = ClassifierOptions {
            user_frames: filter,
            ..Default::default()
        };
        let chain = parse_classifiers("closest-user-frame", custom).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(
            c.label(c.class_of(a, 8, 5)),
            "app::run",
            "the outer frame of the inline chain"
        );
    }
}
