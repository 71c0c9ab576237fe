#!/usr/bin/env node
// The oracle for TypeScript and JavaScript scopes: the TypeScript compiler's
// own parser (`ts.createSourceFile`, parent nodes set; the `typescript`
// package is found through NODE_PATH). The script kind comes from the file's
// extension: .ts .mts .cts, .tsx, .js .mjs .cjs, .jsx.
//
// Prints, as JSON, the scopes of a file: kind, name, qualified name (the
// names of the enclosing scopes and its own, joined by "."), start line, end
// line and head line (1-based), sorted by the offset of the start token
// (ties in document order, the outer first).
//
// Scopes:
// - function: a FunctionDeclaration with a body (`export default function ()`
//   without a name: "default"); a MethodDeclaration with a body, in a class or
//   an object literal; a Constructor with a body ("constructor"); a Get- or
//   SetAccessor with a body; a VariableDeclaration named by an Identifier
//   whose initializer is an ArrowFunction or FunctionExpression; a class
//   PropertyDeclaration or object-literal PropertyAssignment whose
//   initializer is one. Any other function expression (a callback, an IIFE)
//   is no scope, but the scopes inside it are, their qualified names passing
//   it over.
// - class: a ClassDeclaration (anonymous: "default"); a VariableDeclaration
//   named by an Identifier whose initializer is a ClassExpression.
// - interface, enum: every InterfaceDeclaration, EnumDeclaration.
// - namespace: a ModuleDeclaration named by an Identifier (`namespace A.B`
//   is A holding B, both with the start, end and head of the one
//   declaration); not `declare module "x"`, not `declare global`.
//
// A member's name is its source text, a string literal's without its quotes
// (`#x`, `[Symbol.iterator]`, `42` as written).
//
// Lines: the start is the line of the keyword (`function`, `class`,
// `interface`, `enum`, `namespace`/`module`; after any modifiers); of the
// `const`/`let`/`var` of the declaration list for a variable; of a member's
// first token that is not a decorator (`static`, `async`, `get`, `*`, the
// name). The end is the line of the node's last character; for a function or
// class bound to a variable or property, of the initializer's. The head is
// the first of: the start, the first decorator, an `export`, `default`,
// `declare` or `abstract` modifier (a variable's: its VariableStatement's),
// and the last JSDoc comment (`/** */`) the parser attaches to the
// declaration (a variable's: to its VariableStatement).
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const SCRIPT_KINDS = {
  ".ts": ts.ScriptKind.TS, ".mts": ts.ScriptKind.TS, ".cts": ts.ScriptKind.TS,
  ".tsx": ts.ScriptKind.TSX, ".jsx": ts.ScriptKind.JSX,
  ".js": ts.ScriptKind.JS, ".mjs": ts.ScriptKind.JS, ".cjs": ts.ScriptKind.JS,
};
const K = ts.SyntaxKind;
const HEAD_MODIFIERS = [K.ExportKeyword, K.DefaultKeyword, K.DeclareKeyword, K.AbstractKeyword];
const KEYWORDS = [K.FunctionKeyword, K.ClassKeyword, K.InterfaceKeyword, K.EnumKeyword, K.NamespaceKeyword, K.ModuleKeyword];

function scopes(sf) {
  const out = [];
  const line = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const isFunction = (e) => !!e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));
  const nameOf = (n) => (ts.isStringLiteral(n) ? n.getText(sf).slice(1, -1) : n.getText(sf));
  // The direct children, those of the modifier list among them.
  const tokens = (node) =>
    node.getChildren(sf).flatMap((c) => (c.kind === K.SyntaxList ? c.getChildren(sf) : [c]))
      .filter((c) => c.kind !== K.JSDoc);
  // The first line of the decorators, head modifiers and last JSDoc of `node`.
  const headOf = (node, start) => {
    const lines = [start];
    for (const m of node.modifiers || []) {
      if (m.kind === K.Decorator || HEAD_MODIFIERS.includes(m.kind)) lines.push(line(m.getStart(sf)));
    }
    if (node.jsDoc && node.jsDoc.length) lines.push(line(node.jsDoc[node.jsDoc.length - 1].getStart(sf)));
    return Math.min(...lines);
  };
  const declaration = (node, kind, name) => {
    const at = tokens(node).find((c) => KEYWORDS.includes(c.kind)).getStart(sf);
    return { kind, name, at, start: line(at), end: line(node.end - 1), head: headOf(node, line(at)) };
  };
  const member = (node, name, endNode) => {
    const at = tokens(node).find((c) => c.kind !== K.Decorator).getStart(sf);
    return { kind: "function", name, at, start: line(at), end: line(endNode.end - 1), head: headOf(node, line(at)) };
  };

  function scope(node) {
    const body = !!node.body;
    if (ts.isFunctionDeclaration(node) && body) {
      return declaration(node, "function", node.name ? nameOf(node.name) : "default");
    }
    if (ts.isClassDeclaration(node)) return declaration(node, "class", node.name ? nameOf(node.name) : "default");
    if (ts.isInterfaceDeclaration(node)) return declaration(node, "interface", nameOf(node.name));
    if (ts.isEnumDeclaration(node)) return declaration(node, "enum", nameOf(node.name));
    // `declare global {}` is named by the Identifier `global`, without a keyword.
    if (ts.isModuleDeclaration(node) && ts.isIdentifier(node.name) && !(node.flags & ts.NodeFlags.GlobalAugmentation)) {
      // `namespace A.B {}`: B is the body of A, with no keyword of its own.
      let outer = node;
      while (ts.isModuleDeclaration(outer.parent) && outer.parent.body === outer) outer = outer.parent;
      return declaration(outer, "namespace", nameOf(node.name));
    }
    if ((ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) && body) {
      return member(node, nameOf(node.name), node);
    }
    if (ts.isConstructorDeclaration(node) && body) return member(node, "constructor", node);
    if ((ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node)) && isFunction(node.initializer)) {
      return member(node, nameOf(node.name), node.initializer);
    }
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer &&
        (isFunction(node.initializer) || ts.isClassExpression(node.initializer))) {
      const list = node.parent; // VariableDeclarationList
      const at = list.getStart(sf);
      const statement = ts.isVariableStatement(list.parent) ? list.parent : null;
      return {
        kind: ts.isClassExpression(node.initializer) ? "class" : "function",
        name: nameOf(node.name), at, start: line(at), end: line(node.initializer.end - 1),
        head: statement ? headOf(statement, line(at)) : line(at),
      };
    }
    return null;
  }

  function visit(node, prefix) {
    ts.forEachChild(node, (child) => {
      const s = scope(child);
      if (s) {
        const qualified = prefix ? `${prefix}.${s.name}` : s.name;
        out.push({ ...s, qualified });
        visit(child, qualified);
      } else {
        visit(child, prefix);
      }
    });
  }

  visit(sf, "");
  // A stable sort: ties keep document order, the outer first.
  out.sort((a, b) => a.at - b.at);
  return out.map((s) => ({
    kind: s.kind, name: s.name, qualified_name: s.qualified,
    start_line: s.start, end_line: s.end, head_line: s.head,
  }));
}

if (require.main === module) {
  const file = process.argv[2];
  const kind = SCRIPT_KINDS[path.extname(file).toLowerCase()];
  if (kind === undefined) throw new Error(`not a TypeScript or JavaScript file: ${file}`);
  const sf = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, kind);
  console.log(JSON.stringify(scopes(sf)));
}
