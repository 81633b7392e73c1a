//! Tables through the C API, called as C calls it (raw pointers).

use super::*;
use crate::options::SizedStruct;
use crate::tests::last_error;
use crate::{kpk_bytes, kpk_bytes_free, KPK_ERROR_CORRUPT, KPK_ERROR_OPTION, KPK_ERROR_USAGE, KPK_LEVEL_NONE, KPK_OK};
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, ArrayRef, DictionaryArray, Float64Array, Int32Array, RecordBatch, StringArray, StructArray};
use kompakt_table::TableReader;
use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::sync::Arc;

/// Rows `start..start + n` of a table sorted by `x`.
fn batch_at(start: usize, n: usize) -> RecordBatch {
    let rows = start..start + n;
    let ints = Int32Array::from_iter(rows.clone().map(|i| (i % 5 != 0).then_some(i as i32)));
    let reals = Float64Array::from_iter_values(rows.clone().map(|i| i as f64 / 8.0));
    let text = StringArray::from_iter(rows.clone().map(|i| (i % 3 != 0).then(|| format!("row {i}"))));
    let dict: DictionaryArray<arrow_array::types::Int32Type> = rows.map(|i| ["a", "b", "c"][i % 3]).collect();
    RecordBatch::try_from_iter([
        ("i", Arc::new(ints) as ArrayRef),
        ("x", Arc::new(reals) as ArrayRef),
        ("s", Arc::new(text) as ArrayRef),
        ("d", Arc::new(dict) as ArrayRef),
    ])
    .unwrap()
}

fn batch(n: usize) -> RecordBatch {
    batch_at(0, n)
}

/// Options that leave everything to the table's defaults: all zero.
fn default_options() -> kpk_table_options {
    kpk_table_options::zeroed()
}

/// The batch exported as a C caller would hand it over.
fn exported(b: &RecordBatch) -> (FFI_ArrowSchema, FFI_ArrowArray) {
    let (array, schema) = to_ffi(&StructArray::from(b.clone()).to_data()).unwrap();
    (schema, array)
}

