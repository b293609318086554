// The call stacks behind a node of the heap lens (`heap/stacks`): fetched once per
// grouping, node and time and kept, and drawn as frame lists — the allocation site
// first, each frame written as every lens writes one (`frameText`) — for the tooltip
// (the heaviest stack) and the details panel (the heaviest few, every frame).

import { h } from "../app/dom";
import type { StacksDoc, TimeNs } from "../data/types";
import type { FrameWire } from "../generated/viewer";
import { formatBytes, formatCount } from "../format";
import { frameText } from "../frames";
import type { HeapApi } from "./api";
import { keyOf } from "./layout";

/** Stacks asked for per node (the details panel shows them all, the tooltip one). */
export const STACKS_PER_NODE = 3;

/** Answers kept before the oldest is dropped. */
const KEEP = 200;

export class StackStore {
  private readonly answers = new Map<string, Promise<StacksDoc>>();

  constructor(private readonly api: HeapApi) {}

  /** The stacks of the node at `path` under grouping `by` at `time`. */
  get(by: string[], domain: string[], path: readonly string[], time: TimeNs): Promise<StacksDoc> {
    const key = `${by.join(",")}|${domain.join(",")}|${time}|${keyOf(path)}`;
    let answer = this.answers.get(key);
    if (!answer) {
      answer = this.api.stacks(by, domain, path, time, STACKS_PER_NODE);
      // A failed answer is asked again next time.
      answer.catch(() => this.answers.delete(key));
      this.answers.set(key, answer);
      if (this.answers.size > KEEP) this.answers.delete(this.answers.keys().next().value as string);
    }
    return answer;
  }

  /** Forgets every answer (the model changed: a followed trace grew). */
  clear(): void {
    this.answers.clear();
  }
}

/** A stack's frames as a list, at most `max` of them (the rest counted). */
export function frameList(frames: FrameWire[], max: number): HTMLElement {
  const shown = frames.slice(0, max);
  const list = h(
    "ol",
    { class: "stack-frames", "data-testid": "stack-frames" },
    ...shown.map((f) =>
      h(
        "li",
        { class: `frame kind-${f.kind}${f.inlined ? " inlined" : ""}`, title: `${frameText(f)} — ${f.module}` },
        frameText(f),
      ),
    ),
  );
  if (frames.length > shown.length) list.append(h("li", { class: "more" }, `… ${frames.length - shown.length} more frames`));
  return list;
}

/** The stacks of a node for the details panel: each with its share and every frame. */
export function stacksDetails(doc: StacksDoc): HTMLElement {
  if (doc.stacks.length === 0) {
    return h("p", { class: "hint" }, "No single stack: this group merges several keys, or holds nothing at this time.");
  }
  const others = doc.stack_count - doc.stacks.length;
  return h(
    "div",
    { class: "stacks" },
    ...doc.stacks.map((s, i) =>
      h(
        "section",
        { class: "stack", "data-testid": "details-stack" },
        h(
          "h4",
          {},
          `Stack ${i + 1} of ${formatCount(doc.stack_count)} · ${formatBytes(s.bytes)} in ${formatCount(s.objects)} blocks`,
        ),
        frameList(s.frames, 64),
      ),
    ),
    others > 0 ? h("p", { class: "hint" }, `${formatCount(others)} more stacks hold the rest.`) : null,
  );
}
