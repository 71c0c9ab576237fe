//! Links GCC's unwinder into retry-run's executables instead of loading
//! `libgcc_s.so.1` at every start, and lays out the functions a confined
//! start runs together ([`startup_order`]).
//!
//! Rust's standard library asks the linker for `-lgcc_s` on Linux with
//! glibc. Loading that library, and its constructor (which asks the CPU
//! what it is, an instruction a virtual machine traps), costs about 0.16 ms
//! per process, and retry-run starts two of its own processes for every
//! confined one (docs/sandbox.md, "Cost"). Here `-lgcc_s` finds a linker
//! script first that names the static unwinder `libgcc_eh.a` instead, which
//! holds the same `_Unwind_*` functions: panics and backtraces work as
//! before, and nothing else in retry-run uses `libgcc_s`.
//!
//! Only where the C compiler that links (`cc`, or cargo's configured
//! linker) has `libgcc_eh.a`; anywhere else the build links as Rust does
//! by default.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || static_crt {
        return;
    }
    startup_order(&var("CARGO_MANIFEST_DIR"), &var("CARGO_ENCODED_RUSTFLAGS"));
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    let Ok(out) = Command::new(&linker).arg("-print-file-name=libgcc_eh.a").output() else { return };
    let found = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !found.is_absolute() || !found.is_file() {
        return;
    }
    let Some(dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    if std::fs::write(dir.join("libgcc_s.so"), "INPUT(-lgcc_eh)\n").is_ok() {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// The functions a confined start runs, laid out together at the head of
/// the code: `build/startup-order.ld` (written by `bench/startup_order.py`)
/// puts their sections in an output section inserted before `.text`. A
/// start then maps the stretches of code it runs in about 10 faults
/// instead of 55 (docs/sandbox.md, "Cost"). For the executables only, and
/// not where the flags name a linker without `INSERT` in its scripts
/// (mold, wild); GNU ld and LLD (Rust's default here) have it.
fn startup_order(manifest_dir: &str, rustflags: &str) {
    println!("cargo:rerun-if-changed=build/startup-order.ld");
    if rustflags.contains("mold") || rustflags.contains("wild") {
        return;
    }
    let script = PathBuf::from(manifest_dir).join("build").join("startup-order.ld");
    if script.is_file() {
        for arg in ["-Xlinker", "-T", "-Xlinker"] {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
        println!("cargo:rustc-link-arg-bins={}", script.display());
    }
}