#[test]
fn a_table_written_through_the_c_data_interface_reads_back_by_column_and_row_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
    let b = batch(50_000);
    let key = CString::new("r").unwrap();
    let value = CString::new("{\"x\": 1}").unwrap();
    let sort = CString::new("x").unwrap();
    let (keys, values, sorts) = ([key.as_ptr()], [value.as_ptr()], [sort.as_ptr()]);
    let zstd = CString::new("zstd:1").unwrap();
    let opts = kpk_table_options {
        size: std::mem::size_of::<kpk_table_options>() as u32,
        threads: 2,
        rows_per_group: 4096,
        sort_columns: sorts.as_ptr(),
        sort_descending: [0u8].as_ptr(),
        sort_nulls_first: [1u8].as_ptr(),
        n_sort: 1,
        metadata_keys: keys.as_ptr(),
        metadata_values: values.as_ptr(),
        n_metadata: 1,
        string_codec: zstd.as_ptr(),
        ..default_options()
    };
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let (mut schema, mut array) = exported(&b);
        assert_eq!(
            kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts),
            KPK_OK,
            "{}",
            last_error()
        );
        assert!(array.is_released(), "the array is moved into the call");
        // An append keeps the sort key: rows before the last are refused, the rest taken.
        let (mut schema, mut array) = exported(&b.slice(0, 100));
        let mut rows = 0;
        assert_eq!(
            kpk_table_append(path.as_ptr(), &mut schema, &mut array, null(), &mut rows),
            KPK_ERROR_USAGE
        );
        assert!(last_error().contains("\"x\""), "{}", last_error());
        let (mut schema, mut array) = exported(&batch_at(50_000, 100));
        assert_eq!(
            kpk_table_append(path.as_ptr(), &mut schema, &mut array, null(), &mut rows),
            KPK_OK
        );
        assert_eq!(rows, 100);

        let mut t = null_mut();
        assert_eq!(
            kpk_table_open_file(path.as_ptr(), 2, &mut t),
            KPK_OK,
            "{}",
            last_error()
        );
        assert_eq!(kpk_table_num_rows(t), 50_100);
        // The plain strings took the string codec (the appended rows, the default).
        let codecs: Vec<Vec<String>> = TableReader::open(dir.path().join("t.kpk"))
            .unwrap()
            .summary()
            .into_iter()
            .map(|c| c.codecs.into_keys().collect())
            .collect();
        assert!(codecs[2].contains(&"zstd".to_string()), "{codecs:?}");
        assert_eq!(kpk_table_rows_per_group(t), 4096);
        assert_eq!(kpk_table_sort_key_count(t), 1);
        let (mut name, mut desc, mut nulls_first) = (kpk_bytes::from_vec(Vec::new()), 9, 9);
        assert_eq!(kpk_table_sort_key(t, 0, &mut name, &mut desc, &mut nulls_first), KPK_OK);
        assert_eq!(
            (std::slice::from_raw_parts(name.data, name.len), desc, nulls_first),
            (&b"x"[..], 0, 1)
        );
        kpk_bytes_free(&mut name);
        let (mut meta, mut found) = (kpk_bytes::from_vec(Vec::new()), 0);
        assert_eq!(kpk_table_metadata(t, key.as_ptr(), &mut meta, &mut found), KPK_OK);
        assert_eq!(
            (std::slice::from_raw_parts(meta.data, meta.len), found),
            (&b"{\"x\": 1}"[..], 1)
        );
        kpk_bytes_free(&mut meta);

        // Fixed width straight into caller memory, with the validity of every row.
        let mut ints = vec![0i32; 10_000];
        let mut validity = vec![0u8; 10_000 / 8];
        let mut has_nulls = 0;
        assert_eq!(
            kpk_table_read_into(
                t,
                0,
                3000,
                13_000,
                ints.as_mut_ptr().cast(),
                40_000,
                validity.as_mut_ptr(),
                &mut has_nulls
            ),
            KPK_OK
        );
        assert_eq!(has_nulls, 1);
        for (k, &v) in ints.iter().enumerate() {
            let i = 3000 + k as i32;
            let valid = validity[k / 8] >> (k % 8) & 1 == 1;
            assert_eq!(valid, i % 5 != 0, "row {i}");
            if valid {
                assert_eq!(v, i);
            }
        }
        let mut reals = vec![0f64; 5];
        assert_eq!(
            kpk_table_read_into(
                t,
                1,
                50_095,
                50_100,
                reals.as_mut_ptr().cast(),
                40,
                null_mut(),
                &mut has_nulls
            ),
            KPK_OK
        );
        assert_eq!(
            (reals, has_nulls),
            ((50_095..50_100).map(|i| i as f64 / 8.0).collect(), 0)
        );
        // Strings and dictionaries through the C data interface: equal to slicing.
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        let cols = [3u32, 2];
        assert_eq!(
            kpk_table_read(t, cols.as_ptr(), 2, 4000, 9000, &mut schema, &mut array),
            KPK_OK
        );
        let data = from_ffi(array, &schema).unwrap();
        let got = StructArray::from(data);
        assert_eq!(got.column(0).to_data(), b.column(3).slice(4000, 5000).to_data());
        assert_eq!(got.column(1).to_data(), b.column(2).slice(4000, 5000).to_data());
        kpk_table_close(t);
    }
}

