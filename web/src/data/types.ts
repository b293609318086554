// The viewer's wire types (`api/meta`, the heap lens's answers, the report's data) and
// the heap engine's memory-tree and suspect documents, under the names the page uses.
// They are generated from the Rust wire structs (see ../generated/README.md); only the
// page's own refinements are written here.

import type { NodeWire, SuspectWire, TreesWire } from "../generated/heap";
import type {
  ClassifierWire,
  EmbeddedAnswerWire,
  GrowthAnswerWire,
  HeapMetaWire,
  LensWire,
  MetaWire,
  PointWire,
  ReportWire,
  SnapshotWire,
  StacksWire,
  TimelineWire,
  TreeAnswerWire,
  WindowWire,
} from "../generated/viewer";

/** Nanoseconds since the recorded process started. */
export type TimeNs = number;

export type Metric = TreesWire["metric"];
export type SortStrategy = TreesWire["sort"];

export type Window = WindowWire;
export type ClassifierInfo = ClassifierWire;
/** A snapshot time of the server's, or one the user picked on the page (`picked`). */
export type SnapshotInfo = Omit<SnapshotWire, "kind"> & { kind: SnapshotWire["kind"] | "picked" };
export type LensInfo = LensWire;

/** `api/meta`: the run and the lenses. */
export type Meta = MetaWire;
/** `api/heap/meta`: the heap lens's run, totals, marks, threads, classifiers, snapshots. */
export type HeapMeta = HeapMetaWire;

export type TimelineDoc = TimelineWire;
export type HeapPoint = PointWire;

/** One node of a memory tree; `children` are in stable sort-position order. */
export type TreeNode = NodeWire;
export type TreesDoc = TreesWire;
export type TreeResponse = TreeAnswerWire;

export type Suspect = SuspectWire;
/** `api/heap/stacks`: the heaviest call stacks behind one node at one instant. */
export type StacksDoc = StacksWire;
export type GrowthDoc = GrowthAnswerWire;

/** The data a report embeds in place of the API. */
export type ReportData = ReportWire;
export type EmbeddedAnswer = EmbeddedAnswerWire;
