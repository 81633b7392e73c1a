use super::*;
use crate::setup::create_store;
use kompakt::codec::CodecSpec;
use kompakt_fs::PacedOutput;
use std::collections::HashMap;

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().join("s"), StoreOptions::default()).unwrap()
}

/// Compressible but large enough to leave the index.
fn big(seed: u64, len: usize) -> Vec<u8> {
    mixed(seed, len, 3, 1000)
}

/// One byte in `every` is noise; the others count up by one every `run` bytes.
fn mixed(seed: u64, len: usize, every: usize, run: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % every == 0 {
                x as u8
            } else {
                (i / run) as u8
            }
        })
        .collect()
}

#[test]
fn small_and_large_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let large = big(1, 3 << 20);
    s.set_bytes("objects", "small", b"tiny").unwrap();
    s.set_bytes("objects", "large", &large).unwrap();
    s.set_bytes("objects", "empty", b"").unwrap();
    assert_eq!(s.get_bytes("objects", "small").unwrap().unwrap(), b"tiny");
    assert_eq!(s.get_bytes("objects", "large").unwrap().unwrap(), large);
    assert_eq!(s.get_bytes("objects", "empty").unwrap().unwrap(), b"");
    assert_eq!(s.get_bytes("objects", "missing").unwrap(), None);
    assert_eq!(s.get_bytes("other", "small").unwrap(), None);
    let info = s.info().unwrap();
    assert_eq!((info.inline_objects, info.file_objects), (2, 1));
    assert!(s.get("objects", "small").unwrap().unwrap().inline);
    assert!(!s.get("objects", "large").unwrap().unwrap().inline);
    assert_eq!(s.keys("objects").unwrap(), ["empty", "large", "small"]);
    let report = s.verify(&mut |_| {}).unwrap();
    assert_eq!(report.problems, Vec::<String>::new());
    assert_eq!((report.objects, report.keys), (3, 3));
}

#[test]
fn equal_content_is_stored_once_whatever_the_codec_or_threads() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let data = big(2, 1 << 20);
    let mut hashes = Vec::new();
    for (i, (codec, threads, block)) in [("zstd:1", 1, 1 << 20), ("lz4", 4, 64 << 10), ("none", 2, 256 << 10)]
        .into_iter()
        .enumerate()
    {
        let opts = WriteOptions::default()
            .codec(CodecSpec::parse(codec).unwrap())
            .threads(threads)
            .block_size(block);
        let obj = s.prepare(&[(&data, opts.stream_options())], b"meta", opts).unwrap();
        hashes.push(s.commit("objects", &format!("k{i}"), obj).unwrap());
    }
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "{hashes:?}");
    assert_eq!(hashes[0], ContentHash::of(&[&data], b"meta"));
    let info = s.info().unwrap();
    assert_eq!(info.inline_objects + info.file_objects, 1);
}

#[test]
fn by_default_only_the_default_codec_adapts() {
    let dir = tempfile::tempdir().unwrap();
    let zstd9: CodecSpec = "zstd:9".parse().unwrap();
    let s = Store::open(dir.path().join("default"), StoreOptions::default()).unwrap();
    assert_eq!(s.config().codec, CodecSpec::default());
    assert!(s.adapts(&s.write_options(None)), "the speed-first default adapts");
    assert!(s.writer(s.write_options(None)).unwrap().adapts());
    assert!(!s.adapts(&s.write_options(Some(zstd9))), "a chosen codec is kept");
    assert!(!s.writer(s.write_options(Some(zstd9))).unwrap().adapts());
    // A store created with another default codec does not adapt, unless asked to.
    let chosen = StoreOptions {
        codec: Some(zstd9),
        ..StoreOptions::default()
    };
    let s = Store::open(dir.path().join("chosen"), chosen).unwrap();
    assert!(!s.adapts(&s.write_options(None)));
    drop(s);
    let reopened = Store::open(dir.path().join("chosen"), StoreOptions::default()).unwrap();
    assert!(
        !reopened.adapts(&reopened.write_options(None)),
        "the recorded codec counts"
    );
    let asked = StoreOptions {
        adapt: Some(true),
        ..StoreOptions::default()
    };
    let s = Store::open(dir.path().join("chosen"), asked).unwrap();
    assert!(s.adapts(&s.write_options(None)));
    let never = StoreOptions {
        adapt: Some(false),
        ..StoreOptions::default()
    };
    let s = Store::open(dir.path().join("default"), never).unwrap();
    assert!(!s.adapts(&s.write_options(None)));
}

#[test]
fn an_adaptive_store_keeps_the_content_and_its_hash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let opts = StoreOptions {
        adapt: Some(true),
        codec: Some("zstd:3".parse().unwrap()),
        ..StoreOptions::default()
    };
    let s = Store::open(&path, opts).unwrap();
    assert!(
        s.spill(&s.write_options(None)).progress().is_some(),
        "an adaptive store's objects report progress"
    );
    assert!(s.writer(s.write_options(None)).unwrap().adapts());
    // Half noise, half slowly changing: compresses, yet leaves many MiB to write back, so on
    // Linux the write-back starts and the writer adapts (which blocks go raw depends on the
    // disk's speed, so it is not asserted; the decisions are tested in `stream::writer`).
    let data = mixed(7, 24 << 20, 2, 1 << 16);
    let hash = s.set_bytes("objects", "big", &data).unwrap();
    assert_eq!(hash, ContentHash::of(&[&data], b""));
    assert_eq!(s.get_bytes("objects", "big").unwrap().unwrap(), data);
    s.set_bytes("objects", "small", b"tiny").unwrap();
    assert_eq!(s.get_bytes("objects", "small").unwrap().unwrap(), b"tiny");
    assert_eq!(s.verify(&mut |_| {}).unwrap().problems, Vec::<String>::new());
    // A plain store reads it, and stores equal content under the same hash (once).
    drop(s);
    let never = StoreOptions {
        adapt: Some(false),
        ..StoreOptions::default()
    };
    let plain = Store::open(&path, never).unwrap();
    assert!(plain.spill(&plain.write_options(None)).progress().is_none());
    assert!(!plain.writer(plain.write_options(None)).unwrap().adapts());
    assert_eq!(plain.get_bytes("objects", "big").unwrap().unwrap(), data);
    assert_eq!(plain.set_bytes("objects", "again", &data).unwrap(), hash);
    assert_eq!(plain.info().unwrap().file_objects, 1);
}

