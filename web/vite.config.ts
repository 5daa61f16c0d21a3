/**
 * The page's build: Vite bundles web/src into dist/web with content-hashed names under assets/,
 * which src/plugins/web.ts serves with long immutable caching. Preact's JSX is compiled by Vite's
 * own transform (no Babel preset needed).
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `npm run dev:web`: Vite's dev server, passing API calls to a hashd on port 3000.
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline <script> or data: URLs: the CSP is default-src 'self' without 'unsafe-inline'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
})
