//! Golden store: a store folder written by layout 1 must stay readable forever.
//!
//! `tests/golden/v1/store/` is never rewritten; `cargo test --release --test golden_store --
//! --ignored write_missing_golden_store` creates it only if it does not exist.

use kompakt::store::{Store, StoreOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn golden_store() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/store")
}

fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// (namespace, key, value): a small (inline) and a large (file) object, odd keys, an empty
/// value, and two keys sharing one object.
fn entries() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    vec![
        ("objects", "small", b"a small value".to_vec()),
        ("objects", "large", noise(200_000, 7)),
        ("objects", "", Vec::new()),
        ("other ns", "ключ/with..slashes\\and\0nul", b"unicode key".to_vec()),
        ("other ns", "same as small", b"a small value".to_vec()),
    ]
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn golden_store_still_reads() {
    // Opening writes (WAL files, tmp/): work on a copy.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("store");
    copy_dir(&golden_store(), &copy);
    let opts = StoreOptions {
        create: false,
        ..StoreOptions::default()
    };
    let store = Store::open(&copy, opts).unwrap();
    for (ns, key, value) in entries() {
        assert_eq!(
            store.get_bytes(ns, key).unwrap().as_deref(),
            Some(&value[..]),
            "{ns}/{key:?}"
        );
    }
    let info = store.info().unwrap();
    assert_eq!((info.inline_objects, info.file_objects), (3, 1));
    assert_eq!(
        store.hash_of("objects", "small").unwrap(),
        store.hash_of("other ns", "same as small").unwrap()
    );
    let report = store.verify(&mut |_| {}).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.keys, 5);
}

#[test]
#[ignore]
fn write_missing_golden_store() {
    let path = golden_store();
    if path.exists() {
        return;
    }
    {
        let store = Store::open(&path, StoreOptions::default()).unwrap();
        for (ns, key, value) in entries() {
            store.set_bytes(ns, key, &value).unwrap();
        }
    }
    // The last connection checkpointed the write-ahead log into index.sqlite.
    assert!(!path.join("index.sqlite-wal").exists());
    let _ = fs::remove_dir(path.join("tmp"));
}
