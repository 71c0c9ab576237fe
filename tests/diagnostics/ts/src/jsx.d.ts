declare namespace JSX {
  type Element = { readonly tag: unknown };
  type IntrinsicElements = Record<string, Record<string, unknown>>;
}
