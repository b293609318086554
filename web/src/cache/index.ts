// Registers the cache lens with the page's lens registry.

import "./cache.css";
import { registerLens } from "../app/lenses";
import { CacheLens } from "./lens";

registerLens({
  id: "cache",
  mount: async (el, context) => {
    await CacheLens.mount(el, context);
  },
});
