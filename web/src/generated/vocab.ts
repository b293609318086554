// Generated from crates/memlens-vocab/src/frames.rs by ts-rs: do not edit.
// Regenerate with `MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types`.

/**
 * What kind of code a frame is in, as the frame policy decides it.
 */
export type FrameKind = "user" | "library" | "allocator" | "runtime" | "loader" | "recorder";

/**
 * One source-level frame as users see it: an allocation site, or one frame of a
 * stack. Carried as a struct from the symbolizer to the page; [`Site`]'s `Display`
 * is the one way it is written as text.
 */
export type Site = {
  /**
   * The demangled function name; empty when no symbol covers the address.
   */
  function: string,
  /**
   * The source file as the debug information names it (usually a full path); empty
   * when unknown.
   */
  file: string,
  /**
   * The 1-based source line; 0 when unknown.
   */
  line: number,
  /**
   * The module's file name (`libsqlite3.so.0`, `perl`); empty when the address lies
   * outside every module.
   */
  module: string,
  /**
   * The recorded return address.
   */
  address: number,
  /**
   * The address's offset into its module's file image (for `0x… (in module+0x…)`).
   */
  module_offset: number,
  /**
   * Whether this function was inlined into the next frame outwards.
   */
  inlined: boolean,
  /**
   * What the frame policy says of it.
   */
  kind: FrameKind,
};
