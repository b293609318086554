// Breadcrumbs of the drill-down: the path from the whole heap to the local view's
// root; each step is a button that drills back up to it.

import { h, replaceChildren } from "../app/dom";

export class Breadcrumbs {
  readonly el = h("nav", { class: "breadcrumbs", "aria-label": "drill-down path", "data-testid": "breadcrumbs" });

  constructor(private readonly navigate: (path: string[]) => void) {}

  render(path: string[]): void {
    const steps: (HTMLElement | string)[] = [];
    const crumb = (label: string, to: string[], current: boolean) => {
      const b = h("button", { class: `crumb${current ? " current" : ""}`, "data-depth": to.length, title: label }, label);
      b.addEventListener("click", () => this.navigate(to));
      return b;
    };
    steps.push(crumb("Whole heap", [], path.length === 0));
    path.forEach((key, i) => {
      steps.push(h("span", { class: "crumb-sep", "aria-hidden": "true" }, "›"));
      steps.push(crumb(key, path.slice(0, i + 1), i === path.length - 1));
    });
    replaceChildren(this.el, ...steps);
  }
}
