// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test/.generated/**',
      'test/fixtures/consumer-project/**',
      // A CommonJS project's files, as a user would write them: not this repository's TypeScript.
      'test/unit/executor/fixtures/commonjs-project/**',
      'deploy/docker/catalog-example/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // Port implementations are async by contract even when one adapter has nothing to await.
      '@typescript-eslint/require-await': 'off',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read the environment only in a config.ts (zod-parsed once).',
        },
      ],
    },
  },
  {
    files: ['**/config.ts', 'test/**/*.ts', 'deploy/**/*.ts', 'vitest.config.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
