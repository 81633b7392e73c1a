//! The API called as C calls it (raw pointers), from Rust; `tests/c/api_test.c` does the same
//! from C.

use super::*;
use std::ptr::{null, null_mut};

/// The last error's message on this thread (shared by every test module of the crate).
pub(crate) fn last_error() -> String {
    // SAFETY: kpk_last_error returns a NUL-terminated string valid until the next call.
    unsafe { CStr::from_ptr(kpk_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// A file in memory of one stream holding `data`, written in `chunk`-byte writes.
fn write_memory(data: &[u8], chunk: usize, codec: &str) -> Vec<u8> {
    let codec = c(codec);
    let mut w = null_mut();
    unsafe {
        assert_eq!(
            kpk_writer_open_memory(codec.as_ptr(), KPK_LEVEL_DEFAULT, 2, &mut w),
            KPK_OK
        );
        let mut s = u32::MAX;
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(s, 0);
        for part in data.chunks(chunk.max(1)) {
            assert_eq!(kpk_writer_write(w, s, part.as_ptr().cast(), part.len()), KPK_OK);
        }
        assert_eq!(kpk_writer_set_metadata(w, b"meta".as_ptr().cast(), 4), KPK_OK);
        let mut file = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_writer_finish(w, &mut file), KPK_OK);
        let out = std::slice::from_raw_parts(file.data, file.len).to_vec();
        kpk_bytes_free(&mut file);
        assert!(file.data.is_null() && file.len == 0);
        kpk_bytes_free(&mut file);
        out
    }
}

#[test]
fn many_small_writes_make_the_same_file_as_one() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8 ^ (i >> 12) as u8).collect();
    let whole = write_memory(&data, data.len(), "zstd:1");
    assert_eq!(write_memory(&data, 7, "zstd:1"), whole);
    assert_eq!(kompakt::decompress(&whole).unwrap(), data);
}

#[test]
fn a_reader_of_lent_memory_reads_ranges_into_caller_memory() {
    let data: Vec<u8> = (0..2_500_000u32).map(|i| (i / 3) as u8).collect();
    let file = write_memory(&data, 4096, "lz4");
    unsafe {
        let mut r = null_mut();
        assert_eq!(
            kpk_reader_open_memory(file.as_ptr().cast(), file.len(), 0, &mut r),
            KPK_OK
        );
        assert_eq!(kpk_reader_stream_count(r), 1);
        let mut len = 0u64;
        assert_eq!(kpk_reader_stream_length(r, 0, &mut len), KPK_OK);
        assert_eq!(len, data.len() as u64);
        let (mut meta, mut meta_len) = (null(), 0usize);
        assert_eq!(kpk_reader_metadata(r, &mut meta, &mut meta_len), KPK_OK);
        assert_eq!(std::slice::from_raw_parts(meta, meta_len), b"meta");
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0usize;
        assert_eq!(
            kpk_reader_read(r, 0, 1_000_000, buf.as_mut_ptr().cast(), buf.len(), &mut got),
            KPK_OK
        );
        assert_eq!((got, &buf[..]), (1 << 20, &data[1_000_000..1_000_000 + (1 << 20)]));
        // At the end, fewer bytes; past it, an error naming the stream's size.
        assert_eq!(
            kpk_reader_read(r, 0, len - 10, buf.as_mut_ptr().cast(), buf.len(), &mut got),
            KPK_OK
        );
        assert_eq!(got, 10);
        assert_eq!(
            kpk_reader_read(r, 0, len + 1, buf.as_mut_ptr().cast(), 1, &mut got),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("2500000 bytes"), "{}", last_error());
        assert_eq!(
            kpk_reader_stream_length(r, 5, &mut len),
            KPK_ERROR_OPTION,
            "{}",
            last_error()
        );
        kpk_reader_close(r);
        kpk_reader_close(null_mut());
    }
}

#[test]
fn files_are_atomic_and_errors_name_them() {
    let dir = std::env::temp_dir().join(format!("kompakt-c-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.kpk");
    std::fs::write(&path, b"old").unwrap();
    let cpath = c(path.to_str().unwrap());
    unsafe {
        // Aborted: the old content stays, no temporary file is left.
        let mut w = null_mut();
        assert_eq!(kpk_writer_open_file(cpath.as_ptr(), null(), 5, 1, &mut w), KPK_OK);
        let mut s = 0;
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(kpk_writer_write(w, s, b"hello".as_ptr().cast(), 5), KPK_OK);
        kpk_writer_abort(w);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // Finished: the new file, readable by the core.
        assert_eq!(kpk_writer_open_file(cpath.as_ptr(), null(), 5, 1, &mut w), KPK_OK);
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(kpk_writer_write(w, s, b"hello".as_ptr().cast(), 5), KPK_OK);
        assert_eq!(kpk_writer_finish(w, null_mut()), KPK_OK);
        assert_eq!(kompakt::decompress(&std::fs::read(&path).unwrap()).unwrap(), b"hello");

        // Not kompakt, a directory, a missing file: each names the path.
        std::fs::write(&path, b"hello world, this is not a kompakt file at all....").unwrap();
        let mut r = null_mut();
        assert_eq!(kpk_reader_open_file(cpath.as_ptr(), 0, &mut r), KPK_ERROR_CORRUPT);
        assert!(
            last_error().contains("x.kpk") && last_error().contains("not a kompakt file"),
            "{}",
            last_error()
        );
        assert!(r.is_null());
        let cdir = c(dir.to_str().unwrap());
        assert_eq!(kpk_reader_open_file(cdir.as_ptr(), 0, &mut r), KPK_ERROR_IO);
        assert!(last_error().contains(dir.to_str().unwrap()), "{}", last_error());
        let missing = c(dir.join("missing.kpk").to_str().unwrap());
        assert_eq!(kpk_reader_open_file(missing.as_ptr(), 0, &mut r), KPK_ERROR_IO);
        assert!(last_error().contains("missing.kpk"), "{}", last_error());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_and_null_pointers_are_errors_with_messages() {
    let mut w = null_mut();
    unsafe {
        let codec = c("brotli");
        assert_eq!(
            kpk_writer_open_memory(codec.as_ptr(), KPK_LEVEL_DEFAULT, 0, &mut w),
            KPK_ERROR_OPTION
        );
        assert!(
            last_error().contains("zstd"),
            "the valid codecs are named: {}",
            last_error()
        );
        let zstd = c("zstd");
        assert_eq!(kpk_writer_open_memory(zstd.as_ptr(), 99, 0, &mut w), KPK_ERROR_OPTION);
        assert_eq!(
            kpk_writer_open_memory(null(), KPK_LEVEL_DEFAULT, -1, &mut w),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("threads"), "{}", last_error());
        assert_eq!(
            kpk_writer_open_memory(null(), KPK_LEVEL_DEFAULT, 0, null_mut()),
            KPK_ERROR_USAGE
        );
        assert_eq!(kpk_writer_write(null_mut(), 0, null(), 0), KPK_ERROR_USAGE);
        assert_eq!(kpk_writer_finish(null_mut(), null_mut()), KPK_ERROR_USAGE);
        let mut r = null_mut();
        assert_eq!(kpk_reader_open_memory(null(), 10, 0, &mut r), KPK_ERROR_USAGE);
        assert_eq!(kpk_reader_open_memory(null(), 0, 0, &mut r), KPK_ERROR_CORRUPT);
        assert_eq!(kpk_reader_stream_count(null()), 0);
        // A write to a stream that does not exist.
        assert_eq!(kpk_writer_open_memory(null(), 60, 1, &mut w), KPK_OK);
        assert_eq!(
            kpk_writer_write(w, 3, b"x".as_ptr().cast(), 1),
            KPK_ERROR_USAGE,
            "{}",
            last_error()
        );
        kpk_writer_abort(w);
        kpk_writer_abort(null_mut());
    }
}

#[test]
fn a_panic_is_a_status_not_an_unwind() {
    let status = guard(|| panic!("boom"));
    assert_eq!(status, KPK_ERROR_INTERNAL);
    assert!(last_error().contains("boom"));
    assert_eq!(guard(|| Ok(())), KPK_OK);
    // SAFETY: a static NUL-terminated string.
    assert_eq!(
        unsafe { CStr::from_ptr(kpk_version()) }.to_str().unwrap(),
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn typed_streams_shuffle_and_refuse_bad_element_sizes() {
    // Doubles with few distinct high bytes: shuffled by 8, they compress far better.
    let data: Vec<u8> = (0..200_000u64)
        .flat_map(|i| ((i * 7919) as f64 / 3.0).to_le_bytes())
        .collect();
    let size_with = |typesize: u32, filter: Option<&str>| unsafe {
        let mut w = null_mut();
        assert_eq!(kpk_writer_open_memory(null(), KPK_LEVEL_DEFAULT, 1, &mut w), KPK_OK);
        let filter = filter.map(c);
        let mut s = 0;
        let status = kpk_writer_add_stream_typed(w, typesize, filter.as_ref().map_or(null(), |f| f.as_ptr()), &mut s);
        if status != KPK_OK {
            kpk_writer_abort(w);
            return Err(status);
        }
        assert_eq!(kpk_writer_write(w, s, data.as_ptr().cast(), data.len()), KPK_OK);
        let mut file = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_writer_finish(w, &mut file), KPK_OK);
        let bytes = std::slice::from_raw_parts(file.data, file.len).to_vec();
        kpk_bytes_free(&mut file);
        assert_eq!(kompakt::decompress(&bytes).unwrap(), data);
        Ok(bytes.len())
    };
    let plain = size_with(1, None).unwrap();
    let shuffled = size_with(8, None).unwrap();
    assert!(shuffled < plain, "{shuffled} against {plain}");
    assert!(size_with(8, Some("auto")).unwrap() <= plain);
    assert_eq!(size_with(0, None), Err(KPK_ERROR_OPTION));
    assert_eq!(size_with(256, None), Err(KPK_ERROR_OPTION));
    assert_eq!(size_with(8, Some("zigzag")), Err(KPK_ERROR_OPTION));
    assert!(
        last_error().contains("shuffle"),
        "the valid filters are named: {}",
        last_error()
    );
}

/// Splits a kpk_bytes list (u32 length, bytes; repeated) and frees it.
unsafe fn list(mut b: kpk_bytes) -> Vec<String> {
    let bytes = if b.len == 0 {
        Vec::new()
    } else {
        std::slice::from_raw_parts(b.data, b.len).to_vec()
    };
    kpk_bytes_free(&mut b);
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push(String::from_utf8(bytes[at + 4..at + 4 + n].to_vec()).unwrap());
        at += 4 + n;
    }
    out
}

#[test]
fn a_store_sets_gets_lists_and_deletes_values() {
    let dir = std::env::temp_dir().join(format!("kompakt-c-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cdir = c(dir.to_str().unwrap());
    let (ns, other) = (c("objects"), c("runs"));
    unsafe {
        let mut store = null_mut();
        assert_eq!(
            kpk_store_open(cdir.as_ptr(), null(), KPK_LEVEL_DEFAULT, 0, &mut store),
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

        let mut keys = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_store_keys(store, ns.as_ptr(), &mut keys), KPK_OK);
        assert_eq!(list(keys), ["a", "b"]);
        let mut namespaces = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_store_namespaces(store, &mut namespaces), KPK_OK);
        assert_eq!(list(namespaces), ["objects", "runs"]);
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
        assert_eq!(kpk_writer_open_memory(null(), KPK_LEVEL_DEFAULT, 0, &mut w), KPK_OK);
        assert_eq!(
            kpk_store_commit(store, ns.as_ptr(), a.as_ptr(), w, null_mut()),
            KPK_ERROR_USAGE
        );
        assert_eq!(kpk_store_clear(store, null(), null_mut()), KPK_OK);
        let mut namespaces = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_store_namespaces(store, &mut namespaces), KPK_OK);
        assert!(list(namespaces).is_empty());
        kpk_store_close(store);

        // Another codec than the store's is refused, naming the store.
        let lz4 = c("lz4");
        assert_eq!(
            kpk_store_open(cdir.as_ptr(), lz4.as_ptr(), KPK_LEVEL_DEFAULT, 0, &mut store),
            KPK_ERROR_STORE
        );
        assert!(last_error().contains(dir.to_str().unwrap()), "{}", last_error());
        kpk_store_close(null_mut());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn urls_are_read_never_written_and_unknown_schemes_are_refused() {
    let batch = || {
        let rows: arrow_array::ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3]));
        let batch = arrow_array::RecordBatch::try_from_iter([("x", rows)]).unwrap();
        let array = arrow_array::StructArray::from(batch);
        let (a, s) = arrow_array::ffi::to_ffi(&arrow_array::Array::into_data(array)).unwrap();
        (Box::new(a), Box::new(s))
    };
    unsafe {
        let mut r = null_mut();
        let gs = c("gs://bucket/file.kpk");
        assert_eq!(kpk_reader_open_file(gs.as_ptr(), 0, &mut r), KPK_ERROR_OPTION);
        assert!(
            last_error().contains("gs://bucket/file.kpk") && last_error().contains("s3://"),
            "{}",
            last_error()
        );
        let mut t = null_mut();
        assert_eq!(kpk_table_open_file(gs.as_ptr(), 0, &mut t), KPK_ERROR_OPTION);
        let mut st = null_mut();
        assert_eq!(
            kpk_store_open(gs.as_ptr(), null(), KPK_LEVEL_DEFAULT, 0, &mut st),
            KPK_ERROR_OPTION
        );
        assert!(st.is_null());

        let s3 = c("s3://bucket/file.kpk");
        let mut w = null_mut();
        assert_eq!(
            kpk_writer_open_file(s3.as_ptr(), null(), KPK_LEVEL_DEFAULT, 0, &mut w),
            KPK_ERROR_USAGE
        );
        assert!(last_error().contains("s3://bucket/file.kpk"), "{}", last_error());
        let (mut array, mut schema) = batch();
        assert_eq!(
            kpk_table_write(s3.as_ptr(), &mut *schema, &mut *array, null()),
            KPK_ERROR_USAGE
        );
        assert!(
            last_error().contains("writes only files on this machine"),
            "{}",
            last_error()
        );
        // Nothing was made on disk for either.
        assert!(!std::path::Path::new("s3:").exists());
    }
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
    unsafe {
        let mut store = null_mut();
        assert_eq!(
            kpk_store_open(cpath.as_ptr(), null(), KPK_LEVEL_DEFAULT, 0, &mut store),
            KPK_OK
        );
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
