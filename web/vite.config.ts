// Vite build of the viewer: one self-contained index.html (scripts and styles
// inlined by vite-plugin-singlefile), which the server embeds and the report reuses.
/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

export default defineConfig({
  base: "./",
  plugins: [viteSingleFile()],
  build: {
    target: "es2022",
    modulePreload: { polyfill: false },
    outDir: "dist",
    assetsInlineLimit: 100_000_000,
    chunkSizeWarningLimit: 2_000,
    reportCompressedSize: false,
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
