// How the page writes one frame of a call stack, in every lens: `function (file:line)`,
// `function (in module)` when there is no source file, the address when there is no
// symbol, and `[inlined]` after a frame inlined into its caller — the page's side of
// the Rust `Site`'s `Display`.

/** The fields of a frame the page writes: a `Site`, or a heap-lens stack frame. */
export interface FrameFields {
  function: string;
  file: string;
  line: number;
  module: string;
  inlined: boolean;
  /** The return address, when the frame carries it. */
  address?: number;
}

/** One frame as the stack lists show it. */
export function frameText(f: FrameFields): string {
  const file = f.file.split("/").pop() ?? "";
  const module = f.module.split("/").pop() ?? "";
  const where = file ? `${file}${f.line > 0 ? `:${f.line}` : ""}` : module ? `in ${module}` : "";
  const name = f.function || (f.address ? `0x${f.address.toString(16)}` : "??");
  return `${name}${where ? ` (${where})` : ""}${f.inlined ? " [inlined]" : ""}`;
}
