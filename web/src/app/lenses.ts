// The lens registry: each lens registers itself by id, and the page shows a tab for
// every lens that both has an implementation here and has data on the server (the
// `lenses` list of the meta document). New lenses only register; nothing else changes.

import type { DataSource } from "../data/source";
import type { LensInfo, Meta } from "../data/types";

export interface LensContext {
  source: DataSource;
  meta: Meta;
}

export interface LensModule {
  id: string;
  /** Builds the lens into `el` (called once, when its tab is first shown). */
  mount(el: HTMLElement, context: LensContext): void | Promise<void>;
}

const modules = new Map<string, LensModule>();

export function registerLens(module: LensModule): void {
  modules.set(module.id, module);
}

/** The lenses to show, in the server's order. */
export function lensesFor(meta: Meta): { info: LensInfo; module: LensModule }[] {
  return meta.lenses
    .filter((info) => modules.has(info.id))
    .map((info) => ({ info, module: modules.get(info.id)! }));
}
