//! Golden stores: store folders written by released versions must stay readable forever.
//!
//! `tests/golden/v1/store/` is a store folder written by store layout 1 with index version 1,
//! `tests/golden/v1/store-index2/` one with index version 2 (small values in key rows),
//! `tests/golden/v1/store-index3/` one with index version 3 (a namespace with a zstd
//! dictionary); they are never rewritten (`write_missing_golden_store` creates what does not
//! exist).

use kompakt_store::{Store, StoreOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1")
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

/// The store folder written with index `version`.
fn golden_store(version: u32) -> PathBuf {
    golden_dir().join(if version == 1 {
        "store".to_string()
    } else {
        format!("store-index{version}")
    })
}

/// (namespace, key, value): small values (in key rows since index version 2), one of 4 KB
/// (in the object table), a large one (a file), odd keys, an empty value, and two keys sharing
/// one value.
fn entries(version: u32) -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut entries = vec![
        ("objects", "small", b"a small value".to_vec()),
        ("objects", "large", noise(200_000, 7)),
        ("objects", "", Vec::new()),
        ("other ns", "ключ/with..slashes\\and\0nul", b"unicode key".to_vec()),
        ("other ns", "same as small", b"a small value".to_vec()),
    ];
    if version >= 2 {
        entries.push(("objects", "medium", noise(4000, 9)));
    }
    if version >= 3 {
        // Compressed with the namespace's dictionary: two in key rows, one in the object table.
        entries.push(("logs", "a", log_record(1)));
        entries.push(("logs", "b", log_record(2)));
        entries.push(("logs", "medium", (0..300).flat_map(log_record).collect()));
    }
    entries
}

fn log_record(i: usize) -> Vec<u8> {
    format!(
        r#"{{"level":"{}","service":"checkout","user":{},"path":"/api/v2/orders/{}/items","status":{},"ms":{}}}"#,
        ["info", "warn", "debug"][i % 3],
        10_000 + i * 17,
        i * 31,
        [200, 201, 404, 500][i % 4],
        (i * 13) % 250
    )
    .into_bytes()
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
fn golden_stores_still_read() {
    // (index version, objects in the index, object files); version 1 holds the two equal
    // small values once, version 2 once per key.
    for (version, inline, files) in [(1, 3, 1), (2, 5, 1), (3, 8, 1)] {
        // Opening writes (WAL files, tmp/, the upgrade of an old index): work on a copy.
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("store");
        copy_dir(&golden_store(version), &copy);
        let opts = StoreOptions {
            create: false,
            ..StoreOptions::default()
        };
        let store = Store::open(&copy, opts).unwrap();
        for (ns, key, value) in entries(version) {
            assert_eq!(
                store.get_bytes(ns, key).unwrap().as_deref(),
                Some(&value[..]),
                "index {version}: {ns}/{key:?}"
            );
        }
        let info = store.info().unwrap();
        assert_eq!(
            (info.inline_objects, info.file_objects),
            (inline, files),
            "index {version}"
        );
        assert_eq!(
            store.hash_of("objects", "small").unwrap(),
            store.hash_of("other ns", "same as small").unwrap()
        );
        let report = store.verify(&mut |_| {}).unwrap();
        assert!(report.problems.is_empty(), "index {version}: {:?}", report.problems);
        assert_eq!(report.keys, entries(version).len() as u64);
        assert_eq!(store.gc().unwrap().objects, 0, "index {version}");
        let dictionaries = u64::from(version >= 3);
        assert_eq!(report.dictionaries, dictionaries, "index {version}");
        assert_eq!(store.info().unwrap().dictionaries, dictionaries, "index {version}");
        assert_eq!(store.dictionary("logs").unwrap().is_some(), version >= 3);
    }
}

#[test]
#[ignore]
fn write_missing_golden_store() {
    // Only the newest index versions can be written by this kompakt: 2 without a dictionary,
    // 3 with one.
    for version in [2, 3] {
        write_golden_store(version);
    }
}

fn write_golden_store(version: u32) {
    let path = golden_store(version);
    if path.exists() {
        return;
    }
    {
        let store = Store::open(&path, StoreOptions::default()).unwrap();
        if version >= 3 {
            let samples: Vec<Vec<u8>> = (100..1100).map(log_record).collect();
            let trial = store.train_dictionary("logs", &samples, None).unwrap();
            assert!(trial.adopted, "{trial:?}");
        }
        for (ns, key, value) in entries(version) {
            store.set_bytes(ns, key, &value).unwrap();
        }
    }
    // The last connection checkpointed the write-ahead log into index.sqlite.
    assert!(!path.join("index.sqlite-wal").exists());
    let _ = fs::remove_dir(path.join("tmp"));
}