#[test]
fn any_string_is_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let long = "k".repeat(100_000);
    let keys = ["", "/", "..", "a/b\\c", "nul\0byte", "ключ 🔑", " ", long.as_str()];
    for (i, k) in keys.iter().enumerate() {
        s.set_bytes("ns/with:odd chars", k, &[i as u8]).unwrap();
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(
            s.get_bytes("ns/with:odd chars", k).unwrap().unwrap(),
            [i as u8],
            "{k:?}"
        );
    }
    assert_eq!(s.len("ns/with:odd chars").unwrap(), keys.len() as u64);
}

#[test]
fn last_writer_wins_and_delete_then_gc() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.set_bytes("objects", "k", &big(3, 1 << 20)).unwrap();
    let second = big(4, 1 << 20);
    s.set_bytes("objects", "k", &second).unwrap();
    assert_eq!(s.get_bytes("objects", "k").unwrap().unwrap(), second);
    s.set_bytes("objects", "gone", b"x").unwrap();
    assert!(s.delete("objects", "gone").unwrap());
    assert!(!s.delete("objects", "gone").unwrap());
    let report = s.gc().unwrap();
    // The first large value; the small one was held in its key's row and went with it. A
    // collected file is not counted again as an orphan.
    assert_eq!((report.objects, report.orphan_files), (1, 0), "{report:?}");
    assert_eq!(s.get_bytes("objects", "k").unwrap().unwrap(), second);
    let info = s.info().unwrap();
    assert_eq!((info.inline_objects, info.file_objects), (0, 1));
    assert_eq!(s.gc().unwrap(), GcReport::default());
    assert_eq!(s.clear(None).unwrap(), 1);
    s.gc().unwrap();
    assert_eq!(
        fs::read_dir(dir.path().join("s/objects"))
            .unwrap()
            .flat_map(|d| fs::read_dir(d.unwrap().path()).unwrap())
            .count(),
        0
    );
}

#[test]
fn gc_removes_orphans_and_dead_writers_temps_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let orphan = objects::object_path(s.root(), ContentHash(7));
    fs::create_dir_all(orphan.parent().unwrap()).unwrap();
    fs::write(&orphan, b"left by a writer that died").unwrap();
    let foreign = s.root().join("objects/README");
    fs::write(&foreign, b"not ours").unwrap();
    let live = TempObject::create(&s.root().join("tmp")).unwrap();
    let dead = s.root().join("tmp/123.0.0.tmp");
    fs::write(&dead, b"x").unwrap();
    let young = s.root().join("tmp/124.0.0.tmp");
    fs::write(&young, b"x").unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for p in [&dead, &live.path] {
        fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let report = s.gc().unwrap();
    assert_eq!((report.orphan_files, report.temp_files), (1, 1), "{report:?}");
    assert!(!orphan.exists() && !dead.exists());
    assert!(foreign.exists() && young.exists() && live.path.exists());
}

#[test]
fn gc_never_removes_files_through_a_symbolic_link() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    let precious = |name: &str| {
        let p = elsewhere.path().join(name);
        fs::write(&p, b"precious").unwrap();
        fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        p
    };
    let s = store(&dir);

    // tmp/ a link to a folder of old files: the store is refused, nothing removed.
    let in_tmp = precious("123.0.0.tmp");
    fs::remove_dir(s.root().join("tmp")).unwrap();
    symlink(elsewhere.path(), s.root().join("tmp")).unwrap();
    let e = s.gc().unwrap_err();
    assert!(
        e.to_string().contains("symbolic link") && e.to_string().contains("tmp"),
        "{e}"
    );
    assert!(in_tmp.exists());
    fs::remove_file(s.root().join("tmp")).unwrap();
    fs::create_dir(s.root().join("tmp")).unwrap();

    // objects/ab a link, holding a file named like an orphan object: never listed or removed.
    let hash = ContentHash((0xab << 120) | 7);
    let object = objects::object_path(s.root(), hash);
    let name = object.file_name().unwrap().to_str().unwrap().to_owned();
    let orphan_lookalike = precious(&name);
    fs::create_dir_all(s.root().join("objects")).unwrap();
    symlink(elsewhere.path(), object.parent().unwrap()).unwrap();
    assert!(object.exists(), "the link leads to the look-alike");
    s.gc().unwrap();
    assert!(orphan_lookalike.exists());

    // A value whose object would be collected through the link: gc refuses, the file stays.
    fs::remove_file(object.parent().unwrap()).unwrap();
    let value = big(9, 1 << 20);
    s.set_bytes("objects", "k", &value).unwrap();
    let stored = s.info().unwrap();
    assert_eq!(stored.file_objects, 1);
    let path = fs::read_dir(s.root().join("objects"))
        .unwrap()
        .flat_map(|d| fs::read_dir(d.unwrap().path()).unwrap())
        .next()
        .unwrap()
        .unwrap()
        .path();
    let folder = path.parent().unwrap().to_path_buf();
    let real = dir.path().join("moved");
    fs::rename(&folder, &real).unwrap();
    symlink(&real, &folder).unwrap();
    assert!(s.delete("objects", "k").unwrap());
    let e = s.gc().unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(real.join(path.file_name().unwrap()).exists());
}

