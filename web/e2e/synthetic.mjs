// Synthetic reports: the real report's page and metadata with generated trees whose
// sizes change at every snapshot time, so each time step moves every node. By default
// about 500 nodes (8 × 8 × 7 below the root), for the frame-rate measurement; a wider
// fan-out makes trees too large for SVG, drawn on a canvas. The report holds the heap
// lens's answers under the keys the page asks by (`heap/meta`, `heap/tree?…`).

/** The default fan-out per level: 1 + 8 + 64 + 448 = 521 nodes. */
export const FANOUT_500 = [8, 8, 7];

/** The data element of a report page, replaced by `data`. */
export function withData(html, data) {
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  const element = /<script id="memlens-data" type="application\/json">[\s\S]*?<\/script>/;
  if (!element.test(html)) throw new Error("the page has no memlens-data element");
  return html.replace(element, () => `<script id="memlens-data" type="application/json">${json}</script>`);
}

/** The key of an embedded answer (the page's `answerKey`). */
function answerKey(route, params) {
  const names = Object.keys(params).sort();
  return `${route}?${new URLSearchParams(names.map((k) => [k, String(params[k])]))}`;
}

const json = (value) => ({ type: "application/json; charset=utf-8", json: value });

/** Report data like `base` (a real report's data) with synthetic ~500-node trees. */
export function syntheticReport(base, times = 8, fanout = FANOUT_500) {
  const meta = base.answers["heap/meta"].json;
  const by = meta.default_classifiers.join(",");
  const start = meta.run.start_ns;
  const end = meta.run.end_ns;
  const timesNs = Array.from({ length: times }, (_, i) => Math.round(start + ((end - start) * (i + 1)) / times));
  const tree = (k) => build([], 0, k);
  function build(path, level, k) {
    if (level === fanout.length) {
      const seed = path.reduce((s, p) => s * 31 + p.length + Number(p.slice(1)), 7);
      const bytes = 1000 + ((seed * 7919 + k * (seed % 13) * 997) % 50_000);
      return leaf(path, bytes);
    }
    const children = Array.from({ length: fanout[level] }, (_, i) => build([...path, `n${level}${i}`], level + 1, k));
    children.forEach((c, i) => (c.sort_position = i));
    const bytes = children.reduce((s, c) => s + c.bytes, 0);
    return { ...leaf(path, bytes), children };
  }
  function leaf(path, bytes) {
    return {
      key: path.length ? path[path.length - 1] : "Overall",
      full_key: path,
      bytes,
      objects: Math.ceil(bytes / 64),
      growth_bytes: 0,
      growth_objects: 0,
      sort_position: 0,
      is_other: false,
      classifier: path.length ? path.length - 1 : null,
    };
  }
  const trees = timesNs.map((t, k) => ({ time_ns: t, root: tree(k) }));
  // The real heap answers give way to the synthetic ones.
  const answers = Object.fromEntries(Object.entries(base.answers).filter(([key]) => !key.startsWith("heap/")));
  answers["heap/meta"] = json({ ...meta, snapshots: timesNs.map((t) => ({ time_ns: t, kind: "point", label: "" })) });
  const timeline = Object.keys(base.answers).find((key) => key.startsWith("heap/timeline"));
  answers[timeline] = base.answers[timeline];
  answers[answerKey("heap/growth", { by, top: 20 })] = json({ by, doc: { suspects: [] } });
  answers[answerKey("heap/tree", { by, metric: "bytes", sort: "growth", times: "" })] = json({
    doc: { classifiers: meta.default_classifiers, times_ns: timesNs, metric: "bytes", sort: "growth", trees },
    totals: trees.map((t) => ({ time_ns: t.time_ns, bytes: t.root.bytes, objects: t.root.objects })),
    layers: trees[0].root.children.map((c, i) => ({
      key: c.key,
      is_other: c.is_other,
      bytes: trees.map((t) => t.root.children[i].bytes),
      objects: trees.map((t) => t.root.children[i].objects),
    })),
  });
  return { ...base, answers };
}

/** The number of nodes of one synthetic tree. */
export function syntheticNodeCount(fanout = FANOUT_500) {
  let total = 1;
  let level = 1;
  for (const f of fanout) {
    level *= f;
    total += level;
  }
  return total;
}
