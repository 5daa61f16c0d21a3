// Flat config: the recommended TypeScript rules over src, test, bench and the web page (web/).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // clients/typescript/schema.ts is generated (npm run client) and never edited; its dist/ is built by npm pack.
  { ignores: ['dist/', 'node_modules/', 'test-artifacts/', 'clients/typescript/schema.ts', 'clients/typescript/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
)
