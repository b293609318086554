//! The format document and the code must agree: this test renders every
//! format constant from the code and compares it with the block in
//! `docs/trace-format.md` (set `MEMLENS_BLESS=1` to rewrite the block).

use memlens_trace::columns::col;
use memlens_trace::format::{self, ChunkKind, Codec, tag};

fn rendered() -> String {
    let mut s = String::from("```\n");
    let magic: Vec<String> = format::FILE_MAGIC
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    s += &format!("FILE_MAGIC          {}\n", magic.join(" "));
    s += &format!("FORMAT_VERSION      {}\n", format::FORMAT_VERSION);
    s += &format!("READ_VERSION        {}\n", format::READ_VERSION);
    s += &format!("FILE_HEADER_LEN     {}\n", format::FILE_HEADER_LEN);
    s += &format!(
        "CHUNK_MAGIC         {}\n",
        String::from_utf8_lossy(&format::CHUNK_MAGIC)
    );
    s += &format!("CHUNK_HEADER_LEN    {}\n", format::CHUNK_HEADER_LEN);
    s += &format!("MAX_CHUNK_RAW_LEN   {}\n", format::MAX_CHUNK_RAW_LEN);
    for (name, k) in [
        ("process", ChunkKind::Process),
        ("events", ChunkKind::Events),
        ("references", ChunkKind::References),
    ] {
        s += &format!("kind {name:<14} {}\n", k as u8);
    }
    for (name, c) in [
        ("none", Codec::None),
        ("zstd", Codec::Zstd),
        ("columns", Codec::Columns),
    ] {
        s += &format!("codec {name:<13} {}\n", c as u8);
    }
    for (name, t) in [
        ("process", tag::PROCESS),
        ("module_load", tag::MODULE_LOAD),
        ("module_unload", tag::MODULE_UNLOAD),
        ("thread_name", tag::THREAD_NAME),
        ("thread_end", tag::THREAD_END),
        ("stack_node", tag::STACK_NODE),
        ("mark", tag::MARK),
        ("warning", tag::WARNING),
        ("clock", tag::CLOCK),
        ("end", tag::END),
        ("type_name", tag::TYPE_NAME),
        ("frame_name", tag::FRAME_NAME),
        ("typed_stack", tag::TYPED_STACK),
        ("wrapper", tag::WRAPPER),
        ("totals", tag::TOTALS),
        ("mmap", tag::MMAP),
        ("munmap", tag::MUNMAP),
        ("sampling", tag::SAMPLING),
        ("attached", tag::ATTACHED),
        ("heap_walk", tag::HEAP_WALK),
        ("contained", tag::CONTAINED),
    ] {
        s += &format!("tag {name:<15} {t:#04x}\n");
    }
    for (name, c) in [
        ("ops", col::OPS),
        ("dt_alloc", col::DT_ALLOC),
        ("dt_free", col::DT_FREE),
        ("size_lo", col::SIZE_LO),
        ("size_hi", col::SIZE_HI),
        ("stack", col::STACK),
        ("addr", col::ADDR),
        ("pred", col::PRED),
        ("ref_lo", col::REF_LO),
        ("ref_hi", col::REF_HI),
        ("lat_alloc", col::LAT_ALLOC),
        ("lat_free", col::LAT_FREE),
        ("free_stack", col::FREE_STACK),
    ] {
        s += &format!("column {name:<12} {c}\n");
    }
    s += "```\n";
    s
}

#[test]
fn document_lists_the_constants_of_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/trace-format.md");
    let doc = std::fs::read_to_string(path).expect("docs/trace-format.md exists");
    let begin = "<!-- constants:begin -->\n";
    let end = "<!-- constants:end -->";
    let a = doc.find(begin).expect("begin marker") + begin.len();
    let b = doc.find(end).expect("end marker");
    let want = rendered();
    if std::env::var_os("MEMLENS_BLESS").is_some() {
        let new = format!("{}{}{}", &doc[..a], want, &doc[b..]);
        std::fs::write(path, new).expect("write the document");
        return;
    }
    assert_eq!(
        &doc[a..b],
        want,
        "docs/trace-format.md disagrees with the code; rerun with MEMLENS_BLESS=1 after checking the change"
    );
}
