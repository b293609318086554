// The page around the lenses: a header with the program, the run's key numbers (the
// lenses' facts) and the lens switcher (one tab per registered lens that has data),
// and one panel per lens, built when its tab is first opened. A viewer following a trace
// still being written updates the facts and the open lenses after each read.

import type { Source } from "../data/source";
import type { Meta } from "../data/types";
import { h, replaceChildren } from "./dom";
import { type Fact, type LensHandle, lensesFor } from "./lenses";
import { followLive } from "./live";
import { readUrlState, writeUrlState } from "./url_state";

export async function startShell(app: HTMLElement, source: Source, meta: Meta): Promise<void> {
  const lenses = lensesFor(meta);
  const tabs = h("nav", { class: "lens-tabs", role: "tablist", "data-testid": "lens-tabs" });
  const panels = h("main", { class: "lens-panels" });
  // The run's key numbers, as the lenses know them (a lens without facts adds none: a
  // trace of memory references only has no allocation figures, and zeros there would
  // read as measurements).
  const factsOf = async () => {
    const known = await Promise.all(
      lenses.map(({ module }) => (module.facts ? module.facts({ source, meta }).catch((): Fact[] => []) : Promise.resolve([]))),
    );
    return known.flat().map((f) => fact(f.label, f.value));
  };
  const facts = h("div", { class: "run-facts", "data-testid": "run-facts" }, ...(await factsOf()));
  const live = meta.live ? h("div", { class: "live-badge", "data-testid": "live-status", role: "status" }) : null;
  const program = h("div", { class: "program", title: meta.program }, meta.program || meta.trace);
  const badge = source.kind === "report" ? h("span", { class: "badge", "data-testid": "report-badge" }, "report") : null;
  replaceChildren(
    app,
    h(
      "header",
      { class: "top" },
      h("div", { class: "brand" }, h("span", { class: "logo", "aria-hidden": "true" }), "memlens", badge),
      tabs,
      h("div", { class: "run" }, program, live, facts),
    ),
    panels,
  );
  // What every figure of every lens depends on: a sampled recording (estimates), a
  // trace that starts mid-run (memlens attach), and the viewer's own notes.
  const sentences = [...(meta.sampling ? [meta.sampling.note] : []), ...(meta.mid_run ? [meta.mid_run] : []), ...meta.notes];
  if (sentences.length > 0) {
    panels.append(h("div", { class: "notes", "data-testid": "run-notes" }, ...sentences.map((n) => h("p", {}, n))));
  }
  if (lenses.length === 0) {
    panels.append(h("p", { class: "empty" }, "This trace holds no data any lens of this viewer can show."));
    return;
  }
  const mounted = new Map<string, HTMLElement>();
  const handles = new Map<string, LensHandle>();
  const build = async (id: string, panel: HTMLElement) => {
    const lens = lenses.find((l) => l.info.id === id)!;
    try {
      const handle = await lens.module.mount(panel, { source, meta });
      if (handle) handles.set(id, handle);
    } catch (e) {
      panel.append(h("p", { class: "error" }, e instanceof Error ? e.message : String(e)));
    }
  };
  const open = async (id: string) => {
    writeUrlState({ lens: id });
    for (const b of tabs.querySelectorAll<HTMLButtonElement>("button")) {
      const on = b.dataset.lens === id;
      b.setAttribute("aria-selected", String(on));
      b.classList.toggle("on", on);
    }
    for (const [other, panel] of mounted) panel.hidden = other !== id;
    if (!mounted.has(id)) {
      const panel = h("div", { class: "lens-panel", role: "tabpanel", "data-lens": id });
      mounted.set(id, panel);
      panels.append(panel);
      await build(id, panel);
    }
  };
  if (live) {
    // After each read of the followed trace: new facts, and every open lens updated in
    // place, or built again when it cannot update itself.
    followLive(source, live, async () => {
      for (const { module } of lenses) module.reread?.(source);
      replaceChildren(facts, ...(await factsOf()));
      for (const [id, panel] of mounted) {
        const handle = handles.get(id);
        if (handle?.refresh) {
          await handle.refresh();
        } else {
          handle?.dispose?.();
          handles.delete(id);
          replaceChildren(panel);
          await build(id, panel);
        }
      }
    });
  }
  for (const { info } of lenses) {
    const tab = h("button", { class: "lens-tab", role: "tab", "data-lens": info.id, title: info.question, "data-testid": `lens-${info.id}` }, info.title);
    tab.addEventListener("click", () => void open(info.id));
    tabs.append(tab);
  }
  // The lens a copied URL names, when this trace has it.
  const named = readUrlState().get("lens");
  await open(lenses.find((l) => l.info.id === named)?.info.id ?? lenses[0].info.id);
}

function fact(label: string, value: string): HTMLElement {
  return h("div", { class: "fact" }, h("span", {}, label), h("b", {}, value));
}