#[test]
fn rows_by_number_through_the_c_api() {
    let dir = tempfile::tempdir().unwrap();
    let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
    let b = batch(20_000);
    let opts = kpk_table_options {
        threads: 2,
        rows_per_group: 1000,
        ..default_options()
    };
    let rows = [19_999u64, 5, 12_345, 5, 0, 10];
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let (mut schema, mut array) = exported(&b);
        assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts), KPK_OK);
        let mut t = null_mut();
        assert_eq!(kpk_table_open_file(path.as_ptr(), 2, &mut t), KPK_OK);
        // Fixed width into caller memory, in the order asked, with validity.
        let mut ints = [0i32; 6];
        let mut validity = [0u8; 1];
        let mut has_nulls = 0;
        assert_eq!(
            kpk_table_take_into(
                t,
                0,
                rows.as_ptr(),
                rows.len(),
                ints.as_mut_ptr().cast(),
                24,
                validity.as_mut_ptr(),
                &mut has_nulls
            ),
            KPK_OK,
            "{}",
            last_error()
        );
        assert_eq!(has_nulls, 1);
        for (k, &r) in rows.iter().enumerate() {
            let valid = validity[0] >> k & 1 == 1;
            assert_eq!(valid, r % 5 != 0, "row {r}");
            if valid {
                assert_eq!(ints[k], r as i32);
            }
        }
        // Every type as a struct array: equal to taking from the batch.
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        assert_eq!(
            kpk_table_take(t, null(), 0, rows.as_ptr(), rows.len(), &mut schema, &mut array),
            KPK_OK
        );
        let got = StructArray::from(from_ffi(array, &schema).unwrap());
        let indices = arrow_array::UInt64Array::from(rows.to_vec());
        for c in 0..4 {
            let want = arrow_select::take::take(b.column(c).as_ref(), &indices, None).unwrap();
            assert_eq!(got.column(c).as_ref(), want.as_ref(), "column {c}");
        }
        // No rows; a row past the end; a column that is not fixed-width; a short buffer.
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        assert_eq!(
            kpk_table_take(t, [2u32].as_ptr(), 1, null(), 0, &mut schema, &mut array),
            KPK_OK
        );
        assert_eq!(StructArray::from(from_ffi(array, &schema).unwrap()).len(), 0);
        let past = [20_000u64];
        assert_eq!(
            kpk_table_take_into(
                t,
                0,
                past.as_ptr(),
                1,
                ints.as_mut_ptr().cast(),
                4,
                null_mut(),
                &mut has_nulls
            ),
            KPK_ERROR_OPTION
        );
        for (column, len) in [(2u32, 4usize), (3, 4), (0, 8), (9, 4)] {
            assert_eq!(
                kpk_table_take_into(
                    t,
                    column,
                    rows.as_ptr(),
                    1,
                    ints.as_mut_ptr().cast(),
                    len,
                    null_mut(),
                    &mut has_nulls
                ),
                KPK_ERROR_USAGE,
                "column {column}, {len} bytes"
            );
        }
        kpk_table_close(t);
    }
}

