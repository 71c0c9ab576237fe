#!/usr/bin/env python3
"""The oracle for Python scopes: Python's own `ast` module.

Prints, as JSON, every function and class of a file: kind, name,
qualified name (enclosing functions and classes joined by "."), the line of
its `def`/`class` keyword, its last line, and its head line: the first line
of its decorators (the keyword's line without any). `ast` reports `lineno`
on the keyword line, and each decorator expression on the line of its `@`.
"""
import ast
import json
import sys


def scopes(tree):
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                qualified = f"{prefix}.{child.name}" if prefix else child.name
                head = min([d.lineno for d in child.decorator_list] + [child.lineno])
                out.append({"kind": kind, "name": child.name, "qualified_name": qualified,
                            "start_line": child.lineno, "end_line": child.end_lineno,
                            "head_line": head})
                visit(child, qualified)
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        source = f.read()
    print(json.dumps(scopes(ast.parse(source, sys.argv[1]))))
