// Registers the heap-evolution lens with the page's lens registry.

import { registerLens } from "../app/lenses";
import { HeapLens } from "./lens";

registerLens({
  id: "heap",
  mount: async (el, context) => {
    await HeapLens.mount(el, context);
  },
});
