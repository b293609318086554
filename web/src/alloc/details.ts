// The side panel of the allocation map: brushing details of the block under the mouse
// (size, requested size, allocation and free time, thread, allocating function with
// file:line, and the function that freed it when the trace has free stacks), the call
// stacks of both sites, and the legend of the current colouring. A report has no
// brushing, and says so.

import { h, replaceChildren } from "../app/dom";
import { formatBytes, formatDuration } from "../format";
import { frameText } from "../frames";
import type { Site } from "../generated/vocab";
import type { AllocMeta, BlockDetails } from "./api";

/** A call stack, the site first, each frame whole on hover. */
function stackList(testid: string, title: string, frames: Site[]): HTMLElement | string {
  if (frames.length === 0) return "";
  return h(
    "div",
    { class: "alloc-stack-frames", "data-testid": testid },
    h("h4", {}, title),
    h("ol", {}, ...frames.map((f) => h("li", { title: `${frameText(f)}${f.file ? `\n${f.file}` : ""}` }, frameText(f)))),
  );
}

const CONTINUOUS_HINT: Record<string, [string, string]> = {
  size: ["small", "large requests"],
  waste: ["no waste", "most waste"],
  age: ["short-lived", "long-lived"],
  latency: ["fast", "slow allocator calls"],
};

export class DetailsPanel {
  readonly el: HTMLElement;
  private readonly block: HTMLElement;
  private readonly legend: HTMLElement;

  /** `canBrush`: whether blocks can be asked for (not in a report). */
  constructor(private readonly canBrush = true) {
    this.block = h("div", { class: "alloc-block", "data-testid": "alloc-details" });
    this.legend = h("div", { class: "alloc-legend", "data-testid": "alloc-legend" });
    this.el = h("aside", { class: "alloc-side" }, h("h3", {}, "Block under the mouse"), this.block, h("h3", {}, "Colours"), this.legend);
    this.show(null, 0);
  }

  /** Shows `b` (run start `start` makes times relative), or a hint when null. */
  show(b: BlockDetails | null, start: number): void {
    this.block.dataset.block = b ? String(b.id) : "";
    if (!b) {
      const hint = this.canBrush
        ? "Move the mouse over a block to see its details. Drag to pan, wheel to zoom (Shift: time only, Alt: addresses only), click to place a cushion cursor."
        : "A report holds the pictures, not the blocks: `memlens view` of the trace shows the details of the block under the mouse. Drag to pan, wheel to zoom (Shift: time only, Alt: addresses only), click to place a cushion cursor.";
      replaceChildren(this.block, h("p", { class: "hint", "data-testid": "alloc-details-hint" }, hint));
      return;
    }
    const rows: [string, string, string][] = [
      ["size", "Size", `${formatBytes(b.reserved)} reserved`],
      ["requested", "Requested", `${b.requested.toLocaleString("en-US")} B${b.waste > 0 ? ` (waste ${formatBytes(b.waste)})` : ""}`],
      ["allocated", "Allocated at", formatDuration(b.t_alloc - start)],
      ["freed", "Freed at", b.t_free === null ? "never (live at the end)" : formatDuration(b.t_free - start)],
      ["lifetime", "Lifetime", formatDuration(b.lifetime_ns)],
      ["thread", "Thread", `${b.tid}${b.thread_name ? ` (${b.thread_name})` : ""}`],
      ["process", "Process", `${b.pid} ${b.process_name}`],
      ["function", "Function", b.function || "unknown (no stack)"],
      ["location", "File:line", b.location || "–"],
      ...(b.free_function ? [["freed-by", "Freed by", `${b.free_function}${b.free_location ? ` (${b.free_location})` : ""}`] as [string, string, string]] : []),
      ["module", "Module", b.site.module ? `${b.site.module} (${b.site.kind} code)` : "–"],
      ["address", "Address", b.addr_hex],
      ["bin", "Bin", b.bin_name],
    ];
    if (b.from_realloc) rows.push(["realloc", "Made by", "realloc"]);
    if (b.mapping) rows.push(["mapping", "Made by", "mmap (the program's own mapping)"]);
    if (b.alloc_latency_ns !== null) rows.push(["latency", "Allocator latency", `${formatDuration(b.alloc_latency_ns)}${b.free_latency_ns !== null ? ` / free ${formatDuration(b.free_latency_ns)}` : ""}`]);
    replaceChildren(
      this.block,
      h("dl", {}, ...rows.flatMap(([key, label, value]) => [h("dt", {}, label), h("dd", { "data-field": key }, value)])),
      stackList("alloc-stack-alloc", "Allocated from (a call stack of this site)", b.stack),
      stackList("alloc-stack-free", "Freed from (a call stack of that site)", b.free_stack),
    );
  }

  /** The legend of colouring `color` on `meta`. */
  showLegend(meta: AllocMeta, color: string): void {
    const item = (swatch: string, label: string, count: number) =>
      h("li", {}, h("span", { class: "swatch", style: `background:${swatch}` }), h("span", { class: "label", title: label }, label), h("span", { class: "count" }, count.toLocaleString("en-US")));
    let body: HTMLElement;
    if (color === "thread") {
      body = h("ul", {}, ...meta.threads.slice(0, 16).map((t) => item(t.color, `thread ${t.tid}${t.name ? ` ${t.name}` : ""}${meta.processes.length > 1 ? ` · pid ${t.pid}` : ""}`, t.blocks)));
    } else if (color === "process") {
      body = h("ul", {}, ...meta.processes.map((p) => item(p.color, `pid ${p.pid} ${p.name}`, 0)));
    } else if (color === "site") {
      body = h("ul", {}, ...meta.sites.map((s) => item(s.color, s.label || "unknown site", s.blocks)));
      if (meta.site_count > meta.sites.length) body.append(h("li", { class: "more" }, `${meta.site_count - meta.sites.length} more sites`));
    } else {
      const [lo, hi] = CONTINUOUS_HINT[color] ?? ["low", "high"];
      body = h("div", { class: "ramp" }, h("div", { class: "ramp-bar" }), h("div", { class: "ramp-labels" }, h("span", {}, lo), h("span", {}, `${hi} (log scale)`)));
    }
    const notes: HTMLElement[] = [];
    if (color === "site" && meta.threads.length <= 1)
      notes.push(h("p", { class: "note", "data-testid": "alloc-legend-note" }, "One thread: colouring by thread would paint every block the same, so blocks are coloured by the function that allocated them."));
    const counted = color === "thread" || color === "site" ? h("p", { class: "note" }, "Numbers: blocks.") : "";
    replaceChildren(this.legend, ...notes, body, counted, h("p", { class: "note" }, "Shading: each block is a cushion, brightest at its middle, so neighbours stay apart."));
  }
}
