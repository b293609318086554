// Time travel controls: previous/next buttons, a slider over the snapshot times and
// the current time with the reason it is a snapshot (mark, peak, …).

import { h } from "../app/dom";
import type { SnapshotInfo } from "../data/types";
import { formatDuration } from "../format";

export interface TimeControlsEvents {
  step(delta: number): void;
  seek(index: number): void;
}

export class TimeControls {
  readonly el: HTMLElement;
  private readonly prev = h("button", { class: "btn icon", "data-testid": "prev-time", title: "Previous time (←)", "aria-label": "previous time" }, "‹");
  private readonly next = h("button", { class: "btn icon", "data-testid": "next-time", title: "Next time (→)", "aria-label": "next time" }, "›");
  private readonly slider = h("input", { type: "range", min: 0, max: 0, step: 1, value: 0, "data-testid": "time-slider", "aria-label": "time" });
  private readonly label = h("output", { class: "time-label", "data-testid": "time-label" });

  constructor(events: TimeControlsEvents) {
    this.el = h("div", { class: "time-controls" }, this.prev, this.slider, this.next, this.label);
    this.prev.addEventListener("click", () => events.step(-1));
    this.next.addEventListener("click", () => events.step(1));
    this.slider.addEventListener("input", () => events.seek(Number(this.slider.value)));
  }

  render(times: SnapshotInfo[], index: number): void {
    this.slider.max = String(Math.max(0, times.length - 1));
    this.slider.value = String(index);
    this.prev.disabled = index <= 0;
    this.next.disabled = index >= times.length - 1;
    const snapshot = times[index];
    if (!snapshot) return;
    this.label.dataset.time = String(snapshot.time_ns);
    this.label.textContent = `${formatDuration(snapshot.time_ns)}${snapshot.label ? ` · ${snapshot.label}` : ""}  (${index + 1}/${times.length})`;
  }
}