#[test]
fn configuration_must_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let lz4 = CodecSpec::parse("lz4").unwrap();
    let opts = StoreOptions {
        codec: Some(lz4),
        ..StoreOptions::default()
    };
    Store::open(&path, opts)
        .unwrap()
        .set_bytes("objects", "a", b"aaaa")
        .unwrap();
    assert_eq!(Store::open(&path, StoreOptions::default()).unwrap().config().codec, lz4);
    let zstd = StoreOptions {
        codec: Some(CodecSpec::parse("zstd").unwrap()),
        ..opts
    };
    let err = Store::open(&path, zstd).unwrap_err().to_string();
    assert!(err.contains("created with default codec lz4"), "{err}");
    let s = Store::open(&path, opts).unwrap();
    s.set_default_codec(CodecSpec::parse("zstd").unwrap()).unwrap();
    let s = Store::open(&path, zstd).unwrap();
    assert_eq!(s.get_bytes("objects", "a").unwrap().unwrap(), b"aaaa");

    let missing = StoreOptions {
        create: false,
        ..StoreOptions::default()
    };
    let err = Store::open(dir.path().join("nothing"), missing)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no kompakt store"), "{err}");
    let busy = dir.path().join("busy");
    fs::create_dir_all(&busy).unwrap();
    fs::write(busy.join("data.csv"), b"1,2").unwrap();
    let err = Store::open(&busy, StoreOptions::default()).unwrap_err().to_string();
    assert!(err.contains("not empty and not a kompakt store"), "{err}");
    let config = path.join(CONFIG_FILE);
    let newer = fs::read_to_string(&config)
        .unwrap()
        .replace("\"version\": 1", "\"version\": 9");
    fs::write(&config, newer).unwrap();
    let err = Store::open(&path, StoreOptions::default()).unwrap_err().to_string();
    assert!(err.contains("upgrade kompakt"), "{err}");
}

#[test]
fn verify_finds_damage() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let large = big(5, 2 << 20);
    let h_large = s.set_bytes("objects", "large", &large).unwrap();
    let h_small = s.set_bytes("objects", "small", b"some small value").unwrap();
    let h_medium = s.set_bytes("objects", "medium", &big(6, 8 << 10)).unwrap();
    let path = objects::object_path(s.root(), h_large);
    let mut bytes = fs::read(&path).unwrap();
    bytes[100] ^= 1;
    fs::write(&path, &bytes).unwrap();
    {
        let conn = s.write().unwrap();
        // The small value is in its key's row, the medium one in the object table.
        let small: Vec<u8> = conn
            .query_row("SELECT data FROM keys_v2 WHERE key = 'small'", [], |r| r.get(0))
            .unwrap();
        let medium = index::inline_data(&conn, h_medium).unwrap().unwrap();
        assert!(index::inline_data(&conn, h_small).unwrap().is_none());
        for (mut data, table, column, id) in [
            (small, "keys_v2", "key", "small".as_bytes().to_vec()),
            (medium, "objects", "hash", h_medium.to_bytes().to_vec()),
        ] {
            let n = data.len();
            data[n / 2] ^= 0x40;
            let sql = format!("UPDATE {table} SET data = ?1 WHERE {column} = ?2");
            let id: rusqlite::types::Value = if table == "keys_v2" {
                String::from_utf8(id).unwrap().into()
            } else {
                id.into()
            };
            assert_eq!(conn.execute(&sql, rusqlite::params![data, id]).unwrap(), 1);
        }
    }
    let report = s.verify(&mut |_| {}).unwrap();
    assert_eq!(report.problems.len(), 3, "{:?}", report.problems);
    assert!(
        report.problems.iter().any(|p| p.contains("key \"small\"")),
        "{:?}",
        report.problems
    );
    for key in ["large", "small", "medium"] {
        assert!(s.get_bytes("objects", key).unwrap_err().is_corruption(), "{key}");
    }
    fs::remove_file(&path).unwrap();
    let err = s.get("objects", "large").unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn small_values_live_in_their_key_row() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let small = b"small".to_vec();
    let medium = big(7, 4 << 10);
    let h_small = s.set_bytes("objects", "a", &small).unwrap();
    assert_eq!(s.set_bytes("other", "b", &small).unwrap(), h_small);
    let count = |sql: &str| -> i64 { s.read().unwrap().query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM keys_v2 WHERE data IS NOT NULL"), 2);
    assert_eq!(count("SELECT count(*) FROM objects"), 0);
    let info = s.info().unwrap();
    assert_eq!((info.inline_objects, info.file_objects, info.raw_bytes), (2, 0, 10));
    let entries = s.entries(None).unwrap();
    assert_eq!(entries[0].raw_size, 5);
    assert!(entries[0].stored_size > 5 && entries[0].stored_size <= KEY_VALUE_MAX as u64);
    let obj = s.get("objects", "a").unwrap().unwrap();
    assert_eq!((obj.hash, obj.raw_size, obj.inline), (h_small, 5, true));

    // Repointed at an object row, the key drops its value; and back again.
    let h_medium = s.set_bytes("objects", "a", &medium).unwrap();
    assert_eq!(count("SELECT count(*) FROM keys_v2 WHERE data IS NOT NULL"), 1);
    assert_eq!(s.get_bytes("objects", "a").unwrap().unwrap(), medium);
    assert_eq!(s.hash_of("objects", "a").unwrap(), Some(h_medium));
    s.set_bytes("objects", "a", &small).unwrap();
    assert_eq!(s.get_bytes("objects", "a").unwrap().unwrap(), small);
    // The medium object is unreferenced now; a key value keeps no object alive either.
    assert_eq!(s.gc().unwrap().objects, 1);
    assert_eq!(count("SELECT count(*) FROM objects"), 0);
    let report = s.verify(&mut |_| {}).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.keys, report.objects, report.raw_bytes), (2, 2, 10));
    assert!(s.delete("other", "b").unwrap());
    assert_eq!(s.info().unwrap().inline_objects, 1);
}

