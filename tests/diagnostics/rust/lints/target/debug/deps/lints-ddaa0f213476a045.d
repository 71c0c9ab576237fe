/work/main/tests/diagnostics/rust/lints/target/debug/deps/lints-ddaa0f213476a045.d: src/lib.rs Cargo.toml

/work/main/tests/diagnostics/rust/lints/target/debug/deps/liblints-ddaa0f213476a045.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=
# env-dep:CLIPPY_CONF_DIR
