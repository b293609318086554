// What the allocation map's views share: the lens state (viewport, drawing parameters,
// cursors, brushed block) and the few actions that change it. The lens (lens.ts)
// implements it; every view reads it and asks the lens to change it.

import type { AllocApi, AllocMeta, BarParams, BlockDetails, DrawParams } from "./api";
import type { CursorStyle } from "./cursors";
import type { Grid } from "./tiles";
import type { Extent, Limits } from "./viewport";

export interface AllocState {
  /** The main view's window. */
  view: Extent;
  draw: DrawParams;
  bar: BarParams;
  /** Cushion-cursor softness, 0..1. */
  softness: number;
  /** Cushion cursors, as times (ns). */
  cursors: number[];
  /** How the grid of bins is correlated: views stacked on a shared time axis, or side
   * by side with each bin's addresses scaled to the same height. */
  gridMode: "time" | "address";
  /** The block under the mouse. */
  brushed: BlockDetails | null;
}

export interface AllocContext {
  readonly api: AllocApi;
  readonly meta: AllocMeta;
  readonly limits: Limits;
  readonly grid: Grid;
  readonly state: AllocState;
  /** Moves the main view (clamped to the model). */
  setView(v: Extent): void;
  /** Adds a cushion cursor at time `t`, or removes the one within `tolNs` of it. */
  toggleCursor(t: number, tolNs: number): void;
  /** Shows a block's details (null: none). */
  setBrushed(b: BlockDetails | null): void;
  /** The cursors' look. */
  cursorStyle(): CursorStyle;
  /** Shows an error sentence (a failed request). */
  report(message: string): void;
}
