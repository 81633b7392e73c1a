//! The object store: values set, got, listed, deleted and collected; one-call puts with the
//! namespace's dictionary.

use super::*;
use std::ffi::c_char;
use std::ptr::null;

/// A list for kompakt to fill.
fn empty_list() -> kpk_strings {
    kpk_strings {
        items: null_mut(),
        lens: null_mut(),
        count: 0,
    }
}

/// The items of a list kompakt filled (checked against their lengths), which is freed.
///
/// # Safety
/// `l` was filled by kompakt and not freed since.
unsafe fn list(l: &mut kpk_strings) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..l.count {
        let (item, len) = (*l.items.add(i), *l.lens.add(i));
        let text = CStr::from_ptr(item).to_str().unwrap().to_owned();
        assert_eq!(text.len(), len, "the length of item {i}");
        out.push(text);
    }
    kpk_strings_free(l);
    assert!(l.items.is_null() && l.lens.is_null() && l.count == 0);
    kpk_strings_free(l);
    out
}

#[test]
fn a_store_sets_gets_lists_and_deletes_values() {
    let dir = std::env::temp_dir().join(format!("kompakt-c-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cdir = c(dir.to_str().unwrap());
    let (ns, other) = (c("objects"), c("runs"));
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let mut store = null_mut();
        assert_eq!(
            kpk_store_open(cdir.as_ptr(), null(), &mut store),
            KPK_OK,
            "{}",
            last_error()
        );
        let put_value = |ns: &CString, key: &str, data: &[u8]| {
            let mut w = null_mut();
            assert_eq!(kpk_store_writer(store, &mut w), KPK_OK);
            let mut s = 0;
            assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
            assert_eq!(kpk_writer_write(w, s, data.as_ptr().cast(), data.len()), KPK_OK);
            let mut hash = [0 as c_char; 33];
            let key = c(key);
            assert_eq!(
                kpk_store_commit(store, ns.as_ptr(), key.as_ptr(), w, hash.as_mut_ptr()),
                KPK_OK,
                "{}",
                last_error()
            );
            CStr::from_ptr(hash.as_ptr()).to_str().unwrap().to_owned()
        };
        // Incompressible: an object file of its own, not a value held by its key.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let big: Vec<u8> = (0..3_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let h1 = put_value(&ns, "a", b"small value");
        let h2 = put_value(&ns, "b", &big);
        assert_eq!(put_value(&other, "c", b"small value"), h1, "equal content, equal hash");
        assert_eq!(h1.len(), 32);
        assert_ne!(h1, h2);

        let get = |ns: &CString, key: &str| -> Option<Vec<u8>> {
            let key = c(key);
            let mut r = null_mut();
            assert_eq!(kpk_store_get(store, ns.as_ptr(), key.as_ptr(), &mut r), KPK_OK);
            if r.is_null() {
                return None;
            }
            let mut len = 0u64;
            assert_eq!(kpk_reader_stream_length(r, 0, &mut len), KPK_OK);
            let mut buf = vec![0u8; len as usize];
            let mut got = 0;
            assert_eq!(
                kpk_reader_read(r, 0, 0, buf.as_mut_ptr().cast(), buf.len(), &mut got),
                KPK_OK
            );
            kpk_reader_close(r);
            Some(buf)
        };
        assert_eq!(get(&ns, "a").unwrap(), b"small value");
        assert_eq!(get(&ns, "b").unwrap(), big);
        assert_eq!(get(&ns, "missing"), None);

        let mut keys = empty_list();
        assert_eq!(kpk_store_keys(store, ns.as_ptr(), &mut keys), KPK_OK);
        assert_eq!(list(&mut keys), ["a", "b"]);
        let mut namespaces = empty_list();
        assert_eq!(kpk_store_namespaces(store, &mut namespaces), KPK_OK);
        assert_eq!(list(&mut namespaces), ["objects", "runs"]);
        let (mut exists, mut deleted) = (-1, -1);
        let a = c("a");
        assert_eq!(kpk_store_exists(store, ns.as_ptr(), a.as_ptr(), &mut exists), KPK_OK);
        assert_eq!(exists, 1);
        assert_eq!(kpk_store_delete(store, ns.as_ptr(), a.as_ptr(), &mut deleted), KPK_OK);
        assert_eq!(deleted, 1);
        assert_eq!(kpk_store_delete(store, ns.as_ptr(), a.as_ptr(), &mut deleted), KPK_OK);
        assert_eq!(deleted, 0);
        assert_eq!(kpk_store_exists(store, ns.as_ptr(), a.as_ptr(), &mut exists), KPK_OK);
        assert_eq!(exists, 0);

        // Clearing a namespace leaves the others; gc then removes the values no key holds
        // ("b"'s; "a"'s content is still under "c").
        let mut removed = u64::MAX;
        assert_eq!(kpk_store_clear(store, ns.as_ptr(), &mut removed), KPK_OK);
        assert_eq!(removed, 1);
        assert_eq!(get(&ns, "b"), None);
        assert_eq!(get(&other, "c").unwrap(), b"small value");
        let (mut objects, mut bytes) = (u64::MAX, u64::MAX);
        assert_eq!(
            kpk_store_gc(store, &mut objects, &mut bytes),
            KPK_OK,
            "{}",
            last_error()
        );
        assert_eq!(objects, 1);
        assert!(bytes >= big.len() as u64, "{bytes}");
        assert_eq!(kpk_store_gc(store, null_mut(), null_mut()), KPK_OK);
        assert_eq!(get(&other, "c").unwrap(), b"small value");
        let h3 = put_value(&ns, "b", &big);
        assert_eq!(h3, h2);

        // A store writer is not finished as a file; a file writer is not committed.
        let mut w = null_mut();
        assert_eq!(kpk_store_writer(store, &mut w), KPK_OK);
        assert_eq!(kpk_writer_finish(w, null_mut()), KPK_ERROR_USAGE);
        assert_eq!(kpk_writer_open_memory(null(), &mut w), KPK_OK);
        assert_eq!(
            kpk_store_commit(store, ns.as_ptr(), a.as_ptr(), w, null_mut()),
            KPK_ERROR_USAGE
        );
        assert_eq!(kpk_store_clear(store, null(), null_mut()), KPK_OK);
        let mut namespaces = empty_list();
        assert_eq!(kpk_store_namespaces(store, &mut namespaces), KPK_OK);
        assert!(list(&mut namespaces).is_empty());
        kpk_store_close(store);

        // Another codec than the store's is refused, naming the store.
        let lz4 = c("lz4");
        assert_eq!(
            kpk_store_open(cdir.as_ptr(), &codec_options(&lz4), &mut store),
            KPK_ERROR_STORE
        );
        assert!(last_error().contains(dir.to_str().unwrap()), "{}", last_error());
        kpk_store_close(null_mut());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn put_stores_a_value_in_one_call_with_the_namespaces_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let record = |i: usize| {
        format!(
            r#"{{"level":"{}","service":"checkout","user":{},"path":"/api/v2/orders/{}/items","status":{},"latency_ms":{},"agent":"Mozilla/5.0 (X11; Linux x86_64)"}}"#,
            ["info", "warn", "debug"][i % 3],
            10_000 + i * 17,
            i * 31,
            [200, 201, 404, 500][i % 4],
            (i * 13) % 250
        )
    };
    {
        // A dictionary adopted beforehand (on size alone: a test does not depend on timings).
        let store = kompakt_store::Store::open(&path, kompakt_store::StoreOptions::default()).unwrap();
        let samples: Vec<String> = (0..1000).map(record).collect();
        assert!(store.train_dictionary("logs", &samples, None).unwrap().adopted);
    }
    let cpath = c(path.to_str().unwrap());
    let (ns, meta) = (c("logs"), b"{\"kind\":\"log\"}");
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let mut store = null_mut();
        assert_eq!(kpk_store_open(cpath.as_ptr(), null(), &mut store), KPK_OK);
        let value = record(5);
        let key = c("r5");
        let mut hash = [0 as c_char; 33];
        assert_eq!(
            kpk_store_put(
                store,
                ns.as_ptr(),
                key.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                1,
                null(),
                meta.as_ptr().cast(),
                meta.len(),
                hash.as_mut_ptr()
            ),
            KPK_OK,
            "{}",
            last_error()
        );
        assert_eq!(CStr::from_ptr(hash.as_ptr()).to_bytes().len(), 32);
        let mut r = null_mut();
        assert_eq!(
            kpk_store_get(store, ns.as_ptr(), key.as_ptr(), &mut r),
            KPK_OK,
            "{}",
            last_error()
        );
        let mut buf = vec![0u8; value.len()];
        let mut got = 0;
        assert_eq!(
            kpk_reader_read(r, 0, 0, buf.as_mut_ptr().cast(), buf.len(), &mut got),
            KPK_OK,
            "{}",
            last_error()
        );
        assert_eq!(&buf[..got], value.as_bytes());
        kpk_reader_close(r);
        // Bad element sizes and filters are option errors, as for a writer's streams.
        assert_eq!(
            kpk_store_put(
                store,
                ns.as_ptr(),
                key.as_ptr(),
                null(),
                0,
                0,
                null(),
                null(),
                0,
                null_mut()
            ),
            KPK_ERROR_OPTION
        );
        let bad = c("no such filter");
        assert_ne!(
            kpk_store_put(
                store,
                ns.as_ptr(),
                key.as_ptr(),
                null(),
                0,
                8,
                bad.as_ptr(),
                null(),
                0,
                null_mut()
            ),
            KPK_OK
        );
        kpk_store_close(store);
    }
    // The value was compressed with the dictionary: reading it needs it.
    let store = kompakt_store::Store::open(&path, kompakt_store::StoreOptions::default()).unwrap();
    let object = store.get("logs", "r5").unwrap().unwrap();
    assert_eq!(object.dictionaries.ids().len(), 1);
}

#[test]
fn store_options_zeroed_are_the_defaults_and_remote_options_are_refused_for_a_folder() {
    let dir = std::env::temp_dir().join(format!("kompakt-c-store-options-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cdir = c(dir.to_str().unwrap());
    let zeroed = <kpk_store_options as crate::options::SizedStruct>::zeroed();
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and
    // each handle is closed once.
    unsafe {
        let mut store = null_mut();
        let must_exist = kpk_store_options {
            must_exist: 1,
            ..zeroed
        };
        assert_eq!(
            kpk_store_open_with(cdir.as_ptr(), &must_exist, &mut store),
            KPK_ERROR_STORE
        );
        assert!(store.is_null() && !dir.exists(), "nothing created");

        assert_eq!(
            kpk_store_open_with(cdir.as_ptr(), &zeroed, &mut store),
            KPK_OK,
            "{}",
            last_error()
        );
        kpk_store_close(store);
        store = null_mut();
        assert_eq!(
            kpk_store_open_with(cdir.as_ptr(), null(), &mut store),
            KPK_OK,
            "{}",
            last_error()
        );
        kpk_store_close(store);

        for remote_only in [
            kpk_store_options {
                grace_seconds: f64::NEG_INFINITY,
                ..zeroed
            },
            kpk_store_options {
                cache_limit: 1e9,
                ..zeroed
            },
            kpk_store_options {
                multipart_threshold: 1 << 20,
                ..zeroed
            },
        ] {
            store = null_mut();
            assert_eq!(
                kpk_store_open_with(cdir.as_ptr(), &remote_only, &mut store),
                KPK_ERROR_OPTION
            );
            assert!(last_error().contains("object storage"), "{}", last_error());
            assert!(store.is_null());
        }
        let threads = kpk_store_options {
            threads: 1000,
            ..zeroed
        };
        assert_eq!(
            kpk_store_open_with(cdir.as_ptr(), &threads, &mut store),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("0 (all cores) to 256"), "{}", last_error());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
