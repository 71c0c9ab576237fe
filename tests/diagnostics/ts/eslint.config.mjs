import tseslint from "typescript-eslint";
import globals from "globals";

export default [
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { ecmaFeatures: { jsx: true } },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      "@typescript-eslint/no-unused-vars": "error",
      "prefer-const": "warn",
      eqeqeq: "error",
    },
  },
  {
    files: ["**/*.js"],
    languageOptions: { sourceType: "module", globals: globals.node },
    rules: {
      "no-unused-vars": "error",
      "no-undef": "error",
      "prefer-const": "warn",
      eqeqeq: "error",
    },
  },
];
