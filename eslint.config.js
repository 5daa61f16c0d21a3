// Flat config: the recommended TypeScript rules over src, test, bench and the web page (web/).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // clients/typescript/schema.d.ts is generated (npm run client) and never edited.
  { ignores: ['dist/', 'node_modules/', 'test-artifacts/', 'clients/typescript/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
)