#[test]
fn bad_batches_handles_and_ranges_are_errors_with_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        assert_eq!(
            kpk_table_write(path.as_ptr(), null_mut(), null_mut(), null()),
            KPK_ERROR_USAGE
        );
        // A plain array is not a batch of columns.
        let (mut array, mut schema) = to_ffi(&Int32Array::from(vec![1, 2]).to_data()).unwrap();
        assert_eq!(
            kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("struct array"), "{}", last_error());
        // A released array (moved already).
        let (mut schema, mut array) = exported(&batch(10));
        assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()), KPK_OK);
        assert_eq!(
            kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()),
            KPK_ERROR_USAGE
        );
        // A codec that does not exist names the valid ones.
        let bad = CString::new("zip").unwrap();
        let opts = kpk_table_options {
            codec: bad.as_ptr(),
            ..default_options()
        };
        let (mut schema, mut array) = exported(&batch(10));
        assert_eq!(
            kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("zstd"), "{}", last_error());

        let mut t = null_mut();
        assert_eq!(kpk_table_open_file(path.as_ptr(), 0, &mut t), KPK_OK);
        let mut v = [0i32; 4];
        let mut has_nulls = 0;
        assert_eq!(
            kpk_table_read_into(t, 0, 5, 4, v.as_mut_ptr().cast(), 0, null_mut(), &mut has_nulls),
            KPK_ERROR_OPTION
        );
        assert_eq!(
            kpk_table_read_into(t, 0, 0, 4, v.as_mut_ptr().cast(), 8, null_mut(), &mut has_nulls),
            KPK_ERROR_OPTION
        );
        assert_eq!(
            kpk_table_read_into(t, 2, 0, 4, v.as_mut_ptr().cast(), 16, null_mut(), &mut has_nulls),
            KPK_ERROR_OPTION
        );
        assert!(last_error().contains("fixed-width"), "{}", last_error());
        // A prefetch hint is checked as a read is; on a file it does nothing else.
        assert_eq!(kpk_table_prefetch(t, null(), 0, 0, 4), KPK_OK);
        assert_eq!(kpk_table_prefetch(t, [9u32].as_ptr(), 1, 0, 4), KPK_ERROR_OPTION);
        assert_eq!(kpk_table_prefetch(t, null(), 0, 3, 99), KPK_ERROR_OPTION);
        assert_eq!(
            kpk_table_read_into(t, 0, 0, 11, v.as_mut_ptr().cast(), 44, null_mut(), &mut has_nulls),
            KPK_ERROR_OPTION
        );
        assert_eq!(kpk_table_num_columns(t), 4);
        let (mut stored, mut encoded) = ([0u64; 4], [0u64; 4]);
        assert_eq!(
            kpk_table_column_sizes(t, stored.as_mut_ptr(), encoded.as_mut_ptr(), 3),
            KPK_ERROR_OPTION
        );
        assert_eq!(
            kpk_table_column_sizes(t, stored.as_mut_ptr(), encoded.as_mut_ptr(), 4),
            KPK_OK
        );
        assert!(stored.iter().chain(&encoded).all(|&b| b > 0), "{stored:?} {encoded:?}");
        kpk_table_close(t);
        kpk_table_close(null_mut());
        assert_eq!(kpk_table_num_rows(null()), 0);

        // A damaged file in memory is refused, not read.
        let mut bytes = std::fs::read(dir.path().join("t.kpk")).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x10;
        let mut t = null_mut();
        let status = kpk_table_open_memory(bytes.as_ptr().cast(), bytes.len(), 1, &mut t);
        if status == KPK_OK {
            let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
            assert_eq!(
                kpk_table_read(t, null(), 0, 0, 10, &mut schema, &mut array),
                KPK_ERROR_CORRUPT
            );
            kpk_table_close(t);
        } else {
            assert_eq!(status, KPK_ERROR_CORRUPT);
        }
    }
}

#[test]
fn a_fingerprint_is_the_same_for_an_unchanged_file_and_changes_with_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.kpk");
    let path = CString::new(file.to_str().unwrap()).unwrap();
    let fingerprint = || {
        let mut t = null_mut();
        // SAFETY: live locals; the handle is closed once.
        unsafe {
            assert_eq!(
                kpk_table_open_file(path.as_ptr(), 1, &mut t),
                KPK_OK,
                "{}",
                last_error()
            );
            let f = kpk_table_fingerprint(t);
            kpk_table_close(t);
            f
        }
    };
    let write = |b: &RecordBatch| {
        let (mut schema, mut array) = exported(b);
        // SAFETY: live locals; the array is moved into the call.
        assert_eq!(
            unsafe { kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()) },
            KPK_OK
        );
    };
    write(&batch(1000));
    let first = fingerprint();
    assert_ne!(first, 0);
    assert_eq!(fingerprint(), first, "two opens of an unchanged file");
    // The same rows again (a new file, same bytes): the same fingerprint; other rows: another.
    write(&batch(1000));
    assert_eq!(fingerprint(), first);
    write(&batch_at(1, 1000));
    assert_ne!(fingerprint(), first);
    // SAFETY: NULL is allowed.
    assert_eq!(unsafe { kpk_table_fingerprint(null()) }, 0);
}

#[test]
fn a_bad_key_anywhere_in_a_large_column_is_an_option_error_naming_it() {
    // Columns are checked in row ranges on every core: a key past the dictionary in the first,
    // a middle or the last range is found, and nothing is written.
    use arrow_buffer::Buffer;
    use arrow_data::ArrayData;
    use arrow_schema::DataType;
    let n = (2 << 20) + 17;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.kpk");
    let path = CString::new(file.to_str().unwrap()).unwrap();
    for bad_at in [0, (1 << 20) - 1, 1 << 20, n - 1] {
        let keys: Vec<i32> = (0..n).map(|i| if i == bad_at { 3 } else { (i % 3) as i32 }).collect();
        let values = StringArray::from(vec!["a", "b", "c"]).into_data();
        let builder = ArrayData::builder(DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::Utf8),
        ))
        .len(n)
        .add_buffer(Buffer::from_vec(keys))
        .add_child_data(values);
        // SAFETY: the buffers match the type and the length; one key is past the dictionary,
        // which is what the import must refuse before reading it.
        let dict = DictionaryArray::<arrow_array::types::Int32Type>::from(unsafe { builder.build_unchecked() });
        let plain: ArrayRef = Arc::new(Int32Array::from_iter_values(0..n as i32));
        let b = RecordBatch::try_from_iter([("x", plain), ("f", Arc::new(dict) as ArrayRef)]).unwrap();
        let (mut schema, mut array) = exported(&b);
        // SAFETY: live locals; the array is moved into the call.
        let status = unsafe { kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()) };
        assert_eq!(status, KPK_ERROR_OPTION, "bad key at {bad_at}");
        assert!(
            last_error().contains("column \"f\" is not valid Arrow data"),
            "{}",
            last_error()
        );
        assert!(!file.exists());
    }
}

#[test]
fn zero_options_are_the_tables_defaults_and_level_none_stores_raw_pages() {
    let dir = tempfile::tempdir().unwrap();
    let b = batch(20_000);
    let codecs_with = |opts: *const kpk_table_options, name: &str| -> Vec<String> {
        let path = dir.path().join(name);
        let cpath = CString::new(path.to_str().unwrap()).unwrap();
        let (mut schema, mut array) = exported(&b);
        // SAFETY: live locals; the array is moved into the call.
        let status = unsafe { kpk_table_write(cpath.as_ptr(), &mut schema, &mut array, opts) };
        assert_eq!(status, KPK_OK, "{}", last_error());
        let mut all: Vec<String> = TableReader::open(&path)
            .unwrap()
            .summary()
            .into_iter()
            .flat_map(|c| c.codecs.into_keys())
            .collect();
        all.sort();
        all.dedup();
        all
    };
    let zero = codecs_with(&default_options(), "zero.kpk");
    assert_eq!(codecs_with(null(), "null.kpk"), zero);
    assert!(zero.contains(&"zstd".to_string()), "{zero:?}");
    let raw = kpk_table_options {
        level: KPK_LEVEL_NONE,
        ..default_options()
    };
    assert_eq!(codecs_with(&raw, "raw.kpk"), ["none"]);

    // Rows per group through the front door: its message names the valid range and the file.
    let path = CString::new(dir.path().join("bad.kpk").to_str().unwrap()).unwrap();
    let too_many = kpk_table_options {
        rows_per_group: 1 << 25,
        ..default_options()
    };
    let (mut schema, mut array) = exported(&b);
    // SAFETY: live locals; the array is moved into the call.
    let status = unsafe { kpk_table_write(path.as_ptr(), &mut schema, &mut array, &too_many) };
    assert_eq!(status, KPK_ERROR_OPTION);
    assert!(
        last_error().contains("invalid rows per group \"33554432\": 1..=16777216") && last_error().contains("bad.kpk"),
        "{}",
        last_error()
    );
}

/// A filter's values exported as a C caller hands them over.
fn values(a: ArrayRef) -> (FFI_ArrowSchema, FFI_ArrowArray) {
    let (array, schema) = to_ffi(&a.to_data()).unwrap();
    (schema, array)
}