#[test]
fn an_index_of_version_1_is_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let h_small;
    {
        let s = Store::open(&root, StoreOptions::default()).unwrap();
        h_small = s.set_bytes("objects", "small", b"tiny").unwrap();
        s.set_bytes("objects", "file", &big(8, 1 << 20)).unwrap();
        // Back to version 1: its key table, the small value moved to the object table.
        let conn = s.write().unwrap();
        let data: Vec<u8> = conn
            .query_row("SELECT data FROM keys_v2 WHERE key = 'small'", [], |r| r.get(0))
            .unwrap();
        conn.execute_batch(
            "CREATE TABLE keys1 (namespace TEXT NOT NULL, key TEXT NOT NULL, hash BLOB NOT NULL,
                 PRIMARY KEY (namespace, key)) WITHOUT ROWID;
             INSERT INTO keys1 SELECT namespace, key, hash FROM keys_v2;
             DROP TABLE keys_v2; ALTER TABLE keys1 RENAME TO keys; PRAGMA user_version = 1;",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO objects (hash, raw_size, stored_size, data) VALUES (?1, 4, ?2, ?3)",
            rusqlite::params![&h_small.to_bytes()[..], data.len() as i64, data],
        )
        .unwrap();
    }
    // A process of an older kompakt with the store open: after the upgrade its writes fail
    // instead of landing in rows it does not understand.
    let old_process = rusqlite::Connection::open(root.join(INDEX_FILE)).unwrap();
    old_process
        .query_row("SELECT count(*) FROM keys", [], |r| r.get::<_, i64>(0))
        .unwrap();
    let s = Store::open(&root, StoreOptions::default()).unwrap();
    let version: i64 = s
        .read()
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, INDEX_VERSION);
    let err = old_process
        .execute(
            "INSERT INTO keys (namespace, key, hash) VALUES ('objects', 'x', x'00')",
            [],
        )
        .unwrap_err();
    assert!(err.to_string().contains("no such table"), "{err}");
    drop(old_process);
    assert_eq!(s.get_bytes("objects", "small").unwrap().unwrap(), b"tiny");
    assert_eq!(s.get_bytes("objects", "file").unwrap().unwrap(), big(8, 1 << 20));
    s.set_bytes("objects", "new", b"new value").unwrap();
    assert_eq!(s.get_bytes("objects", "new").unwrap().unwrap(), b"new value");
    let report = s.verify(&mut |_| {}).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.keys, report.objects), (3, 3));
    assert_eq!(s.gc().unwrap().objects, 0);

    // An old kompakt creating the store at the same moment may leave a version-1 key table
    // and version 1 beside version-2 rows, and write keys there: gc first merges them (it must
    // not take their objects for unreferenced), as does the next open.
    {
        let conn = s.write().unwrap();
        conn.execute_batch(
            "CREATE TABLE keys (namespace TEXT NOT NULL, key TEXT NOT NULL, hash BLOB NOT NULL,
                 PRIMARY KEY (namespace, key)) WITHOUT ROWID;
             INSERT INTO keys SELECT namespace, 'copy of ' || key, hash FROM keys_v2 WHERE key = 'file';
             INSERT INTO keys SELECT namespace, key, zeroblob(16) FROM keys_v2 WHERE key = 'new';
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    s.delete("objects", "file").unwrap(); // now only the old table's key holds the file
    assert_eq!(s.gc().unwrap().objects, 0);
    assert_eq!(
        s.get_bytes("objects", "copy of file").unwrap().unwrap(),
        big(8, 1 << 20)
    );
    let old_tables: i64 = s
        .read()
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'keys'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(old_tables, 0);
    drop(s);
    let s = Store::open(&root, StoreOptions::default()).unwrap();
    assert_eq!(s.get_bytes("objects", "new").unwrap().unwrap(), b"new value");
    assert_eq!(
        s.get_bytes("objects", "copy of file").unwrap().unwrap(),
        big(8, 1 << 20)
    );
    assert!(s.verify(&mut |_| {}).unwrap().problems.is_empty());
}

#[test]
fn commit_many_is_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let opts = s.write_options(None);
    let items: Vec<_> = (0..100)
        .map(|i| {
            let v = format!("value {i}");
            (
                format!("k{i}"),
                s.prepare(&[(v.as_bytes(), opts.stream_options())], b"", opts).unwrap(),
            )
        })
        .collect();
    s.commit_many("objects", items).unwrap();
    assert_eq!(s.len("objects").unwrap(), 100);
    assert_eq!(s.get_bytes("objects", "k42").unwrap().unwrap(), b"value 42");
}

#[test]
fn threads_share_one_store_and_open_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let shared = store(&dir);
    let root = shared.root().to_path_buf();
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let shared = &shared;
            let root = &root;
            scope.spawn(move || {
                let own = Store::open(root, StoreOptions::default()).unwrap();
                for i in 0..60u64 {
                    let s = if i % 2 == 0 { shared } else { &own };
                    let key = format!("k{}", i % 7);
                    let value = if i % 10 == 0 {
                        big(t * 100 + i, 200_000)
                    } else {
                        format!("{t}:{i}").into_bytes()
                    };
                    s.set_bytes("objects", &key, &value).unwrap();
                    if let Some(v) = s.get_bytes("objects", &key).unwrap() {
                        assert!(!v.is_empty());
                    }
                    if i % 13 == 0 {
                        s.delete("objects", &key).unwrap();
                    }
                    if i % 17 == 0 {
                        s.gc().unwrap();
                    }
                }
            });
        }
    });
    shared.gc().unwrap();
    let report = shared.verify(&mut |_| {}).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    for key in shared.keys("objects").unwrap() {
        assert!(shared.get_bytes("objects", &key).unwrap().is_some());
    }
    let info = shared.info().unwrap();
    // After gc every object is referenced by some key.
    assert!(info.inline_objects + info.file_objects <= shared.len("objects").unwrap());
}

