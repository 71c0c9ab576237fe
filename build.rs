//! Build script: links the `retry-run` executable at a fixed address
//! (not position-independent) on Linux with glibc.
//!
//! Every confined process starts this executable twice (`retry-run
//! sandbox` outside bubblewrap, `--inner` inside it). Position-independent,
//! its start applies about 24,000 relocations, which write into about 110
//! pages of its read-only-after-relocation data, each a copy-on-write
//! page fault: about 0.3 ms of CPU per start of the 0.8 ms it costs here
//! (`bench/README.md`, the floor's third pass). At a fixed address there
//! is nothing to relocate. What is given up is the randomised address of
//! the executable's own code and data; the stack, the heap, the shared
//! libraries and every other mapping stay randomised. The library and
//! the tests are built as before.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=retry-run=-no-pie");
    }
}
