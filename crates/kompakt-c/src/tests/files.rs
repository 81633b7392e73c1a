//! Writers and readers: files (atomic, their errors naming them) and memory, typed streams.

use super::*;
use crate::status::guard;
use std::ptr::null;
use std::sync::Arc;

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
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
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
    let opts = kpk_write_options {
        level: 5,
        threads: 1,
        ..zero_options()
    };
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        // Aborted: the old content stays, no temporary file is left.
        let mut w = null_mut();
        assert_eq!(kpk_writer_open_file(cpath.as_ptr(), &opts, &mut w), KPK_OK);
        let mut s = 0;
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(kpk_writer_write(w, s, b"hello".as_ptr().cast(), 5), KPK_OK);
        kpk_writer_abort(w);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // Finished: the new file, readable by the core.
        assert_eq!(kpk_writer_open_file(cpath.as_ptr(), &opts, &mut w), KPK_OK);
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(kpk_writer_write(w, s, b"hello".as_ptr().cast(), 5), KPK_OK);
        assert_eq!(kpk_writer_finish(w, null_mut()), KPK_OK);
        assert_eq!(kompakt::decompress(&std::fs::read(&path).unwrap()).unwrap(), b"hello");

        // Either sync setting writes the same file atomically; another is refused, named.
        for (sync, status) in [("always", KPK_OK), ("none", KPK_OK), ("sometimes", KPK_ERROR_OPTION)] {
            let sync = c(sync);
            let opts = kpk_write_options {
                size: std::mem::size_of::<kpk_write_options>() as u32,
                sync: sync.as_ptr(),
                ..opts
            };
            let mut w = null_mut();
            assert_eq!(kpk_writer_open_file(cpath.as_ptr(), &opts, &mut w), status);
            if status != KPK_OK {
                assert!(
                    last_error().contains("x.kpk") && last_error().contains("\"always\" (fsync each file)"),
                    "{}",
                    last_error()
                );
                continue;
            }
            assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
            assert_eq!(kpk_writer_write(w, s, b"synced".as_ptr().cast(), 6), KPK_OK);
            assert_eq!(kpk_writer_finish(w, null_mut()), KPK_OK);
            assert_eq!(kompakt::decompress(&std::fs::read(&path).unwrap()).unwrap(), b"synced");
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        }

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
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let codec = c("brotli");
        assert_eq!(kpk_writer_open_memory(&codec_options(&codec), &mut w), KPK_ERROR_OPTION);
        assert!(
            last_error().contains("zstd"),
            "the valid codecs are named: {}",
            last_error()
        );
        let zstd = c("zstd");
        let zstd99 = kpk_write_options {
            level: 99,
            ..codec_options(&zstd)
        };
        assert_eq!(kpk_writer_open_memory(&zstd99, &mut w), KPK_ERROR_OPTION);
        let threads = kpk_write_options {
            threads: -1,
            ..zero_options()
        };
        assert_eq!(kpk_writer_open_memory(&threads, &mut w), KPK_ERROR_OPTION);
        assert!(last_error().contains("threads"), "{}", last_error());
        assert_eq!(kpk_writer_open_memory(null(), null_mut()), KPK_ERROR_USAGE);
        assert_eq!(kpk_writer_write(null_mut(), 0, null(), 0), KPK_ERROR_USAGE);
        assert_eq!(kpk_writer_finish(null_mut(), null_mut()), KPK_ERROR_USAGE);
        let mut r = null_mut();
        assert_eq!(kpk_reader_open_memory(null(), 10, 0, &mut r), KPK_ERROR_USAGE);
        assert_eq!(kpk_reader_open_memory(null(), 0, 0, &mut r), KPK_ERROR_CORRUPT);
        assert_eq!(kpk_reader_stream_count(null()), 0);
        // A write to a stream that does not exist.
        let level60 = kpk_write_options {
            level: 60,
            threads: 1,
            ..zero_options()
        };
        assert_eq!(kpk_writer_open_memory(&level60, &mut w), KPK_OK);
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
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    let size_with = |typesize: u32, filter: Option<&str>| unsafe {
        let mut w = null_mut();
        assert_eq!(kpk_writer_open_memory(null(), &mut w), KPK_OK);
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

#[test]
fn urls_are_read_never_written_and_unknown_schemes_are_refused() {
    let batch = || {
        let rows: arrow_array::ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3]));
        let batch = arrow_array::RecordBatch::try_from_iter([("x", rows)]).unwrap();
        let array = arrow_array::StructArray::from(batch);
        let (a, s) = arrow_array::ffi::to_ffi(&arrow_array::Array::into_data(array)).unwrap();
        (Box::new(a), Box::new(s))
    };
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
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
        assert_eq!(kpk_store_open(gs.as_ptr(), null(), &mut st), KPK_ERROR_OPTION);
        assert!(st.is_null());

        let s3 = c("s3://bucket/file.kpk");
        let mut w = null_mut();
        assert_eq!(kpk_writer_open_file(s3.as_ptr(), null(), &mut w), KPK_ERROR_USAGE);
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