#[test]
fn large_writes_hash_the_same_on_a_thread_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let data = big(9, 20 << 20);
    let mut hashes = Vec::new();
    for threads in [1, 2] {
        let opts = s.write_options(None).threads(threads);
        let mut w = s.writer(opts).unwrap();
        let id = w.add_stream(None).unwrap();
        w.write(id, &data[..12 << 20]).unwrap();
        w.write(id, &data[12 << 20..]).unwrap();
        hashes.push(s.finish(w).unwrap().hash());
    }
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(hashes[0], ContentHash::of(&[&data], b""));
}

#[test]
fn a_file_row_without_its_file_counts_as_absent() {
    // What a gc killed between unlinking files and committing leaves behind.
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let opts = s.write_options(Some(CodecSpec::parse("none").unwrap()));
    let data = big(11, 300_000);
    let hash = s
        .commit(
            "objects",
            "k",
            s.prepare(&[(&data, opts.stream_options())], b"", opts).unwrap(),
        )
        .unwrap();
    fs::remove_file(objects::object_path(s.root(), hash)).unwrap();
    s.delete("objects", "k").unwrap();
    // The same content again, this time small enough to be inline (it compresses).
    let zstd = s.write_options(None);
    let again = s.prepare(&[(&data, zstd.stream_options())], b"", zstd).unwrap();
    let inline_now = again.stored_size() <= INLINE_MAX as u64;
    s.commit("objects", "k2", again).unwrap();
    assert_eq!(s.get_bytes("objects", "k2").unwrap().unwrap(), data);
    // And as a file again.
    let file_again = s.prepare(&[(&data, opts.stream_options())], b"", opts).unwrap();
    s.delete("objects", "k2").unwrap();
    s.gc().unwrap();
    s.commit("objects", "k3", file_again).unwrap();
    assert_eq!(s.get_bytes("objects", "k3").unwrap().unwrap(), data);
    assert!(s.verify(&mut |_| {}).unwrap().problems.is_empty());
    let _ = inline_now;
}

#[test]
fn many_creators_agree_on_one_store() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..10 {
        let path = dir.path().join(format!("s{round}"));
        std::thread::scope(|scope| {
            for _ in 0..6 {
                let path = &path;
                scope.spawn(move || {
                    let s = Store::open(path, StoreOptions::default()).unwrap();
                    s.set_bytes("objects", "k", b"v").unwrap();
                });
            }
        });
        assert_eq!(
            Store::open(&path, StoreOptions::default())
                .unwrap()
                .len("objects")
                .unwrap(),
            1
        );
    }
}

#[test]
fn a_creator_that_finds_the_store_made_meanwhile_joins_it() {
    // The race behind many_creators_agree_on_one_store, made certain: this creator found no
    // configuration, and by the time it looks at the folder another one has created the store
    // and written to it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    let zstd5: CodecSpec = "zstd:5".parse().unwrap();
    let opts = StoreOptions {
        codec: Some(zstd5),
        ..StoreOptions::default()
    };
    Store::open(&root, opts)
        .unwrap()
        .set_bytes("objects", "k", b"v")
        .unwrap();
    assert_eq!(create_store(&root, &StoreOptions::default()).unwrap().codec, zstd5);
    // A folder that holds something else is still refused.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"mine").unwrap();
    let err = create_store(&other, &StoreOptions::default()).unwrap_err().to_string();
    assert!(err.contains("not empty and not a kompakt store"), "{err}");
}

#[test]
fn a_missing_index_is_an_error_not_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.set_bytes("objects", "k", &big(12, 300_000)).unwrap();
    let root = s.root().to_path_buf();
    drop(s);
    fs::remove_file(root.join(INDEX_FILE)).unwrap();
    let err = Store::open(&root, StoreOptions::default()).unwrap_err().to_string();
    assert!(err.contains("index.sqlite is missing"), "{err}");
}

#[test]
fn gc_skips_folders_in_tmp_and_vacuums() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let sub = s.root().join("tmp/a-folder");
    fs::create_dir_all(&sub).unwrap();
    fs::File::open(&sub)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let value = vec![7u8; 100_000];
    for i in 0..200 {
        let mut v = value.clone();
        v[0..8].copy_from_slice(&(i as u64).to_le_bytes());
        let opts = s.write_options(Some(CodecSpec::parse("none").unwrap()));
        s.commit(
            "objects",
            &format!("k{i}"),
            s.prepare(&[(&v[..50_000], opts.stream_options())], b"", opts).unwrap(),
        )
        .unwrap();
    }
    let before = fs::metadata(s.root().join(INDEX_FILE)).unwrap().len()
        + fs::metadata(s.root().join("index.sqlite-wal")).map_or(0, |m| m.len());
    s.clear(None).unwrap();
    assert_eq!(s.gc().unwrap().objects, 200);
    assert!(sub.is_dir());
    {
        let conn = s.write().unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
        let mode: i64 = conn.pragma_query_value(None, "auto_vacuum", |r| r.get(0)).unwrap();
        assert_eq!(mode, 2, "incremental auto-vacuum");
    }
    let after = fs::metadata(s.root().join(INDEX_FILE)).unwrap().len();
    assert!(after < before / 4, "index {before} -> {after} bytes");
}

#[test]
fn a_paced_spill_reports_its_temporary_files_write_back() {
    let dir = tempfile::tempdir().unwrap();
    let spill = Spill::paced(dir.path().to_path_buf(), 1 << 10);
    let progress = spill.progress().unwrap();
    let mut spill = spill;
    io::Write::write_all(&mut spill, &[5u8; 512]).unwrap();
    // Past the in-memory limit: a temporary file, paced from its first byte.
    for _ in 0..4 {
        io::Write::write_all(&mut spill, &vec![6u8; 1 << 20]).unwrap();
    }
    let Spilled::File(_, len) = spill.finish().unwrap() else {
        panic!("spilled to a file")
    };
    assert_eq!(len, 512 + (4 << 20));
    if cfg!(target_os = "linux") {
        assert!(progress.backlog().is_some(), "the write-back started");
        assert!(progress.disk_rate().is_some(), "and timed a step");
    }
}

