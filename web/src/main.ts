// Entry point of the memlens viewer: picks the data source (the live API, or the data
// a report embedded), reads the run's metadata and starts the page with its lenses.

import "./styles.css";
import "./heap/index";
import "./alloc/index";
import "./cache/index";
import { startShell } from "./app/shell";
import { pickSource } from "./data/source";
import type { Meta } from "./data/types";

async function main(): Promise<void> {
  const app = document.getElementById("app")!;
  try {
    const source = pickSource(document, window.location);
    const meta = await source.json<Meta>("meta");
    document.title = `memlens · ${meta.program.split(" ")[0]?.split("/").pop() || meta.trace}`;
    await startShell(app, source, meta);
    document.body.dataset.ready = "1";
  } catch (e) {
    app.textContent = e instanceof Error ? e.message : String(e);
    app.className = "fatal";
    document.body.dataset.ready = "error";
  }
}

void main();
