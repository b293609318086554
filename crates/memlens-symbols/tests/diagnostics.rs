//! Odd input never panics and is reported once: rebuilt binaries (build id or segment
//! mismatch), missing and truncated files, corrupt DWARF, addresses outside every
//! module, the vDSO, and an unknown main executable path.

mod support;

use memlens_symbols::{
    Diagnostic, DiagnosticKind, ModuleIdx, ModuleInfo, ModuleStatus, Symbolizer, SymbolizerOptions,
};
use object::{Object, ObjectSection};
use support::{Lang, Program, Recording, compile, compile_in};

const PROGRAM: &str = r#"
#include <stdio.h>
volatile void *sink;

__attribute__((noinline)) void *where_am_i(void) {
    return __builtin_return_address(0);
}

__attribute__((noinline)) void *caller_function(void) {
    void *ret = where_am_i();
    sink = ret;
    return ret;
}

int main(void) {
    memlens_print_module_map();
    printf("addr caller %p\n", caller_function());
    return 0;
}
"#;

fn record() -> (Program, Recording) {
    let program = compile(Lang::C, PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    (program, recording)
}

fn symbolizer(recording: &Recording, exe: &std::path::Path) -> Symbolizer {
    let options = SymbolizerOptions {
        main_executable: Some(exe.to_owned()),
        ..SymbolizerOptions::default()
    };
    Symbolizer::new(recording.modules.clone(), options)
}

/// Returns the diagnostics about module 0, the main program.
fn main_diagnostics(symbolizer: &Symbolizer) -> Vec<DiagnosticKind> {
    symbolizer
        .diagnostics()
        .into_iter()
        .filter(|diagnostic| diagnostic.module == Some(ModuleIdx(0)))
        .map(|diagnostic| diagnostic.kind)
        .collect()
}

/// Asserts the main program's address keeps its module but gets no name.
fn assert_unnamed_in_main(symbolizer: &mut Symbolizer, address: u64) {
    let result = symbolizer.symbolize(address);
    assert_eq!(result.frames.len(), 1);
    assert_eq!(result.frames[0].module, Some(ModuleIdx(0)));
    assert_eq!(result.frames[0].function, None);
    assert!(!result.is_resolved());
}

#[test]
fn rebuilt_binary_is_a_build_id_mismatch_reported_once() {
    let (program, recording) = record();
    let recorded_id = recording.modules[0].build_id.clone();
    assert!(recorded_id.is_some(), "the toolchain writes build ids");

    // Rebuild the program in place with different code: a new build id on disk.
    let changed = PROGRAM.replace("sink = ret;", "sink = ret; sink = 0; sink = ret;");
    let rebuilt = compile_in(program.dir, Lang::C, &changed, &["-g", "-O1"]);
    let mut symbolizer = symbolizer(&recording, &rebuilt.exe);
    let caller = recording.address("caller");
    assert_unnamed_in_main(&mut symbolizer, caller);
    assert_unnamed_in_main(&mut symbolizer, caller + 1);

    let diagnostics = main_diagnostics(&symbolizer);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    match &diagnostics[0] {
        DiagnosticKind::BuildIdMismatch {
            path,
            recorded,
            on_disk,
        } => {
            assert_eq!(path, &rebuilt.exe);
            assert_eq!(Some(recorded), recorded_id.as_ref());
            assert!(on_disk.is_some() && on_disk != &recorded_id);
        }
        other => panic!("expected a build id mismatch, got {other:?}"),
    }
    assert_eq!(
        symbolizer.module_status(ModuleIdx(0)),
        ModuleStatus::Mismatched
    );
    let message = symbolizer.diagnostics()[0].to_string();
    assert!(message.contains("build id"), "{message}");
}

#[test]
fn changed_segments_without_build_id_are_a_mismatch() {
    let (program, mut recording) = record();
    let main = &mut recording.modules[0];
    main.build_id = None;
    let text = main
        .segments
        .iter_mut()
        .find(|segment| segment.flags & memlens_symbols::PF_X != 0)
        .expect("an executable segment");
    text.memsz += 0x10;

    let mut symbolizer = symbolizer(&recording, &program.exe);
    assert_unnamed_in_main(&mut symbolizer, recording.address("caller"));
    assert!(matches!(
        main_diagnostics(&symbolizer)[..],
        [DiagnosticKind::SegmentMismatch { .. }]
    ));
}

#[test]
fn missing_file_is_reported_once() {
    let (program, recording) = record();
    std::fs::remove_file(&program.exe).expect("delete the program");
    let mut symbolizer = symbolizer(&recording, &program.exe);
    let caller = recording.address("caller");
    symbolizer.symbolize_all(&[caller, caller + 1]);
    assert_unnamed_in_main(&mut symbolizer, caller + 2);
    assert_eq!(
        main_diagnostics(&symbolizer),
        [DiagnosticKind::MissingFile {
            path: program.exe.clone()
        }]
    );
    assert_eq!(
        symbolizer.module_status(ModuleIdx(0)),
        ModuleStatus::Unavailable
    );
}

#[test]
fn truncated_empty_and_garbage_files_are_invalid_elf() {
    let (program, recording) = record();
    let bytes = std::fs::read(&program.exe).expect("read the program");
    let cases: [(&str, Vec<u8>); 4] = [
        ("half", bytes[..bytes.len() / 2].to_vec()),
        ("header-only", bytes[..40].to_vec()),
        ("empty", Vec::new()),
        (
            "garbage",
            b"\x7fELF but not really an ELF file at all".repeat(50),
        ),
    ];
    for (name, contents) in cases {
        let path = program.dir.path().join(name);
        std::fs::write(&path, contents).expect("write the broken file");
        let mut symbolizer = symbolizer(&recording, &path);
        assert_unnamed_in_main(&mut symbolizer, recording.address("caller"));
        let diagnostics = main_diagnostics(&symbolizer);
        assert!(
            matches!(&diagnostics[..], [DiagnosticKind::InvalidElf { path: p, .. }] if *p == path),
            "{name}: {diagnostics:?}"
        );
    }
}

#[test]
fn corrupt_dwarf_falls_back_to_the_symbol_table() {
    let (program, recording) = record();
    let mut bytes = std::fs::read(&program.exe).expect("read the program");
    let (offset, size) = {
        let file = object::File::parse(&*bytes).expect("parse the program");
        let section = file.section_by_name(".debug_info").expect("built with -g");
        section.file_range().expect("in the file")
    };
    for byte in &mut bytes[offset as usize..(offset + size) as usize] {
        *byte = 0xff;
    }
    let corrupt = program.dir.path().join("corrupt");
    std::fs::write(&corrupt, bytes).expect("write the corrupt program");

    let mut symbolizer = symbolizer(&recording, &corrupt);
    let result = symbolizer.symbolize(recording.address("caller"));
    let frame = result.outer_frame().expect("a frame");
    assert_eq!(frame.function.as_deref(), Some("caller_function"));
    // Whether the damage shows at load time or at lookup time, it is reported once.
    let errors = main_diagnostics(&symbolizer)
        .into_iter()
        .filter(|kind| matches!(kind, DiagnosticKind::DwarfError { .. }))
        .count();
    assert!(errors <= 1);
}

#[test]
fn addresses_outside_every_module_are_summed_up() {
    let (program, recording) = record();
    let mut symbolizer = symbolizer(&recording, &program.exe);
    let outside = [0, 1, 2, u64::MAX, 0x10];
    let results = symbolizer.symbolize_all(&outside);
    for result in &results {
        assert_eq!(result.module(), None);
        assert_eq!(
            result.frames[..],
            [memlens_symbols::Frame::unresolved(None)]
        );
    }
    symbolizer.symbolize_all(&outside);
    assert_eq!(
        symbolizer.diagnostics(),
        [Diagnostic {
            module: None,
            kind: DiagnosticKind::AddressesOutsideModules {
                count: 5,
                examples: vec![0, 1, 2, 0x10, u64::MAX],
            },
        }]
    );
}

#[test]
fn vdso_and_unknown_main_executable_are_reported_when_used() {
    let (_program, recording) = record();
    let vdso = recording.module_index("linux-vdso.so.1");
    let vdso_module: &ModuleInfo = &recording.modules[vdso];
    let vdso_segment = &vdso_module.segments[0];
    let vdso_address = vdso_module.load_bias + vdso_segment.vaddr + 1;

    let mut symbolizer = Symbolizer::new(recording.modules.clone(), SymbolizerOptions::default());
    assert!(
        symbolizer.diagnostics().is_empty(),
        "nothing reported before use"
    );

    assert_unnamed_in_main(&mut symbolizer, recording.address("caller"));
    let result = symbolizer.symbolize(vdso_address);
    assert_eq!(result.module(), Some(ModuleIdx(vdso as u32)));
    assert_eq!(
        symbolizer.module_name(ModuleIdx(vdso as u32)),
        "linux-vdso.so.1"
    );
    assert_eq!(symbolizer.module_path(ModuleIdx(vdso as u32)), None);

    let kinds: Vec<DiagnosticKind> = symbolizer
        .diagnostics()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            DiagnosticKind::NoMainExecutablePath,
            DiagnosticKind::VirtualModule {
                name: "linux-vdso.so.1".to_owned()
            },
        ]
    );
}