#[test]
fn reduce_size_drops_the_least_recently_used_objects_first() {
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let values: Vec<Vec<u8>> = (0..4).map(|i| big(10 + i, 1 << 20)).collect();
    for (name, v) in ["a", "b", "c", "d"].iter().zip(&values) {
        s.set_bytes("ns", name, v).unwrap();
    }
    s.set_bytes("ns", "b-again", &values[1]).unwrap();
    s.set_bytes("ns", "tiny", b"kept in the index").unwrap();
    // Written long ago, in the order a, b, c, d; then a is read, which touches it.
    let old = SystemTime::now() - Duration::from_secs(3600);
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        let hash = s.hash_of("ns", name).unwrap().unwrap();
        let file = fs::File::open(objects::object_path(s.root(), hash)).unwrap();
        file.set_modified(old + Duration::from_secs(i as u64)).unwrap();
    }
    drop(s.get("ns", "a").unwrap().unwrap());
    let sizes: HashMap<String, u64> = s
        .entries(None)
        .unwrap()
        .into_iter()
        .map(|e| (e.key, e.stored_size))
        .collect();
    let limit = sizes["a"] + sizes["d"];
    let report = s.reduce_size(limit).unwrap();
    assert_eq!(report.keys, 3, "b, b-again and c");
    assert_eq!(report.gc.objects, 2);
    assert_eq!(report.file_bytes, limit);
    assert_eq!(s.keys("ns").unwrap(), ["a", "d", "tiny"]);
    assert_eq!(s.get_bytes("ns", "a").unwrap().unwrap(), values[0]);
    assert_eq!(s.get_bytes("ns", "d").unwrap().unwrap(), values[3]);
    assert_eq!(s.verify(&mut |_| {}).unwrap().problems, Vec::<String>::new());
    // Within the limit already: nothing goes.
    assert_eq!(s.reduce_size(limit).unwrap().keys, 0);
    assert_eq!(s.reduce_size(0).unwrap().keys, 2);
    assert_eq!(s.keys("ns").unwrap(), ["tiny"]);
}

/// JSON log lines of a few hundred bytes: structured, each alone hard to compress.
fn log_record(i: usize) -> Vec<u8> {
    format!(
        r#"{{"ts":"2026-11-28T20:{:02}:{:02}.{:03}Z","level":"{}","service":"checkout","host":"web-{}","user":{},"path":"/api/v2/orders/{}/items","status":{},"latency_ms":{},"agent":"Mozilla/5.0 (X11; Linux x86_64)"}}"#,
        i % 60,
        (i * 7) % 60,
        (i * 37) % 1000,
        ["info", "warn", "debug"][i % 3],
        i % 12,
        10_000 + i * 17,
        i * 31,
        [200, 201, 404, 500][i % 4],
        (i * 13) % 250
    )
    .into_bytes()
}