#[test]
fn filtered_reads_through_the_c_api_equal_a_brute_force_filter() {
    use kompakt_table::plan::matches;
    use kompakt_table::{Filter, Op};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.kpk");
    let path = CString::new(file.to_str().unwrap()).unwrap();
    let b = batch(20_000);
    let sort = CString::new("x").unwrap();
    let sorts = [sort.as_ptr()];
    let opts = kpk_table_options {
        rows_per_group: 1000,
        sort_columns: sorts.as_ptr(),
        sort_descending: [0u8].as_ptr(),
        sort_nulls_first: [1u8].as_ptr(),
        n_sort: 1,
        ..default_options()
    };
    let (x, s, ge, lt, isin) = (
        CString::new("x").unwrap(),
        CString::new("s").unwrap(),
        CString::new(">=").unwrap(),
        CString::new("<").unwrap(),
        CString::new("in").unwrap(),
    );
    let low: ArrayRef = Arc::new(Float64Array::from(vec![1000.0]));
    let high: ArrayRef = Arc::new(Float64Array::from(vec![1500.0]));
    let listed: ArrayRef = Arc::new(StringArray::from(vec!["row 8001", "row 8002", "row 9000", "row 11999"]));
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let (mut schema, mut array) = exported(&b);
        assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts), KPK_OK);
        let mut t = null_mut();
        assert_eq!(kpk_table_open_file(path.as_ptr(), 2, &mut t), KPK_OK);
        let (mut s1, mut a1) = values(low.clone());
        let (mut s2, mut a2) = values(high.clone());
        let (mut s3, mut a3) = values(listed.clone());
        let filters = [
            kpk_filter {
                column: x.as_ptr(),
                op: ge.as_ptr(),
                values_schema: &mut s1,
                values: &mut a1,
            },
            kpk_filter {
                column: x.as_ptr(),
                op: lt.as_ptr(),
                values_schema: &mut s2,
                values: &mut a2,
            },
            kpk_filter {
                column: s.as_ptr(),
                op: isin.as_ptr(),
                values_schema: &mut s3,
                values: &mut a3,
            },
        ];
        // Only the dictionary column: the filters' columns are read for them and dropped.
        let cols = [3u32, 0];
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        assert_eq!(
            kpk_table_read_where(
                t,
                cols.as_ptr(),
                2,
                0,
                20_000,
                filters.as_ptr(),
                3,
                &mut schema,
                &mut array
            ),
            KPK_OK,
            "{}",
            last_error()
        );
        assert!(
            a1.is_released() && a2.is_released() && a3.is_released(),
            "the values are moved in"
        );
        let got = StructArray::from(from_ffi(array, &schema).unwrap());
        let rust_filters = [
            Filter::new("x", Op::Ge, low.clone()),
            Filter::new("x", Op::Lt, high.clone()),
            Filter::new("s", Op::In, listed.clone()),
        ];
        let pass = matches(&b, &rust_filters).unwrap();
        let want = arrow_select::filter::filter_record_batch(&b.project(&[3, 0]).unwrap(), &pass).unwrap();
        assert_eq!(
            got.len(),
            2,
            "rows 8002 and 11999 (the strings of 8001 and 9000 are null)"
        );
        assert_eq!(got.len(), want.num_rows());
        assert_eq!(got.column(1).as_ref(), want.column(1).as_ref());
        let keys = |a: &ArrayRef| {
            a.as_any()
                .downcast_ref::<DictionaryArray<arrow_array::types::Int32Type>>()
                .unwrap()
                .keys()
                .clone()
        };
        assert_eq!(keys(got.column(0)), keys(want.column(0)));
        assert_eq!(got.column(0).data_type(), want.column(0).data_type());

        // No filters: the plain read; no column positions: all columns.
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        assert_eq!(
            kpk_table_read_where(t, null(), 0, 100, 200, null(), 0, &mut schema, &mut array),
            KPK_OK
        );
        let got = StructArray::from(from_ffi(array, &schema).unwrap());
        assert_eq!((got.len(), got.num_columns()), (100, 4));
        assert_eq!(got.column(1).to_data(), b.column(1).slice(100, 100).to_data());
        kpk_table_close(t);
    }
}

