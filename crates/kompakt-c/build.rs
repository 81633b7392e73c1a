//! Names the shared library after the C API's version, so that a program linked against
//! API version N never loads a library of another: `libkompakt_c.so.N` on Linux and the
//! other ELF systems (the SONAME), `@rpath/libkompakt_c.N.dylib` on macOS (the install name).
//! `install.sh` installs the library under that name, with the usual links to it.

/// `KPK_API_VERSION` (`src/status.rs`, `include/kompakt.h`; a test checks they agree).
const API_VERSION: u32 = 2;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match os.as_str() {
        "macos" | "ios" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libkompakt_c.{API_VERSION}.dylib")
        }
        "windows" => {}
        _ => println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkompakt_c.so.{API_VERSION}"),
    }
}