fn index_version(s: &Store) -> i64 {
    s.read()
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_namespace_of_small_structured_values_adopts_a_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    // Adopted on size alone: a test does not depend on timings.
    let s = Store::open(
        dir.path().join("s"),
        StoreOptions {
            dictionary_max_slowdown: None,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    assert_eq!(index_version(&s), INDEX_VERSION, "no dictionary, no version 3");
    let n = 2600;
    for i in 0..n {
        s.set_bytes("logs", &i.to_string(), &log_record(i)).unwrap();
        // Another namespace's values are sampled apart.
        if i < 100 {
            s.set_bytes("other", &i.to_string(), &log_record(i)).unwrap();
        }
    }
    let dictionary = s.dictionary("logs").unwrap().expect("adopted");
    assert!(s.dictionary("other").unwrap().is_none());
    assert_eq!(index_version(&s), INDEX_VERSION_DICTIONARIES);
    let info = s.info().unwrap();
    assert_eq!(
        (info.dictionaries, info.dictionary_bytes),
        (1, dictionary.bytes().len() as u64)
    );
    // Values after the adoption are smaller than the same values before it.
    let stored = |key: usize| {
        s.entries(Some("logs"))
            .unwrap()
            .into_iter()
            .find(|e| e.key == key.to_string())
            .unwrap()
            .stored_size
    };
    let again = n + 1;
    s.set_bytes("logs", &again.to_string(), &log_record(1)).unwrap();
    assert!(
        (stored(again) as f64) < 0.9 * stored(1) as f64,
        "{} vs {}",
        stored(again),
        stored(1)
    );
    assert_eq!(
        s.get("logs", &again.to_string()).unwrap().unwrap().dictionaries.ids(),
        vec![dictionary.id()]
    );
    // Every value reads back, in this store and in a new one (dictionary loaded from the
    // index), also with dictionaries turned off for writing.
    let cold = Store::open(
        s.root(),
        StoreOptions {
            dictionaries: false,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    for i in (0..n).step_by(97).chain([again]) {
        let want = log_record(if i == again { 1 } else { i });
        assert_eq!(s.get_bytes("logs", &i.to_string()).unwrap().unwrap(), want);
        assert_eq!(cold.get_bytes("logs", &i.to_string()).unwrap().unwrap(), want);
    }
    cold.set_bytes("logs", "cold", &log_record(5)).unwrap();
    assert!(cold.get("logs", "cold").unwrap().unwrap().dictionaries.is_empty());
    let report = s.verify(&mut |_| {}).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.dictionaries, 1);
    // Kept while values need it; once the namespace is emptied, gc removes it.
    assert_eq!(s.gc().unwrap().dictionaries, 0);
    assert!(s.dictionary("logs").unwrap().is_some());
    s.clear(Some("logs")).unwrap();
    let gc = s.gc().unwrap();
    assert_eq!(gc.dictionaries, 1);
    assert_eq!(s.info().unwrap().dictionaries, 0);
    assert!(Store::open(s.root(), StoreOptions::default())
        .unwrap()
        .dictionary("logs")
        .unwrap()
        .is_none());
    // This process still holds it: a value written with it brings it back.
    s.set_bytes("logs", "after gc", &log_record(3)).unwrap();
    assert_eq!(s.info().unwrap().dictionaries, 1);
    assert_eq!(cold.get_bytes("logs", "after gc").unwrap().unwrap(), log_record(3));
    assert!(s.verify(&mut |_| {}).unwrap().problems.is_empty());
}

#[test]
fn one_process_of_a_store_trains_at_a_time_and_the_others_take_its_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || StoreOptions {
        dictionary_max_slowdown: None,
        ..StoreOptions::default()
    };
    let a = Store::open(dir.path().join("s"), opts()).unwrap();
    let b = Store::open(dir.path().join("s"), opts()).unwrap();
    // Another process holds the trial lock: b's trials are put off, not run, not counted.
    let other = fs::File::create(a.root().join("tmp").join(TRIAL_LOCK_FILE)).unwrap();
    other.try_lock().unwrap();
    for i in 0..2300 {
        b.set_bytes("logs", &format!("b{i}"), &log_record(i)).unwrap();
    }
    assert!(b.dictionary("logs").unwrap().is_none(), "no trial while another trains");
    drop(other);
    // a trains and adopts; b, due again, takes a's dictionary without training its own.
    for i in 0..2100 {
        a.set_bytes("logs", &format!("a{i}"), &log_record(i)).unwrap();
    }
    let adopted = a.dictionary("logs").unwrap().expect("a adopted one");
    for i in 2300..2600 {
        b.set_bytes("logs", &format!("b{i}"), &log_record(i)).unwrap();
    }
    assert_eq!(b.dictionary("logs").unwrap().map(|d| d.id()), Some(adopted.id()));
    assert_eq!(b.info().unwrap().dictionaries, 1, "b trained none of its own");
    assert_eq!(b.get_bytes("logs", "b2599").unwrap().unwrap(), log_record(2599));
}

#[test]
fn values_that_share_nothing_get_no_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    // Pure noise: with compact files (28 bytes of overhead, not 160) even `big`'s two counting
    // bytes in three gain a dictionary the 10 % it needs.
    let noise = |i: u64| mixed(i, 300, 1, 1);
    for i in 0..2100u64 {
        s.set_bytes("noise", &i.to_string(), &noise(i)).unwrap();
    }
    assert!(s.dictionary("noise").unwrap().is_none());
    assert_eq!(index_version(&s), INDEX_VERSION);
    let trial = s
        .train_dictionary("noise", &(0..500u64).map(noise).collect::<Vec<_>>(), None)
        .unwrap();
    assert!(!trial.adopted);
    assert!(trial.reason.is_some(), "{trial:?}");
}

#[test]
fn train_dictionary_adopts_once_and_needs_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let samples: Vec<Vec<u8>> = (0..1000).map(log_record).collect();
    let trial = s.train_dictionary("logs", &samples, None).unwrap();
    assert!(trial.adopted, "{trial:?}");
    assert_eq!(trial.held_out_samples, 200);
    assert!(trial.stored_with < trial.stored_without);
    let err = s.train_dictionary("logs", &samples, None).unwrap_err().to_string();
    assert!(err.contains("already has dictionary"), "{err}");
    let lz4 = Store::open(
        dir.path().join("lz4"),
        StoreOptions {
            codec: Some(CodecSpec::parse("lz4").unwrap()),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let err = lz4.train_dictionary("logs", &samples, None).unwrap_err().to_string();
    assert!(err.contains("zstd"), "{err}");
    // An lz4 store never samples.
    for i in 0..2100 {
        lz4.set_bytes("logs", &i.to_string(), &log_record(i)).unwrap();
    }
    assert!(lz4.dictionary("logs").unwrap().is_none());
}

#[test]
fn a_trial_weighs_the_codec_against_what_a_set_costs_besides() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let samples: Vec<Vec<u8>> = (0..1000).map(log_record).collect();
    // As a store on object storage reports its requests: a second per value, beside which the
    // codec's microseconds are no slowdown at all (5 % allowed, the store's own rule).
    s.observe_value_overhead(Duration::from_secs(3));
    s.observe_value_overhead(Duration::from_secs(1));
    s.observe_value_overhead(Duration::from_secs(2));
    let trial = s.train_dictionary("logs", &samples, Some(MAX_SLOWDOWN)).unwrap();
    assert!(trial.adopted, "{trial:?}");
    assert_eq!(trial.overhead_seconds, trial.held_out_samples as f64);
    // A local store adds nothing.
    let local = Store::open(dir.path().join("local"), StoreOptions::default()).unwrap();
    let trial = local.train_dictionary("logs", &samples, None).unwrap();
    assert_eq!(trial.overhead_seconds, 0.0);
}

#[test]
fn a_dictionary_from_elsewhere_replaces_the_namespace_one_and_old_values_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let samples: Vec<Vec<u8>> = (0..1000).map(log_record).collect();
    assert!(s.train_dictionary("logs", &samples, None).unwrap().adopted);
    let ours = s.dictionary("logs").unwrap().unwrap();
    s.set_bytes("logs", "before", &log_record(1)).unwrap();
    let theirs = Dictionary::train(&(0..1000).map(|i| log_record(i + 7000)).collect::<Vec<_>>(), 4096).unwrap();
    assert!(s.dictionary_with_id(theirs.id()).unwrap().is_none());
    s.use_dictionary("logs", &theirs).unwrap();
    s.set_bytes("logs", "after", &log_record(2)).unwrap();
    // Another handle (another process) sees the replacement; each value reads with its own.
    let other = store(&dir);
    assert_eq!(other.dictionary("logs").unwrap().unwrap().id(), theirs.id());
    assert_eq!(other.dictionary_with_id(ours.id()).unwrap().unwrap().id(), ours.id());
    for (key, dictionary, i) in [("before", &ours, 1), ("after", &theirs, 2)] {
        let found = other.get("logs", key).unwrap().unwrap();
        assert_eq!(found.dictionaries.ids(), vec![dictionary.id()]);
        assert_eq!(other.get_bytes("logs", key).unwrap().unwrap(), log_record(i));
    }
    // An object built elsewhere and committed with the dictionary it names keeps it.
    let opts = s.write_options(None);
    let mut w = kompakt_fs::writer_with_dictionary(s.spill(&opts), opts, None, Some(theirs.clone())).unwrap();
    w.hash_content().unwrap();
    let id = w.add_stream(None).unwrap();
    w.write(id, &log_record(3)).unwrap();
    w.finish_stream(id).unwrap();
    let pending = s.finish(w).unwrap().with_dictionary(Some(theirs.clone()));
    assert_eq!(pending.dictionary(), Some(theirs.id()));
    s.commit("fetched", "k", pending).unwrap();
    assert_eq!(other.get_bytes("fetched", "k").unwrap().unwrap(), log_record(3));
}

