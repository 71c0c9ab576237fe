fn main() {
    for p in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&p).unwrap();
        let f = retry_run::diagnostics::detect::detect(&text);
        println!("== {p}: {}", f.name());
        for d in retry_run::diagnostics::parse(f, &text) {
            println!("  {}:{}:{} {:?} {} | {}", d.path.unwrap_or_default(), d.line.map_or("-".into(), |l| l.to_string()), d.column.map_or("-".into(), |l| l.to_string()), d.code, d.severity.as_str(), d.message.replace('\n', "⏎"));
        }
    }
}
