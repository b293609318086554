// Registers the allocation-map lens with the page's lens registry.

import { registerLens } from "../app/lenses";
import { AllocLens } from "./lens";

registerLens({
  id: "alloc",
  mount: async (el, context) => {
    const lens = await AllocLens.mount(el, context);
    return { dispose: () => lens?.dispose() };
  },
});