#[test]
fn a_damaged_or_missing_dictionary_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let samples: Vec<Vec<u8>> = (0..1000).map(log_record).collect();
    assert!(s.train_dictionary("logs", &samples, None).unwrap().adopted);
    s.set_bytes("logs", "a", &log_record(1)).unwrap();
    {
        let conn = s.write().unwrap();
        let mut data: Vec<u8> = conn
            .query_row("SELECT data FROM dictionaries", [], |r| r.get(0))
            .unwrap();
        data[100] ^= 1;
        conn.execute("UPDATE dictionaries SET data = ?1", [data]).unwrap();
    }
    let fresh = Store::open(s.root(), StoreOptions::default()).unwrap();
    let err = fresh.get("logs", "a").unwrap_err().to_string();
    assert!(err.contains("dictionary"), "{err}");
    let report = fresh.verify(&mut |_| {}).unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains("dictionary")),
        "{:?}",
        report.problems
    );
    // New small values of the namespace are stored, without the damaged dictionary.
    fresh.set_bytes("logs", "b", &log_record(2)).unwrap();
    assert_eq!(fresh.get_bytes("logs", "b").unwrap().unwrap(), log_record(2));
    s.write().unwrap().execute("DELETE FROM dictionaries", []).unwrap();
    let fresh = Store::open(s.root(), StoreOptions::default()).unwrap();
    let err = fresh.get("logs", "a").unwrap_err().to_string();
    assert!(err.contains("which the index does not hold"), "{err}");
    let report = fresh.verify(&mut |_| {}).unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains("needs dictionary")),
        "{:?}",
        report.problems
    );
    // The namespace (still holding "b") names the dictionary: reported too, once no value
    // needs it.
    s.delete("logs", "a").unwrap();
    s.gc().unwrap();
    let report = Store::open(s.root(), StoreOptions::default())
        .unwrap()
        .verify(&mut |_| {})
        .unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("namespace 'logs' needs dictionary")),
        "{:?}",
        report.problems
    );
}

#[test]
fn a_bad_max_slowdown_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        let opts = StoreOptions {
            dictionary_max_slowdown: Some(bad),
            ..StoreOptions::default()
        };
        let err = Store::open(dir.path().join("s"), opts).unwrap_err().to_string();
        assert!(err.contains("max_slowdown"), "{err}");
        let s = store(&dir);
        assert!(s.train_dictionary("x", &[b"abc"; 10], Some(bad)).is_err());
    }
}

#[test]
fn an_index_newer_than_version_3_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.write().unwrap().pragma_update(None, "user_version", 4).unwrap();
    let err = Store::open(s.root(), StoreOptions::default()).unwrap_err().to_string();
    assert!(
        err.contains("index version 4") && err.contains("upgrade kompakt"),
        "{err}"
    );
}

use proptest::prelude::Strategy as _;

/// One store, with a dictionary adopted for namespace "logs", shared by the property cases.
fn store_with_dictionary() -> &'static Store {
    static STORE: std::sync::OnceLock<(tempfile::TempDir, Store)> = std::sync::OnceLock::new();
    &STORE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let s = store(&dir);
            let samples: Vec<Vec<u8>> = (0..1000).map(log_record).collect();
            assert!(s.train_dictionary("logs", &samples, None).unwrap().adopted);
            (dir, s)
        })
        .1
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any bytes, small or not, alike the samples or not, read back as set; checked too.
    #[test]
    fn values_round_trip_through_a_namespace_with_a_dictionary(
        values in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
                (0usize..5000).prop_map(log_record),
                (0usize..300).prop_map(|n| (0..n).flat_map(log_record).collect::<Vec<u8>>()),
            ],
            1..5,
        )
    ) {
        let s = store_with_dictionary();
        let items: Vec<(String, PendingObject)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let opts = s.write_options(None);
                (format!("m{i}"), s.prepare_for("logs", &[(v, opts.stream_options())], b"", opts).unwrap())
            })
            .collect();
        s.commit_many("logs", items).unwrap();
        for (i, v) in values.iter().enumerate() {
            s.set_bytes("logs", &format!("s{i}"), v).unwrap();
            proptest::prop_assert_eq!(s.get_bytes("logs", &format!("m{i}")).unwrap(), Some(v.clone()));
            proptest::prop_assert_eq!(s.get_bytes("logs", &format!("s{i}")).unwrap(), Some(v.clone()));
        }
    }
}
