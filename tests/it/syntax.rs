//! Scopes against an independent oracle: for Python, Python's own `ast`
//! module, on every file of `tests/syntax-corpus/python/`; for Rust, `syn`
//! on `tests/syntax-corpus/rust/`; both also on the real files of
//! `tests/syntax-corpus/history/`. Target: 100% agreement on kind, name,
//! qualified name, start, end and head line (decorators, attributes, doc
//! comments).

use std::path::Path;
use std::process::Command;

use retry_run::syntax::{language_for, scopes};

fn corpus(lang: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax-corpus");
    let ext = if lang == "python" { ".py" } else { ".rs" };
    let mut files: Vec<_> = [root.join(lang), root.join("history")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).expect("corpus dir").map(|e| e.expect("entry").path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    files.sort();
    files
}

#[test]
fn python_scopes_agree_with_ast() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/py_scopes.py");
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED python_scopes_agree_with_ast: python3 is not installed");
        return;
    }
    let mut compared = 0;
    for file in corpus("python") {
        let out = Command::new("python3").arg(&oracle).arg(&file).output().expect("python3 runs");
        assert!(out.status.success(), "oracle failed on {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        let (want, got) = (oracle_scopes(&out.stdout), our_scopes(&file));
        assert_eq!(got, want, "{}", file.display());
        compared += want.len();
    }
    eprintln!("python: {compared} scopes agree with ast");
    assert!(compared >= 40, "only {compared} scopes compared");
}

pub(crate) mod rust_oracle {
    //! The oracle for Rust scopes: `syn`, an independent parser. The rules
    //! (written down in grammars/README.md): fns with a body
    //! (free, in impls, trait default methods, fns in fns and in closures),
    //! impls (named by the self type's last path segment), traits, inline
    //! mods, structs and unions with fields, enums. Not: trait method
    //! signatures, `mod m;`, unit structs, extern fns, closures, macro_rules!
    //! bodies. A scope starts on its keyword's line and ends on its closing
    //! brace (or the `;` of a tuple struct). Its head line is the item's
    //! first line: its first outer attribute or `///` doc comment, else its
    //! visibility or keyword.

    use proc_macro2::Span;
    use syn::visit::{self, Visit};

    pub(crate) type Scope = (String, String, String, u64, u64);

    #[derive(Default)]
    pub(crate) struct Oracle {
        stack: Vec<String>,
        pub out: Vec<Scope>,
        /// Each scope's head line, in the order of `out`.
        pub heads: Vec<u64>,
    }

    /// The first line of an item, its outer attributes included.
    fn head(item: &impl syn::spanned::Spanned) -> u64 {
        item.span().start().line as u64
    }

    impl Oracle {
        fn enter(&mut self, kind: &str, name: String, (head, start): (u64, Span), end: Span) {
            self.heads.push(head);
            let qualified = match self.stack.last() {
                Some(outer) => format!("{outer}::{name}"),
                None => name.clone(),
            };
            self.out.push((kind.into(), name, qualified.clone(), start.start().line as u64, end.end().line as u64));
            self.stack.push(qualified);
        }

        fn leave(&mut self) {
            self.stack.pop();
        }
    }

    fn last_segment(ty: &syn::Type) -> String {
        match ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
            syn::Type::Reference(r) => last_segment(&r.elem),
            syn::Type::Ptr(p) => last_segment(&p.elem),
            // Any other self type (a tuple, an array): its text as written.
            other => syn::spanned::Spanned::span(other).source_text().unwrap_or_default(),
        }
    }

    impl<'ast> Visit<'ast> for Oracle {
        fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
            self.enter(
                "function",
                i.sig.ident.to_string(),
                (head(i), i.sig.fn_token.span),
                i.block.brace_token.span.close(),
            );
            visit::visit_item_fn(self, i);
            self.leave();
        }
        fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
            self.enter(
                "function",
                i.sig.ident.to_string(),
                (head(i), i.sig.fn_token.span),
                i.block.brace_token.span.close(),
            );
            visit::visit_impl_item_fn(self, i);
            self.leave();
        }
        fn visit_trait_item_fn(&mut self, i: &'ast syn::TraitItemFn) {
            match &i.default {
                Some(block) => {
                    self.enter(
                        "function",
                        i.sig.ident.to_string(),
                        (head(i), i.sig.fn_token.span),
                        block.brace_token.span.close(),
                    );
                    visit::visit_trait_item_fn(self, i);
                    self.leave();
                }
                None => visit::visit_trait_item_fn(self, i),
            }
        }
        fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
            self.enter("impl", last_segment(&i.self_ty), (head(i), i.impl_token.span), i.brace_token.span.close());
            visit::visit_item_impl(self, i);
            self.leave();
        }
        fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
            self.enter("trait", i.ident.to_string(), (head(i), i.trait_token.span), i.brace_token.span.close());
            visit::visit_item_trait(self, i);
            self.leave();
        }
        fn visit_item_mod(&mut self, i: &'ast syn::ItemMod) {
            match &i.content {
                Some((brace, _)) => {
                    self.enter("mod", i.ident.to_string(), (head(i), i.mod_token.span), brace.span.close());
                    visit::visit_item_mod(self, i);
                    self.leave();
                }
                None => visit::visit_item_mod(self, i),
            }
        }
        fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
            let end = match (&i.fields, &i.semi_token) {
                (syn::Fields::Named(f), _) => Some(f.brace_token.span.close()),
                (syn::Fields::Unnamed(_), Some(semi)) => Some(semi.span),
                _ => None,
            };
            match end {
                Some(end) => {
                    self.enter("struct", i.ident.to_string(), (head(i), i.struct_token.span), end);
                    visit::visit_item_struct(self, i);
                    self.leave();
                }
                None => visit::visit_item_struct(self, i),
            }
        }
        fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
            self.enter("enum", i.ident.to_string(), (head(i), i.enum_token.span), i.brace_token.span.close());
            visit::visit_item_enum(self, i);
            self.leave();
        }
        fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
            self.enter("struct", i.ident.to_string(), (head(i), i.union_token.span), i.fields.brace_token.span.close());
            visit::visit_item_union(self, i);
            self.leave();
        }
    }
}

#[test]
fn rust_scopes_agree_with_syn() {
    use syn::visit::Visit;
    let mut compared = 0;
    for file in corpus("rust") {
        let text = std::fs::read_to_string(&file).expect("corpus file");
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: syn cannot parse: {e}", file.display()));
        let mut oracle = rust_oracle::Oracle::default();
        oracle.visit_file(&parsed);
        let mut want: Vec<(rust_oracle::Scope, u64)> = oracle.out.into_iter().zip(oracle.heads).collect();
        let lang = language_for(b"x.rs").expect("rust");
        let mut got: Vec<(rust_oracle::Scope, u64)> = scopes(lang, text.as_bytes())
            .expect("parses")
            .into_iter()
            .map(|s| ((s.kind, s.name, s.qualified_name, s.start_line as u64, s.end_line as u64), s.head_line as u64))
            .collect();
        let order = |(a, _): &(rust_oracle::Scope, u64), (b, _): &(rust_oracle::Scope, u64)| {
            a.3.cmp(&b.3).then(b.4.cmp(&a.4)).then(a.2.cmp(&b.2))
        };
        want.sort_by(order);
        got.sort_by(order);
        assert_eq!(got, want, "{}", file.display());
        compared += want.len();
    }
    eprintln!("rust: {compared} scopes agree with syn");
    assert!(compared >= 25, "only {compared} scopes compared");
}

/// A scope as the oracles print it and as compared: kind, name, qualified
/// name, start, end and head line.
type Scope = (String, String, String, u64, u64, u64);

/// The scopes an oracle printed (a JSON array).
fn oracle_scopes(json: &[u8]) -> Vec<Scope> {
    let v: serde_json::Value = serde_json::from_slice(json).expect("oracle JSON");
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_else(|| panic!("{k} in {s}")).to_string();
            let line = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{k} in {s}"));
            (
                text("kind"),
                text("name"),
                text("qualified_name"),
                line("start_line"),
                line("end_line"),
                line("head_line"),
            )
        })
        .collect()
}

/// retry-run's scopes of `file`.
fn our_scopes(file: &Path) -> Vec<Scope> {
    let source = std::fs::read(file).expect("corpus file");
    let lang = language_for(file.to_str().expect("utf-8 path").as_bytes()).expect("a language");
    scopes(lang, &source)
        .expect("parses")
        .into_iter()
        .map(|s| (s.kind, s.name, s.qualified_name, s.start_line as u64, s.end_line as u64, s.head_line as u64))
        .collect()
}

/// Every file under `dir`, at any depth, whose name ends with one of `exts`.
fn files_under(dir: &Path, exts: &[&str]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("corpus dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// TypeScript, TSX and JavaScript scopes against the TypeScript compiler's
/// own parser (`tests/oracle/ts_scopes.js`, with the `typescript` package
/// of the CI cache) on `tests/syntax-corpus/typescript/` and
/// `javascript/`: real files of mobx and preact (their READMEs say which
/// commit) and a sample of every rule. Kind, name, qualified name, start,
/// end and head line agree on every scope.
#[test]
fn typescript_and_javascript_scopes_agree_with_the_compiler() {
    let modules = match crate::support::tools::js_typescript() {
        Ok(m) => m,
        Err(why) => return crate::support::tools::skipped(&why),
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let oracle = root.join("tests/oracle/ts_scopes.js");
    let mut compared = [0usize; 2];
    let mut wrong: Vec<String> = Vec::new();
    for (i, lang) in ["typescript", "javascript"].iter().enumerate() {
        let files =
            files_under(&root.join("tests/syntax-corpus").join(lang), &[".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"]);
        for file in files {
            let out =
                Command::new("node").arg(&oracle).arg(&file).env("NODE_PATH", &modules).output().expect("node runs");
            assert!(
                out.status.success(),
                "oracle failed on {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let (want, got) = (oracle_scopes(&out.stdout), our_scopes(&file));
            let missing: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
            let extra: Vec<_> = got.iter().filter(|g| !want.contains(g)).collect();
            if !missing.is_empty() || !extra.is_empty() {
                wrong.push(format!("{}:\n  missing {missing:?}\n  extra {extra:?}", file.display()));
            }
            compared[i] += want.len();
        }
    }
    assert!(wrong.is_empty(), "{} files disagree:\n{}", wrong.len(), wrong.join("\n"));
    eprintln!("typescript: {} scopes, javascript: {} scopes agree with the compiler", compared[0], compared[1]);
    assert!(compared[0] >= 100 && compared[1] >= 100 && compared[0] + compared[1] >= 300, "{compared:?}");
}
