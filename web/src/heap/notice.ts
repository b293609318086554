// A visible notice above the views: why the drill-down moved to an ancestor, or why
// data could not be loaded. It stays while its cause lasts.

import { h } from "../app/dom";

export class Notice {
  readonly el = h("div", { class: "notice", role: "status", "aria-live": "polite", "data-testid": "notice", hidden: true });

  show(text: string, kind: "info" | "error" = "info"): void {
    this.el.textContent = text;
    this.el.dataset.kind = kind;
    this.el.hidden = false;
  }

  clear(): void {
    this.el.hidden = true;
    this.el.textContent = "";
  }
}
