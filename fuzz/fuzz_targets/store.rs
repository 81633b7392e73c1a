//! Hostile store files: byte 0 chooses what the rest becomes.
//! - even: the configuration text, parsed by `Config::parse`;
//! - odd: the object file of key "k" in a real store, then read back with `get_bytes` and
//!   checked with `verify`.
//! Neither may panic, hang or allocate without bound; a damaged object must be reported.
#![no_main]

use kompakt_store::{Config, Store, StoreOptions};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A store whose key "k" is a large (file) object; returns the store and the object's path.
fn template() -> &'static (PathBuf, PathBuf) {
    static STORE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    STORE.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("kompakt-fuzz-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = Store::open(&root, StoreOptions::default()).expect("create store");
        // Incompressible, so that the object is a file rather than inline in the index.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<u8> = (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let hash = store.set_bytes("objects", "k", &data).expect("set");
        let hex = hash.to_string();
        let object = root.join("objects").join(&hex[..2]).join(format!("{hex}.kpk"));
        assert!(object.is_file(), "the template object is a file");
        (root, object)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    if choice % 2 == 0 {
        let _ = Config::parse(rest, Path::new("kompakt-store.json"));
        return;
    }
    let (root, object) = template();
    std::fs::write(object, rest).expect("write object");
    let opts = StoreOptions {
        create: false,
        ..StoreOptions::default()
    };
    let store = Store::open(root, opts).expect("reopen");
    let read = store.get_bytes("objects", "k");
    let report = store.verify(&mut |_| {}).expect("verify runs");
    // Any change to a valid object is damage: either the read fails or verify says so, unless
    // the bytes still form a file with the same content.
    if read.is_err() {
        assert!(!report.problems.is_empty(), "a failed read must show in verify");
    }
});
