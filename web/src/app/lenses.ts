// The lens registry: each lens registers itself by id, and the page shows a tab for
// every lens that both has an implementation here and has data on the server (the
// `lenses` list of the meta document). Every lens reads its own data through the same
// source (the live API or a report's answers). New lenses only register; nothing else
// changes.

import type { Source } from "../data/source";
import type { LensInfo, Meta } from "../data/types";

export interface LensContext {
  source: Source;
  meta: Meta;
}

/** A key number of the run for the page's header, e.g. `Peak` `12.0 MiB`. */
export interface Fact {
  label: string;
  value: string;
}

/** What the page may do with a mounted lens. */
export interface LensHandle {
  /** Updates the lens in place after a new read of a followed trace; a lens without it
   * is built again. */
  refresh?(): Promise<void>;
  /** Stops the lens's timers before it is built again. */
  dispose?(): void;
}

export interface LensModule {
  id: string;
  /** Builds the lens into `el` (called once, when its tab is first shown). */
  mount(el: HTMLElement, context: LensContext): void | LensHandle | Promise<void | LensHandle>;
  /** The run's key numbers this lens knows, for the header (none when absent). */
  facts?(context: LensContext): Promise<Fact[]>;
  /** Forgets what it has read of `source`: a followed trace has been read again, so
   * the header's facts and the lens's refresh read the new data. */
  reread?(source: Source): void;
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
