/work/main/tests/diagnostics/rust/lints/target/debug/deps/lints-374c7c4b27608ff6.d: src/lib.rs

/work/main/tests/diagnostics/rust/lints/target/debug/deps/liblints-374c7c4b27608ff6.rlib: src/lib.rs

/work/main/tests/diagnostics/rust/lints/target/debug/deps/liblints-374c7c4b27608ff6.rmeta: src/lib.rs

src/lib.rs:
