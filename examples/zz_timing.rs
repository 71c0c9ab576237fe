use std::time::Instant;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let mut files = Vec::new();
    for e in walk(std::path::Path::new(&dir)) {
        files.push(std::fs::read(&e).unwrap());
        if files.len() >= 1000 {
            break;
        }
    }
    let lang = retry_run::syntax::language_for(b"x.py").unwrap();
    let t = Instant::now();
    let mut n = 0;
    for f in &files {
        n += retry_run::syntax::scopes(lang, f).unwrap().len();
    }
    println!("{} files, {n} scopes, {:?}", files.len(), t.elapsed());
    parse_only(&files);
}
fn walk(p: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut st = vec![p.to_path_buf()];
    while let Some(d) = st.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with(".git") {
                    st.push(p)
                }
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p)
            }
        }
    }
    out
}
#[allow(dead_code)]
fn parse_only(files: &[Vec<u8>]) {
    let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang).unwrap();
    let t = Instant::now();
    let mut n = 0;
    for f in files {
        let tree = p.parse(f, None).unwrap();
        n += tree.root_node().child_count();
    }
    println!("parse only: {n} {:?}", t.elapsed());
}
