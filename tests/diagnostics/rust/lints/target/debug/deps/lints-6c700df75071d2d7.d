/work/main/tests/diagnostics/rust/lints/target/debug/deps/lints-6c700df75071d2d7.d: src/lib.rs

/work/main/tests/diagnostics/rust/lints/target/debug/deps/lints-6c700df75071d2d7: src/lib.rs

src/lib.rs:
