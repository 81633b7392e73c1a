//! What API version 2 changed: zero is the default in every option and `KPK_LEVEL_NONE` stores
//! raw; option structs carry their size; readers tell what a file holds; statuses of their own
//! for a missing dictionary and a read over its limit.

use super::*;
use std::ptr::null;

#[test]
fn zero_options_are_the_defaults_and_level_none_stores_raw() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i / 5 % 251) as u8).collect();
    let zero = write_memory_with(&data, 1 << 20, &zero_options(), b"");
    assert_eq!(
        write_memory_with(&data, 1 << 20, null(), b""),
        zero,
        "NULL is every default"
    );
    let unified_default = kpk_write_options {
        level: i32::from(kompakt::codec::DEFAULT_LEVEL),
        ..zero_options()
    };
    assert_eq!(write_memory_with(&data, 1 << 20, &unified_default, b""), zero);
    assert!(zero.len() < data.len() / 10, "{} bytes", zero.len());

    let raw = kpk_write_options {
        level: KPK_LEVEL_NONE,
        ..zero_options()
    };
    let none = c("none");
    let stored = write_memory_with(&data, 1 << 20, &raw, b"");
    assert_eq!(write_memory_with(&data, 1 << 20, &codec_options(&none), b""), stored);
    assert!(stored.len() > data.len());
    assert_eq!(kompakt::decompress(&stored).unwrap(), data);

    // Element size, filter and block size from the struct: the streams of kpk_writer_add_stream.
    let doubles: Vec<u8> = (0..300_000u64).flat_map(|i| (i as f64 * 0.25).to_le_bytes()).collect();
    let shuffle = c("shuffle");
    let typed = kpk_write_options {
        typesize: 8,
        filter: shuffle.as_ptr(),
        block_size: 1 << 16,
        ..zero_options()
    };
    let file = write_memory_with(&doubles, 1 << 20, &typed, b"");
    let plain = write_memory_with(&doubles, 1 << 20, null(), b"");
    assert!(file.len() < plain.len(), "{} against {}", file.len(), plain.len());
    let reader = kompakt::Reader::new(std::io::Cursor::new(&file), kompakt::ReadOptions::default()).unwrap();
    assert_eq!(reader.streams()[0].block_count, doubles.len().div_ceil(1 << 16) as u64);
}

#[test]
fn a_struct_from_a_newer_header_is_taken_unless_it_sets_what_this_library_lacks() {
    #[repr(C)]
    struct Newer {
        v2: kpk_write_options,
        more: [u64; 2],
    }
    let mut newer = Newer {
        v2: kpk_write_options {
            size: std::mem::size_of::<Newer>() as u32,
            level: 5,
            ..zero_options()
        },
        more: [0, 0],
    };
    let mut w = null_mut();
    // SAFETY: the struct is a live local of the size it says.
    unsafe {
        let p = std::ptr::from_ref(&newer).cast::<kpk_write_options>();
        assert_eq!(kpk_writer_open_memory(p, &mut w), KPK_OK, "{}", last_error());
        kpk_writer_abort(w);
        newer.more[1] = 7;
        let p = std::ptr::from_ref(&newer).cast::<kpk_write_options>();
        assert_eq!(kpk_writer_open_memory(p, &mut w), KPK_ERROR_OPTION);
        assert!(last_error().contains("does not have"), "{}", last_error());
        // The level the first API spelled "default" says what it became.
        let old = kpk_write_options {
            level: i32::MIN,
            ..zero_options()
        };
        assert_eq!(kpk_writer_open_memory(&old, &mut w), KPK_ERROR_OPTION);
        assert!(last_error().contains("KPK_LEVEL_DEFAULT is 0"), "{}", last_error());
    }
}

/// The kind a reader over `file` tells.
fn kind_of(file: &[u8]) -> kpk_file_kind {
    let (mut r, mut kind) = (null_mut(), -1);
    // SAFETY: `file` outlives the reader, closed here.
    unsafe {
        assert_eq!(
            kpk_reader_open_memory(file.as_ptr().cast(), file.len(), 1, &mut r),
            KPK_OK
        );
        assert_eq!(kpk_reader_file_kind(r, &mut kind), KPK_OK);
        kpk_reader_close(r);
    }
    kind
}

#[test]
fn readers_tell_what_a_file_holds() {
    let r_object = br#"{"kompakt": "r-serialize", "version": 1, "serialize": {"stream": 0}}"#;
    let python = br#"{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5}}"#;
    let quoted = br#"{"note": "\"kompakt\":\"r-serialize\""}"#;
    for (meta, want) in [
        (&b""[..], KPK_FILE_PLAIN),
        (b"meta", KPK_FILE_PLAIN),
        (quoted, KPK_FILE_PLAIN),
        (r_object, KPK_FILE_R_OBJECT),
        (python, KPK_FILE_PYTHON_OBJECT),
    ] {
        let file = write_memory_with(b"x", 1, null(), meta);
        assert_eq!(kind_of(&file), want, "{}", String::from_utf8_lossy(meta));
    }
    // A table file, as kpk_table_write makes it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let column: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::Int32Array::from(vec![1, 2]));
    let batch = arrow_array::RecordBatch::try_from_iter([("x", column)]).unwrap();
    let data = arrow_array::Array::to_data(&arrow_array::StructArray::from(batch));
    let (mut array, mut schema) = arrow_array::ffi::to_ffi(&data).unwrap();
    let cpath = c(path.to_str().unwrap());
    // SAFETY: live locals; the array is moved into the call.
    unsafe { assert_eq!(kpk_table_write(cpath.as_ptr(), &mut schema, &mut array, null()), KPK_OK) };
    assert_eq!(kind_of(&std::fs::read(&path).unwrap()), KPK_FILE_TABLE);
    // SAFETY: NULL is refused before use.
    unsafe {
        let mut kind = 0;
        assert_eq!(kpk_reader_file_kind(null(), &mut kind), KPK_ERROR_USAGE);
    }
}

#[test]
fn a_value_that_needs_its_stores_dictionary_is_a_dictionary_error_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = kompakt_store::Store::open(dir.path(), kompakt_store::StoreOptions::default()).unwrap();
    let record = |i: usize| {
        format!(
            r#"{{"user":{},"path":"/api/v2/orders/{}/items","status":200}}"#,
            i * 17,
            i * 31
        )
    };
    let samples: Vec<String> = (0..1000).map(record).collect();
    assert!(store.train_dictionary("logs", &samples, None).unwrap().adopted);
    let value = record(5);
    let opts = store.write_options(None);
    let stream = opts.stream_options();
    let pending = store
        .prepare_for("logs", &[(value.as_bytes(), stream)], b"", opts)
        .unwrap();
    store.commit_many("logs", vec![("r5".into(), pending)]).unwrap();
    let object = store.get("logs", "r5").unwrap().unwrap();
    assert_eq!(object.dictionaries.ids().len(), 1);
    let mut file = Vec::new();
    let mut source = object.source;
    std::io::Read::read_to_end(&mut source, &mut file).unwrap();
    // SAFETY: live locals; the reader is closed once.
    unsafe {
        let mut r = null_mut();
        assert_eq!(
            kpk_reader_open_memory(file.as_ptr().cast(), file.len(), 1, &mut r),
            KPK_OK
        );
        let mut buf = vec![0u8; value.len()];
        let mut got = 0;
        let status = kpk_reader_read(r, 0, 0, buf.as_mut_ptr().cast(), buf.len(), &mut got);
        assert_eq!(status, KPK_ERROR_DICTIONARY, "{}", last_error());
        assert!(last_error().contains("dictionary"), "{}", last_error());
        kpk_reader_close(r);
    }
}

#[test]
fn the_last_status_is_the_last_errors_kind() {
    let mut store = std::ptr::null_mut();
    let missing = c("/nonexistent/kompakt/store");
    let must_exist = kpk_store_options {
        must_exist: 1,
        ..<kpk_store_options as crate::options::SizedStruct>::zeroed()
    };
    // SAFETY: live locals, or NULL where the header allows it.
    let status = unsafe { kpk_store_open_with(missing.as_ptr(), &must_exist, &mut store) };
    assert_ne!(status, KPK_OK);
    assert_eq!(kpk_last_status(), status, "{}", last_error());
    let threads = kpk_store_options {
        threads: -1,
        ..must_exist
    };
    // SAFETY: as above.
    assert_eq!(
        unsafe { kpk_store_open_with(missing.as_ptr(), &threads, &mut store) },
        KPK_ERROR_OPTION
    );
    assert_eq!(kpk_last_status(), KPK_ERROR_OPTION);
}
