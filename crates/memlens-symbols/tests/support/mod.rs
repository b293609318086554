//! Test support: compile small C, C++ and Rust programs, run them, and read back the
//! module map and addresses they print.
//!
//! The programs play the recorded process. Each includes [`MODULE_MAP_PRINTER`], which
//! walks `dl_iterate_phdr` exactly as the recorder does and prints one `module`,
//! `segment` and `build_id` line per fact, and prints `addr <label> <hex>` for the
//! addresses under test. Tests then symbolize those addresses offline, after the
//! program exited, like `memlens report` does.

// reason: every test binary includes this module but uses a different part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memlens_symbols::{ModuleInfo, Segment};

/// C (and C++) code that prints the module map the way the recorder records it.
pub const MODULE_MAP_PRINTER: &str = r#"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdio.h>
#include <string.h>

static int memlens_print_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    printf("module %lx %s\n", (unsigned long)info->dlpi_addr, info->dlpi_name);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD)
            printf("segment %lx %lx %lx %x\n", (unsigned long)ph->p_vaddr,
                   (unsigned long)ph->p_memsz, (unsigned long)ph->p_offset,
                   (unsigned)ph->p_flags);
        if (ph->p_type != PT_NOTE) continue;
        unsigned long align = ph->p_align == 8 ? 7 : 3;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof(*note);
            const unsigned char *desc =
                (const unsigned char *)name + ((note->n_namesz + align) & ~align);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0) {
                printf("build_id ");
                for (unsigned j = 0; j < note->n_descsz; j++) printf("%02x", desc[j]);
                printf("\n");
            }
            p = (const char *)desc + ((note->n_descsz + align) & ~align);
        }
    }
    return 0;
}

static void memlens_print_module_map(void) {
    dl_iterate_phdr(memlens_print_module, NULL);
    fflush(stdout);
}
"#;

/// The language of a test program, which picks the compiler.
#[derive(Clone, Copy, Debug)]
pub enum Lang {
    /// Compiled with `cc`.
    C,
    /// Compiled with `c++`.
    Cpp,
}

/// A compiled test program in its own temporary directory.
pub struct Program {
    /// The temporary directory; removed when the program is dropped.
    pub dir: tempfile::TempDir,
    /// The executable.
    pub exe: PathBuf,
    /// The source, for finding line numbers by marker.
    pub source: String,
}

/// What a run of a test program printed.
pub struct Recording {
    /// The module map, in `dl_iterate_phdr` order (the main program first).
    pub modules: Vec<ModuleInfo>,
    /// The `addr <label> <hex>` lines.
    pub addresses: HashMap<String, u64>,
}

impl Recording {
    /// Returns the address printed under `label`.
    pub fn address(&self, label: &str) -> u64 {
        *self
            .addresses
            .get(label)
            .unwrap_or_else(|| panic!("the program printed no address `{label}`"))
    }

    /// Returns the index of the first module whose path ends with `suffix`.
    pub fn module_index(&self, suffix: &str) -> usize {
        self.modules
            .iter()
            .position(|module| module.path.ends_with(suffix))
            .unwrap_or_else(|| panic!("no module ending with `{suffix}`"))
    }
}

/// Compiles `source` (with the module map printer prepended) as `prog.c`/`prog.cpp`
/// into a new temporary directory.
pub fn compile(lang: Lang, source: &str, flags: &[&str]) -> Program {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    compile_in(dir, lang, source, flags)
}

/// Compiles `source` into `dir`, replacing an earlier `prog` there.
pub fn compile_in(dir: tempfile::TempDir, lang: Lang, source: &str, flags: &[&str]) -> Program {
    let (compiler, file_name) = match lang {
        Lang::C => ("cc", "prog.c"),
        Lang::Cpp => ("c++", "prog.cpp"),
    };
    let full_source = format!("{MODULE_MAP_PRINTER}\n{source}");
    let source_path = dir.path().join(file_name);
    std::fs::write(&source_path, &full_source).expect("write the test program");
    let exe = dir.path().join("prog");
    let output = Command::new(compiler)
        .args(flags)
        .arg(&source_path)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|error| panic!("run {compiler}: {error}"));
    assert!(
        output.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Program {
        dir,
        exe,
        source: full_source,
    }
}

impl Program {
    /// Runs the program and parses what it printed.
    pub fn run(&self) -> Recording {
        let output = Command::new(&self.exe)
            .output()
            .expect("run the test program");
        assert!(output.status.success(), "the test program failed");
        parse_recording(&String::from_utf8_lossy(&output.stdout))
    }

    /// Returns the 1-based line of the source line containing `marker`.
    pub fn line_of(&self, marker: &str) -> u32 {
        line_of(&self.source, marker)
    }
}

/// Returns the 1-based line of the line of `source` containing `marker`.
pub fn line_of(source: &str, marker: &str) -> u32 {
    let index = source
        .lines()
        .position(|line| line.contains(marker))
        .unwrap_or_else(|| panic!("marker `{marker}` not in the source"));
    index as u32 + 1
}

/// Parses the `module`/`segment`/`build_id`/`addr` lines a test program printed.
pub fn parse_recording(stdout: &str) -> Recording {
    let mut modules: Vec<ModuleInfo> = Vec::new();
    let mut addresses = HashMap::new();
    for line in stdout.lines() {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "module" => {
                let (bias, path) = rest.split_once(' ').unwrap_or((rest, ""));
                modules.push(ModuleInfo {
                    path: path.to_owned(),
                    load_bias: hex(bias),
                    segments: Vec::new(),
                    build_id: None,
                });
            }
            "segment" => {
                let fields: Vec<u64> = rest.split(' ').map(hex).collect();
                modules
                    .last_mut()
                    .expect("segment after module")
                    .segments
                    .push(Segment {
                        vaddr: fields[0],
                        memsz: fields[1],
                        file_offset: fields[2],
                        flags: fields[3] as u32,
                    });
            }
            "build_id" => {
                let bytes = (0..rest.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&rest[i..i + 2], 16).expect("hex build id"))
                    .collect();
                modules.last_mut().expect("build id after module").build_id = Some(bytes);
            }
            "addr" => {
                let (label, value) = rest.split_once(' ').expect("addr <label> <hex>");
                addresses.insert(label.to_owned(), hex(value));
            }
            _ => {}
        }
    }
    Recording { modules, addresses }
}

/// Parses hex with or without `0x`.
fn hex(text: &str) -> u64 {
    let digits = text.trim().trim_start_matches("0x");
    u64::from_str_radix(digits, 16).unwrap_or_else(|_| panic!("not hex: `{text}`"))
}

/// Runs a command and asserts it succeeded.
pub fn run_tool(program: &str, args: &[&std::ffi::OsStr]) {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("run {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Returns the file name of `path` as text.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}