#[test]
fn bad_filters_are_option_errors_and_their_values_are_released_still() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.kpk");
    let path = CString::new(file.to_str().unwrap()).unwrap();
    let b = batch(1000);
    let c = |s: &str| CString::new(s).unwrap();
    let (x, nope, eq, tilde) = (c("x"), c("nope"), c("=="), c("~"));
    let one = || -> ArrayRef { Arc::new(Float64Array::from(vec![1.0])) };
    // SAFETY: every pointer passed is a live local (or NULL where the header allows it), and each handle is closed once.
    unsafe {
        let (mut schema, mut array) = exported(&b);
        assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()), KPK_OK);
        let mut t = null_mut();
        assert_eq!(kpk_table_open_file(path.as_ptr(), 1, &mut t), KPK_OK);
        let read = |column: &CString, op: &CString, v: ArrayRef| {
            let (mut vs, mut va) = values(v);
            let f = [kpk_filter {
                column: column.as_ptr(),
                op: op.as_ptr(),
                values_schema: &mut vs,
                values: &mut va,
            }];
            let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
            let status = kpk_table_read_where(t, null(), 0, 0, 1000, f.as_ptr(), 1, &mut schema, &mut array);
            assert!(va.is_released(), "released whatever the call returns");
            (status, last_error())
        };
        let (status, message) = read(&x, &tilde, one());
        assert_eq!(status, KPK_ERROR_OPTION);
        assert!(message.contains("filter op") && message.contains("not in"), "{message}");
        let (status, message) = read(&nope, &eq, one());
        assert_eq!(status, KPK_ERROR_OPTION);
        assert!(message.contains("\"nope\"") && message.contains("t.kpk"), "{message}");
        let (status, message) = read(&x, &eq, Arc::new(Int32Array::from(vec![1])));
        assert_eq!(status, KPK_ERROR_OPTION);
        assert!(message.contains("Float64"), "{message}");
        let (status, _) = read(&x, &eq, Arc::new(Float64Array::from(vec![1.0, 2.0])));
        assert_eq!(status, KPK_ERROR_OPTION);
        // NULL values, a NULL table: usage errors; the other filters' values are still released.
        let (mut vs, mut va) = values(one());
        let f = [
            kpk_filter {
                column: x.as_ptr(),
                op: eq.as_ptr(),
                values_schema: &mut vs,
                values: &mut va,
            },
            kpk_filter {
                column: x.as_ptr(),
                op: eq.as_ptr(),
                values_schema: null_mut(),
                values: null_mut(),
            },
        ];
        let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
        assert_eq!(
            kpk_table_read_where(t, null(), 0, 0, 1000, f.as_ptr(), 2, &mut schema, &mut array),
            KPK_ERROR_USAGE
        );
        assert!(va.is_released());
        let (mut vs, mut va) = values(one());
        let f = [kpk_filter {
            column: x.as_ptr(),
            op: eq.as_ptr(),
            values_schema: &mut vs,
            values: &mut va,
        }];
        assert_eq!(
            kpk_table_read_where(null(), null(), 0, 0, 1, f.as_ptr(), 1, &mut schema, &mut array),
            KPK_ERROR_USAGE
        );
        assert!(va.is_released());
        assert_eq!(
            kpk_table_read_where(t, null(), 0, 0, 1001, null(), 0, &mut schema, &mut array),
            KPK_ERROR_OPTION
        );
        kpk_table_close(t);
    }
}

/// A C stream of `batches`, whose get_next fails with `error` after them when there is one.
fn stream_of(batches: Vec<RecordBatch>, error: Option<&str>) -> arrow_array::ffi_stream::FFI_ArrowArrayStream {
    use arrow_schema::ArrowError;
    let schema = batches[0].schema();
    let mut items: Vec<Result<RecordBatch, ArrowError>> = batches.into_iter().map(Ok).collect();
    if let Some(e) = error {
        items.push(Err(ArrowError::ComputeError(e.to_owned())));
    }
    let reader = arrow_array::RecordBatchIterator::new(items, schema);
    arrow_array::ffi_stream::FFI_ArrowArrayStream::new(Box::new(reader))
}

