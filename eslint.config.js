// ESLint: typescript-eslint's type-checked recommended rules over src, test and bench; Prettier
// owns the layout (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An async function that implements an async interface without awaiting anything still
      // reports its failures as rejections, which is what its callers handle.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Every control character in a pattern here is meant: terminal sanitising, the note format's
      // rules, ANSI escapes in tests.
      'no-control-regex': 'off',
      // A wait that is aborted rejects with the signal's reason, whatever the caller put there.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests read JSON that a command or a service printed and look into it: that is their job, so
    // the rules about values of type any are off there (src keeps them).
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Tests destructure the methods of their helper objects, none of which uses `this`.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // bin/ is CommonJS (bin/package.json), so it loads with require().
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