#[test]
fn a_stream_of_batches_writes_the_bytes_of_one_batch_and_a_failing_stream_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.kpk");
    let streamed = dir.path().join("streamed.kpk");
    let (path_whole, path_streamed) = (
        CString::new(whole.to_str().unwrap()).unwrap(),
        CString::new(streamed.to_str().unwrap()).unwrap(),
    );
    // Rounds of 16 groups of 1000 rows, as the R package cuts its batches, and a short last one.
    let opts = kpk_table_options {
        rows_per_group: 1000,
        ..default_options()
    };
    let b = batch(50_000);
    let (mut schema, mut array) = exported(&b);
    assert_eq!(
        unsafe { kpk_table_write(path_whole.as_ptr(), &mut schema, &mut array, &opts) },
        KPK_OK
    );
    let parts = vec![
        b.slice(0, 16_000),
        b.slice(16_000, 16_000),
        b.slice(32_000, 16_000),
        b.slice(48_000, 2_000),
    ];
    let mut stream = stream_of(parts, None);
    assert_eq!(
        unsafe { kpk_table_write_stream(path_streamed.as_ptr(), &mut stream, &opts) },
        KPK_OK
    );
    assert!(stream.release.is_none(), "the stream is moved in");
    assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&streamed).unwrap());

    // A producer that fails after two batches: its message, and no file.
    let failed = dir.path().join("failed.kpk");
    let path_failed = CString::new(failed.to_str().unwrap()).unwrap();
    let mut stream = stream_of(
        vec![b.slice(0, 16_000), b.slice(16_000, 16_000)],
        Some("factor code 7 has no level"),
    );
    let status = unsafe { kpk_table_write_stream(path_failed.as_ptr(), &mut stream, &opts) };
    assert_eq!(status, KPK_ERROR_OPTION);
    assert!(last_error().contains("factor code 7 has no level"), "{}", last_error());
    assert!(!failed.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file is left"
    );

    // A batch that is not valid Arrow data (a dictionary key past its values) is the same
    // error as kpk_table_write's, and a batch of other columns than the schema's is refused.
    let bad: ArrayRef = {
        use arrow_buffer::Buffer;
        use arrow_data::ArrayData;
        use arrow_schema::DataType;
        let keys: Vec<i32> = (0..16_000).map(|i| if i == 9_999 { 3 } else { i % 3 }).collect();
        let builder = ArrayData::builder(DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::Utf8),
        ))
        .len(16_000)
        .add_buffer(Buffer::from_vec(keys))
        .add_child_data(StringArray::from(vec!["a", "b", "c"]).into_data());
        // SAFETY: the buffers match the type and the length; one key is past the dictionary,
        // which the import must refuse before reading it.
        Arc::new(DictionaryArray::<arrow_array::types::Int32Type>::from(unsafe {
            builder.build_unchecked()
        }))
    };
    let good = b.slice(0, 16_000);
    let mut columns: Vec<ArrayRef> = good.columns().to_vec();
    columns[3] = bad;
    let with_bad_key = RecordBatch::try_new(good.schema(), columns).unwrap();
    let mut stream = stream_of(vec![good.clone(), with_bad_key], None);
    assert_eq!(
        unsafe { kpk_table_write_stream(path_failed.as_ptr(), &mut stream, &opts) },
        KPK_ERROR_OPTION
    );
    assert!(
        last_error().contains("column \"d\" is not valid Arrow data"),
        "{}",
        last_error()
    );
    assert!(!failed.exists());
    let narrower = good.project(&[0, 1]).unwrap();
    let mut stream = arrow_array::ffi_stream::FFI_ArrowArrayStream::new(Box::new(
        arrow_array::RecordBatchIterator::new([Ok(narrower)], good.schema()),
    ));
    assert_eq!(
        unsafe { kpk_table_write_stream(path_failed.as_ptr(), &mut stream, &opts) },
        KPK_ERROR_OPTION
    );
    assert!(last_error().contains("has 2 columns, its schema 4"), "{}", last_error());
    assert!(!failed.exists());

    // A NULL stream, and one without callbacks, are errors too.
    assert_eq!(
        unsafe { kpk_table_write_stream(path_failed.as_ptr(), null_mut(), &opts) },
        KPK_ERROR_USAGE
    );
    let mut empty = arrow_array::ffi_stream::FFI_ArrowArrayStream::empty();
    assert_ne!(
        unsafe { kpk_table_write_stream(path_failed.as_ptr(), &mut empty, &opts) },
        KPK_OK
    );
    assert!(!failed.exists());
}
