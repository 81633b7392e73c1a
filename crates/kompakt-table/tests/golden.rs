//! Golden table files: tables written by every table layout must stay readable forever.
//!
//! `tests/golden/v1/table/fst.kpk` (table layout 1) holds [`golden_batch`] (100 rows, 6 columns
//! of different types, with nulls) written with 32 rows per group, so it has three full row
//! groups and a short last one. `tests/golden/v1/table/layout2.kpk` (table layout 2) holds
//! [`runs_batch`], whose columns are stored as runs and as a dictionary with 2-byte codes.
//! `tests/golden/v1/table/layout3.kpk` (table layout 3) holds [`scaled_batch`], whose columns
//! are scaled integers and decimal floats (with exceptions, and scaled codes inside).
//! `tests/golden/v1/table/layout4.kpk` (table layout 4) holds [`shared_batch`], whose string
//! and binary columns share a dictionary across row groups, and whose sparse nulls are stored
//! as row numbers. `tests/golden/v1/table/layout5.kpk` (table layout 5) holds
//! [`symbols_batch`], whose URL-like strings and paths are coded with symbol tables.
//! `tests/golden/v1/table/layout6.kpk` (table layout 6) holds [`numbers_batch`], whose float
//! column shares a dictionary across row groups. `tests/golden/v1/table/layout7.kpk` (table
//! layout 7) holds [`sparse_batch`], whose columns of numbers with many nulls store their
//! valid rows' values only (a list's items too). `tests/golden/v1/table/layout8.kpk` (table
//! layout 8) holds [`packed_batch`], whose columns of a few distinct floats and integers are
//! dictionary pages with bit-packed codes. `tests/golden/v1/table/layout9.kpk` (table layout
//! 9) holds [`nested_dict_batch`], whose dictionaries keep their values as a nested page
//! (decimal codes, bit-packed integers) or unshuffled, and pack codes of 10 bits.
//! `tests/golden/v1/table/statistics.kpk` (table layout 1 with a statistics section, version 1)
//! holds [`golden_batch`] again, with its row-group statistics.
//! `tests/golden/v1/table/nested.kpk` holds [`nested_batch`]: a list, a struct and a map column
//! (maps since the JVM round: a map is stored as a list of its entries).
//! Golden files are never rewritten: to create
//! them (or a new case), run
//! `cargo test --release -p kompakt-table --test golden -- --ignored write_missing_golden_table`,
//! which writes only files that do not exist yet.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int8Type, TimestampMicrosecondType};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, DictionaryArray, Float64Array, Int32Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use kompakt_table::{write_table_file, TableOptions, TableReader};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

const ROWS: usize = 100;
const ROWS_PER_GROUP: u32 = 32;
const PRICES: [f64; 5] = [9.99, 19.5, 0.25, -3.0, 1234.5];
const CITIES: [&str; 4] = ["Oslo", "Lima", "Paris", "Quito"];

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/fst.kpk")
}

fn runs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout2.kpk")
}

fn scaled_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout3.kpk")
}

fn shared_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout4.kpk")
}

fn statistics_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/statistics.kpk")
}

fn nested_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/nested.kpk")
}

fn symbols_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout5.kpk")
}

fn numbers_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout6.kpk")
}

fn sparse_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout7.kpk")
}

fn packed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout8.kpk")
}

fn nested_dict_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1/table/layout9.kpk")
}

// The value of each column at row `i`: the golden file's content, recomputed.

fn flag(i: usize) -> Option<bool> {
    (i % 7 != 3).then_some(i.is_multiple_of(3))
}

fn id(i: usize) -> i32 {
    i as i32 + 1
}

fn price(i: usize) -> Option<f64> {
    (i % 17 != 16).then_some(PRICES[(i * i + 3 * i) % 5])
}

fn city(i: usize) -> Option<&'static str> {
    (i % 11 != 5).then_some(CITIES[(i / 3 + i % 2) % 4])
}

fn note(i: usize) -> Option<String> {
    match i % 13 {
        0 => None,
        1 => Some(String::new()),
        _ if i % 10 == 7 => Some(format!("café №{i} — {}", CITIES[i % 4])),
        _ => Some(format!("row {i}")),
    }
}

fn ts(i: usize) -> Option<i64> {
    (i % 19 != 2).then_some(1_700_000_000_000_000 + i as i64 * 1_500_000 + (i % 3) as i64 * 7)
}

fn golden_schema() -> Schema {
    let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
    Schema::new(vec![
        Field::new("flag", DataType::Boolean, true),
        Field::new("id", DataType::Int32, false),
        Field::new("price", DataType::Float64, true),
        Field::new("city", dict, true),
        Field::new("note", DataType::Utf8, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ])
    .with_metadata([("origin".to_string(), "kompakt golden v1".to_string())].into())
}

fn golden_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(BooleanArray::from_iter((0..ROWS).map(flag))),
        Arc::new(Int32Array::from_iter_values((0..ROWS).map(id))),
        Arc::new(Float64Array::from_iter((0..ROWS).map(price))),
        Arc::new((0..ROWS).map(city).collect::<DictionaryArray<Int8Type>>()),
        Arc::new(StringArray::from_iter((0..ROWS).map(note))),
        Arc::new(TimestampMicrosecondArray::from_iter((0..ROWS).map(ts)).with_timezone("UTC")),
    ];
    RecordBatch::try_new(Arc::new(golden_schema()), columns).unwrap()
}

fn golden_options() -> TableOptions {
    TableOptions {
        rows_per_group: ROWS_PER_GROUP,
        threads: 1,
        metadata: HashMap::from([(
            "written by".to_string(),
            "crates/kompakt-table/tests/golden.rs".to_string(),
        )]),
        ..TableOptions::default()
    }
}

/// The golden table at `path`, checked to be of table layout `layout` with `rows` rows of
/// `schema`.
fn open_golden(path: PathBuf, layout: u16, rows: usize, schema: Schema) -> TableReader {
    assert!(
        path.is_file(),
        "missing {} (see the top of this file to write it)",
        path.display()
    );
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.layout(), layout);
    assert_eq!(t.num_rows(), rows as u64);
    assert_eq!(*t.schema(), schema);
    t
}

/// Default options with `rows_per_group` rows a group, on one thread.
fn one_thread(rows_per_group: u32) -> TableOptions {
    TableOptions {
        rows_per_group,
        threads: 1,
        ..TableOptions::default()
    }
}

/// Reads each case's rows of its columns and hands every column of every batch to `check`
/// (column number, the array, its first row), then checks that the batches covered the rows.
fn check_reads(
    t: &TableReader,
    cases: &[(std::ops::Range<usize>, Vec<usize>)],
    mut check: impl FnMut(usize, &dyn Array, usize),
) {
    for (rows, columns) in cases {
        let (_, batches) = t.read(Some(columns), rows.start as u64..rows.end as u64, 1).unwrap();
        let mut at = rows.start;
        for b in &batches {
            for (k, &c) in columns.iter().enumerate() {
                check(c, b.column(k).as_ref(), at);
            }
            at += b.num_rows();
        }
        assert_eq!(at, rows.end);
    }
}

/// Checks that `batches` hold column `name` of rows `rows.start..` exactly.
fn check_column(batches: &[RecordBatch], col: usize, name: &str, start: usize) {
    let mut i = start;
    for b in batches {
        let a = b.column(col);
        let what = |r: usize| format!("column {name}, row {}", i + r);
        match name {
            "flag" => {
                for (r, v) in a.as_boolean().iter().enumerate() {
                    assert_eq!(v, flag(i + r), "{}", what(r));
                }
            }
            "id" => {
                assert_eq!(a.null_count(), 0, "{name}");
                for (r, v) in a.as_primitive::<Int32Type>().iter().enumerate() {
                    assert_eq!(v, Some(id(i + r)), "{}", what(r));
                }
            }
            "price" => {
                for (r, v) in a.as_primitive::<Float64Type>().iter().enumerate() {
                    assert_eq!(v.map(f64::to_bits), price(i + r).map(f64::to_bits), "{}", what(r));
                }
            }
            "city" => {
                let dict = a.as_dictionary::<Int8Type>();
                let values = dict.downcast_dict::<StringArray>().expect("utf8 dictionary values");
                for (r, v) in values.into_iter().enumerate() {
                    assert_eq!(v, city(i + r), "{}", what(r));
                }
            }
            "note" => {
                for (r, v) in a.as_string::<i32>().iter().enumerate() {
                    assert_eq!(v, note(i + r).as_deref(), "{}", what(r));
                }
            }
            "ts" => {
                for (r, v) in a.as_primitive::<TimestampMicrosecondType>().iter().enumerate() {
                    assert_eq!(v, ts(i + r), "{}", what(r));
                }
            }
            other => panic!("unexpected column {other}"),
        }
        i += b.num_rows();
    }
}

#[test]
fn golden_table_reads_back_exactly() {
    let path = golden_path();
    assert!(
        path.is_file(),
        "missing {} (see the top of this file to write it)",
        path.display()
    );
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.num_rows(), ROWS as u64);
    assert_eq!(t.rows_per_group(), ROWS_PER_GROUP);
    assert_eq!(t.num_groups(), 4);
    let schema = t.schema();
    assert_eq!(*schema, golden_schema());
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["flag", "id", "price", "city", "note", "ts"]);
    assert_eq!(
        schema.field(5).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        t.user_metadata().get("written by").map(String::as_str),
        Some("crates/kompakt-table/tests/golden.rs")
    );

    // Everything: one batch per row group.
    let (read_schema, batches) = t.read(None, 0..ROWS as u64, 1).unwrap();
    assert_eq!(read_schema, schema);
    let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes, [32, 32, 32, 4]);
    for (c, name) in names.iter().enumerate() {
        check_column(&batches, c, name, 0);
    }
    // Also equal to the batch written, as Arrow arrays (the dictionary by its values, above).
    let want = golden_batch();
    let mut at = 0;
    for b in &batches {
        for c in [0, 1, 2, 4, 5] {
            assert_eq!(
                b.column(c).as_ref(),
                want.column(c).slice(at, b.num_rows()).as_ref(),
                "{}",
                names[c]
            );
        }
        at += b.num_rows();
    }

    // Rows 30..70 of two columns: across three row groups.
    let (sub_schema, batches) = t.read(Some(&[3, 2]), 30..70, 1).unwrap();
    let sub: Vec<&str> = sub_schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(sub, ["city", "price"]);
    let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes, [2, 32, 6]);
    check_column(&batches, 0, "city", 30);
    check_column(&batches, 1, "price", 30);

    // Null counts per column, as a second look at the validity bitmaps.
    let (_, all) = t.read(None, 0..ROWS as u64, 1).unwrap();
    let nulls: Vec<usize> = (0..6)
        .map(|c| all.iter().map(|b| b.column(c).null_count()).sum())
        .collect();
    assert_eq!(
        nulls,
        [
            (0..ROWS).filter(|&i| flag(i).is_none()).count(),
            0,
            (0..ROWS).filter(|&i| price(i).is_none()).count(),
            (0..ROWS).filter(|&i| city(i).is_none()).count(),
            (0..ROWS).filter(|&i| note(i).is_none()).count(),
            (0..ROWS).filter(|&i| ts(i).is_none()).count(),
        ]
    );
}

// The layout-2 golden table: sorted days, a store id with nulls, a price that changes rarely,
// product codes of one length, and a categorical level, all in runs long enough; and a
// reading with 300 distinct values (2-byte dictionary codes in the two full row groups).

const RUNS_ROWS: usize = 5000;
const RUNS_ROWS_PER_GROUP: u32 = 2048;
const LEVELS: [&str; 3] = ["low", "mid", "high"];

fn day(i: usize) -> i32 {
    19_000 + (i / 100) as i32
}

fn store(i: usize) -> Option<i32> {
    (i % 10 != 7).then_some(4_000_000 + (i / 80) as i32 * 3)
}

fn runs_price(i: usize) -> f64 {
    [2.5, -0.0, 0.0, f64::NAN][i / 30 % 4]
}

fn code(i: usize) -> String {
    format!("SKU-{:05}", i * 7919 % 100_000)
}

fn level(i: usize) -> Option<&'static str> {
    (i != 50).then_some(LEVELS[i / 90 % 3])
}

fn reading(i: usize) -> f64 {
    50.0 + (i * 7919 % 300) as f64 * 0.25
}

fn runs_schema() -> Schema {
    let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
    Schema::new(vec![
        Field::new("day", DataType::Date32, false),
        Field::new("store", DataType::Int32, true),
        Field::new("price", DataType::Float64, false),
        Field::new("code", DataType::Utf8, false),
        Field::new("level", dict, true),
        Field::new("reading", DataType::Float64, false),
    ])
}

fn runs_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Date32Array::from_iter_values((0..RUNS_ROWS).map(day))),
        Arc::new(Int32Array::from_iter((0..RUNS_ROWS).map(store))),
        Arc::new(Float64Array::from_iter_values((0..RUNS_ROWS).map(runs_price))),
        Arc::new(StringArray::from_iter_values((0..RUNS_ROWS).map(code))),
        Arc::new((0..RUNS_ROWS).map(level).collect::<DictionaryArray<Int8Type>>()),
        Arc::new(Float64Array::from_iter_values((0..RUNS_ROWS).map(reading))),
    ];
    RecordBatch::try_new(Arc::new(runs_schema()), columns).unwrap()
}

fn runs_options() -> TableOptions {
    one_thread(RUNS_ROWS_PER_GROUP)
}

#[test]
fn golden_runs_table_reads_back_exactly() {
    let t = open_golden(runs_path(), 2, RUNS_ROWS, runs_schema());
    let want = runs_batch();
    let cases = [
        (0..RUNS_ROWS, vec![0, 1, 2, 3, 4, 5]),
        (20..2077, vec![4, 2, 1, 5]),
        (2047..2049, vec![0, 3, 5]),
        (4999..5000, vec![5, 1]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let n = got.len();
        if c == 4 {
            // Compare the categorical by its values (the file's dictionary is its own).
            let values = got.as_dictionary::<Int8Type>().downcast_dict::<StringArray>().unwrap();
            let got: Vec<Option<&str>> = values.into_iter().collect();
            let expected: Vec<Option<&str>> = (at..at + n).map(level).collect();
            assert_eq!(got, expected, "level, rows from {at}");
        } else if c == 2 {
            let got: Vec<u64> = got
                .as_primitive::<Float64Type>()
                .values()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            let expected: Vec<u64> = (at..at + n).map(|i| runs_price(i).to_bits()).collect();
            assert_eq!(got, expected, "price, rows from {at}");
        } else {
            let expected = want.column(c).slice(at, n);
            assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
        }
    });
    // The values above are runs on disk: that is what this file keeps readable.
    let summary = t.summary();
    for name in ["day", "store", "price", "level"] {
        let col = summary.iter().find(|s| s.name == name).unwrap();
        assert_eq!(col.encodings.get("runs"), Some(&3), "{name}");
    }
    let col = summary.iter().find(|s| s.name == "reading").unwrap();
    assert_eq!(col.encodings.get("dict"), Some(&2), "reading");
}

#[test]
fn current_writer_encodes_the_golden_tables_as_before() {
    // Not a format promise (encoding choices may improve), but a change here means the writer
    // changed: look before accepting it. Since null slots take the value before them (not the
    // page's first value), the timestamps of the fst table are deltas where they were a
    // dictionary when its golden file was written; since codes the codec could not shrink are
    // bit-packed, its ids (all distinct in a page, so no entropy to code) are too.
    let summarize = |t: &TableReader| {
        t.summary()
            .into_iter()
            .map(|c| (c.name, c.data_type, c.encodings, c.pages_with_nulls))
            .collect::<Vec<_>>()
    };
    let dir = tempfile::tempdir().unwrap();
    for (batch, options, golden) in [
        (golden_batch(), golden_options(), golden_path()),
        (runs_batch(), runs_options(), runs_path()),
        (scaled_batch(), scaled_options(), scaled_path()),
        (shared_batch(), shared_options(), shared_path()),
        (symbols_batch(), symbols_options(), symbols_path()),
        (numbers_batch(), one_thread(NUMBERS_ROWS_PER_GROUP), numbers_path()),
        (sparse_batch(), one_thread(SPARSE_ROWS_PER_GROUP), sparse_path()),
        (packed_batch(), one_thread(PACKED_ROWS_PER_GROUP), packed_path()),
        (
            nested_dict_batch(),
            one_thread(NESTED_DICT_ROWS_PER_GROUP),
            nested_dict_path(),
        ),
    ] {
        let now = dir.path().join("now.kpk");
        write_table_file(&now, batch.schema(), [Ok(batch)], options).unwrap();
        let mut expected = summarize(&TableReader::open(&golden).unwrap());
        for col in expected.iter_mut() {
            match col.0.as_str() {
                "ts" => col.2 = [("delta", 3), ("dict", 1)].into_iter().collect(),
                "id" if golden == golden_path() => col.2 = [("bitpack", 4)].into_iter().collect(),
                // Since floats that are decimals are decimal pages, 2-decimal readings are too.
                "reading" => col.2 = [("decimal", 3)].into_iter().collect(),
                _ => {}
            }
            // Since layout 9, dictionaries of numbers keep their values as a nested page (a
            // page of distinct decimals is a decimal page), where that is smaller.
            let nested = match (golden.file_name().and_then(|f| f.to_str()), col.0.as_str()) {
                (Some("fst.kpk"), "price") => vec![("decimal", 1), ("nested dict", 3)],
                // And integers mostly distinct are codes of a frame of reference.
                (Some("fst.kpk"), "ts") => vec![("delta", 3), ("for", 1)],
                (Some("layout8.kpk"), "grade" | "amount") => vec![("nested dict", 3)],
                _ => continue,
            };
            col.2 = nested.into_iter().collect();
        }
        assert_eq!(
            summarize(&TableReader::open(&now).unwrap()),
            expected,
            "{}",
            golden.display()
        );
    }
}

/// Writes the golden tables that do not exist; never touches an existing file.
#[test]
#[ignore = "writes files; run by hand when adding a golden case"]
fn write_missing_golden_table() {
    for (path, batch, options) in [
        (golden_path(), golden_batch(), golden_options()),
        (runs_path(), runs_batch(), runs_options()),
        (scaled_path(), scaled_batch(), scaled_options()),
        (shared_path(), shared_batch(), shared_options()),
        (symbols_path(), symbols_batch(), symbols_options()),
        (numbers_path(), numbers_batch(), one_thread(NUMBERS_ROWS_PER_GROUP)),
        (sparse_path(), sparse_batch(), one_thread(SPARSE_ROWS_PER_GROUP)),
        (packed_path(), packed_batch(), one_thread(PACKED_ROWS_PER_GROUP)),
        (
            nested_dict_path(),
            nested_dict_batch(),
            one_thread(NESTED_DICT_ROWS_PER_GROUP),
        ),
        (statistics_path(), golden_batch(), golden_options()),
        (nested_path(), nested_batch(), one_thread(NESTED_ROWS_PER_GROUP)),
    ] {
        if path.exists() {
            continue;
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        write_table_file(&path, batch.schema(), [Ok(batch)], options).unwrap();
    }
}

// The layout-3 golden table: hourly timestamps in microseconds (scaled, hours as deltas),
// amounts in steps of 5 cents with nulls (scaled), readings with two decimals (decimal pages),
// half-steps (decimal codes that are scaled), floats with a few that are not decimals
// (exceptions: NaN, -0.0, infinity, a third), and float32 tenths.

const SCALED_ROWS: usize = 3000;
const SCALED_ROWS_PER_GROUP: u32 = 1024;

fn hour(i: usize) -> i64 {
    1_356_998_400_000_000 + 3_600_000_000 * (i / 7 + i * 7919 % 5) as i64
}

fn amount(i: usize) -> Option<i32> {
    (i % 13 != 4).then_some((i * 7919 % 4001) as i32 * 5 - 10_000)
}

fn humid(i: usize) -> f64 {
    (i * 7919 % 10_000) as f64 / 100.0
}

fn half(i: usize) -> Option<f64> {
    (!i.is_multiple_of(17)).then_some((i * 31 % 900) as f64 * 0.5 - 100.0)
}

fn quirky(i: usize) -> f64 {
    match i % 250 {
        3 => f64::NAN,
        7 => -0.0,
        11 => f64::INFINITY,
        13 => 1.0 / 3.0,
        _ => (i * 13 % 2000) as f64 / 1000.0,
    }
}

fn tenth(i: usize) -> f32 {
    (i as i32 * 7919 % 3000 - 500) as f32 / 10.0
}

fn scaled_schema() -> Schema {
    Schema::new(vec![
        Field::new(
            "hour",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("amount", DataType::Int32, true),
        Field::new("humid", DataType::Float64, false),
        Field::new("half", DataType::Float64, true),
        Field::new("quirky", DataType::Float64, false),
        Field::new("tenth", DataType::Float32, false),
    ])
}

fn scaled_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from_iter_values((0..SCALED_ROWS).map(hour)).with_timezone("UTC")),
        Arc::new(Int32Array::from_iter((0..SCALED_ROWS).map(amount))),
        Arc::new(Float64Array::from_iter_values((0..SCALED_ROWS).map(humid))),
        Arc::new(Float64Array::from_iter((0..SCALED_ROWS).map(half))),
        Arc::new(Float64Array::from_iter_values((0..SCALED_ROWS).map(quirky))),
        Arc::new(arrow_array::Float32Array::from_iter_values((0..SCALED_ROWS).map(tenth))),
    ];
    RecordBatch::try_new(Arc::new(scaled_schema()), columns).unwrap()
}

fn scaled_options() -> TableOptions {
    one_thread(SCALED_ROWS_PER_GROUP)
}

#[test]
fn golden_scaled_table_reads_back_exactly() {
    let t = open_golden(scaled_path(), 3, SCALED_ROWS, scaled_schema());
    let want = scaled_batch();
    let bits = |a: &dyn Array| -> Vec<Option<u64>> {
        match a.data_type() {
            DataType::Float64 => a
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(f64::to_bits))
                .collect(),
            _ => a
                .as_primitive::<arrow_array::types::Float32Type>()
                .iter()
                .map(|v| v.map(|x| u64::from(x.to_bits())))
                .collect(),
        }
    };
    let cases = [
        (0..SCALED_ROWS, vec![0, 1, 2, 3, 4, 5]),
        (1000..2100, vec![4, 0, 3]),
        (1023..1025, vec![5, 1, 2]),
        (2999..3000, vec![4, 3]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        if c >= 2 {
            // Floats bit for bit: NaN and -0.0 included.
            assert_eq!(bits(got), bits(expected.as_ref()), "column {c}, rows from {at}");
        } else {
            assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
        }
    });
    // What this file keeps readable: scaled and decimal pages.
    let summary = t.summary();
    for (name, encoding) in [
        ("hour", "scaled"),
        ("amount", "scaled"),
        ("humid", "decimal"),
        ("half", "decimal"),
        ("quirky", "decimal"),
        ("tenth", "decimal"),
    ] {
        let col = summary.iter().find(|s| s.name == name).unwrap();
        assert_eq!(col.encodings.get(encoding), Some(&3), "{name}: {:?}", col.encodings);
    }
}

// The layout-4 golden table: tail numbers from 300 (a dictionary shared by all five row
// groups, a null every 97 rows stored as row numbers), three kinds as large strings, binary
// blobs (some empty), a column whose values repeat in its first two groups and are unique
// after (shared, then plain pages), and integers with sparse nulls.

const SHARED_ROWS: usize = 5000;
const SHARED_ROWS_PER_GROUP: u32 = 1024;

fn tail(i: usize) -> Option<String> {
    (i % 97 != 13).then(|| format!("N{:03}{}", i * 7919 % 300, ["A", "B", "ÅX"][i % 3]))
}

fn kind(i: usize) -> &'static str {
    ["jet", "prop", "glider"][i * 31 % 3]
}

fn blob(i: usize) -> Vec<u8> {
    let k = (i * 13 % 40) as u8;
    (0..k % 7).map(|j| k.wrapping_mul(37).wrapping_add(j)).collect()
}

fn mixed(i: usize) -> String {
    match i < 2048 {
        true => format!("often {}", i % 10),
        false => format!("unique {i}"),
    }
}

fn score(i: usize) -> Option<i64> {
    (i % 200 != 150).then_some((i * 7919 % 100_000) as i64 - 50_000)
}

/// Rows `window` of the string and binary columns at `columns`, read as views and with 64-bit
/// offsets, are `want`'s.
fn check_strings(t: &TableReader, want: &RecordBatch, columns: &[usize], window: std::ops::Range<u64>) {
    let (start, len) = (window.start as usize, (window.end - window.start) as usize);
    for layout in [kompakt_table::StringLayout::View, kompakt_table::StringLayout::Large] {
        let (_, arrays) = t.read_columns_as(Some(columns), window.clone(), 1, layout).unwrap();
        for (k, &c) in columns.iter().enumerate() {
            let got: Vec<_> = arrays[k].iter().flat_map(|a| byte_values(a.as_ref())).collect();
            let expected = byte_values(want.column(c).slice(start, len).as_ref());
            assert_eq!(got, expected, "column {c} as {layout:?}");
        }
    }
}

/// `rows` taken from the string and binary columns at `columns` are `want`'s.
fn check_string_take(t: &TableReader, want: &RecordBatch, columns: &[usize], rows: &[u64]) {
    let (_, taken) = t.take(Some(columns), rows, 1).unwrap();
    for (k, &c) in columns.iter().enumerate() {
        let expected: Vec<_> = rows
            .iter()
            .flat_map(|&i| byte_values(want.column(c).slice(i as usize, 1).as_ref()))
            .collect();
        assert_eq!(byte_values(taken.column(k).as_ref()), expected, "take of column {c}");
    }
}

/// The values of a string or binary array of any layout, as bytes.
fn byte_values(a: &dyn Array) -> Vec<Option<Vec<u8>>> {
    let own = |v: Option<&[u8]>| v.map(<[u8]>::to_vec);
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().map(|v| own(v.map(str::as_bytes))).collect(),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().map(|v| own(v.map(str::as_bytes))).collect(),
        DataType::Utf8View => a.as_string_view().iter().map(|v| own(v.map(str::as_bytes))).collect(),
        DataType::Binary => a.as_binary::<i32>().iter().map(own).collect(),
        DataType::LargeBinary => a.as_binary::<i64>().iter().map(own).collect(),
        DataType::BinaryView => a.as_binary_view().iter().map(own).collect(),
        other => panic!("not strings: {other}"),
    }
}

fn shared_schema() -> Schema {
    Schema::new(vec![
        Field::new("tail", DataType::Utf8, true),
        Field::new("kind", DataType::LargeUtf8, false),
        Field::new("blob", DataType::Binary, false),
        Field::new("mixed", DataType::Utf8, false),
        Field::new("score", DataType::Int64, true),
    ])
}

fn shared_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter((0..SHARED_ROWS).map(tail))),
        Arc::new(arrow_array::LargeStringArray::from_iter_values(
            (0..SHARED_ROWS).map(kind),
        )),
        Arc::new(arrow_array::BinaryArray::from_iter_values((0..SHARED_ROWS).map(blob))),
        Arc::new(StringArray::from_iter_values((0..SHARED_ROWS).map(mixed))),
        Arc::new(arrow_array::Int64Array::from_iter((0..SHARED_ROWS).map(score))),
    ];
    RecordBatch::try_new(Arc::new(shared_schema()), columns).unwrap()
}

fn shared_options() -> TableOptions {
    one_thread(SHARED_ROWS_PER_GROUP)
}

#[test]
fn golden_shared_dictionary_table_reads_back_exactly() {
    let t = open_golden(shared_path(), 4, SHARED_ROWS, shared_schema());
    let want = shared_batch();
    let cases = [
        (0..SHARED_ROWS, vec![0, 1, 2, 3, 4]),
        (1000..2100, vec![3, 0, 4]),
        (1023..1025, vec![2, 1]),
        (4999..5000, vec![0, 3]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    // As views (pointing into the shared dictionary) and with 64-bit offsets.
    check_strings(&t, &want, &[0, 2, 3], 900..4100);
    check_string_take(&t, &want, &[0, 3], &[4999, 13, 0, 2500, 13]);
    // What this file keeps readable: pages coded against shared dictionaries, and null rows
    // stored by number (the pages with nulls: every tail page, every score page).
    let summary = t.summary();
    for (name, shared, pages_with_nulls) in [("tail", 5, 5), ("kind", 5, 0), ("blob", 5, 0), ("mixed", 2, 0)] {
        let col = summary.iter().find(|s| s.name == name).unwrap();
        assert_eq!(
            col.encodings.get("column dict"),
            Some(&shared),
            "{name}: {:?}",
            col.encodings
        );
        assert_eq!(col.pages_with_nulls, pages_with_nulls, "{name}");
    }
    let mixed = summary.iter().find(|s| s.name == "mixed").unwrap();
    assert_eq!(mixed.encodings.get("plain"), Some(&3), "{:?}", mixed.encodings);
}

// The layout-5 golden table: URLs with nulls, empty and non-ASCII values (Utf8), file paths
// (LargeBinary), both coded with symbol tables, and random letters, which stay plain.

const SYMBOLS_ROWS: usize = 800;
const SYMBOLS_ROWS_PER_GROUP: u32 = 320;

fn url(i: usize) -> Option<String> {
    let hosts = ["example.com", "data.example.org", "cdn.example.net"];
    let paths = ["flights", "weather", "planes", "airports", "reports", "archive"];
    match i % 101 {
        7 => None,
        8 => Some(String::new()),
        9 => Some(format!("https://example.com/città/{i}")),
        _ => Some(format!(
            "https://{}/{}/{}?page={}",
            hosts[i * 7 % 3],
            paths[i * 11 % 6],
            i * 7919 % 100_000,
            i % 9
        )),
    }
}

fn file_path(i: usize) -> Vec<u8> {
    let dirs = ["/home/analyst/projects", "/data/warehouse/tables", "/tmp/scratch"];
    let names = ["flights", "weather", "planes", "airports"];
    let (a, b) = (i * 7919 % 1_000_003, i * 104_729 % 999_983);
    format!("{}/{}/part-{a}-{b}.parquet", dirs[i * 13 % 3], names[i % 4]).into_bytes()
}

fn letters(i: usize) -> String {
    let mut x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..3 + i % 8)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (b'a' + ((x >> 33) % 26) as u8) as char
        })
        .collect()
}

fn symbols_schema() -> Schema {
    Schema::new(vec![
        Field::new("url", DataType::Utf8, true),
        Field::new("path", DataType::LargeBinary, false),
        Field::new("letters", DataType::Utf8, false),
    ])
}

fn symbols_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter((0..SYMBOLS_ROWS).map(url))),
        Arc::new(arrow_array::LargeBinaryArray::from_iter_values(
            (0..SYMBOLS_ROWS).map(file_path),
        )),
        Arc::new(StringArray::from_iter_values((0..SYMBOLS_ROWS).map(letters))),
    ];
    RecordBatch::try_new(Arc::new(symbols_schema()), columns).unwrap()
}

fn symbols_options() -> TableOptions {
    TableOptions {
        symbol_tables: true,
        ..one_thread(SYMBOLS_ROWS_PER_GROUP)
    }
}

#[test]
fn golden_symbols_table_reads_back_exactly() {
    let t = open_golden(symbols_path(), 5, SYMBOLS_ROWS, symbols_schema());
    let want = symbols_batch();
    let cases = [
        (0..SYMBOLS_ROWS, vec![0, 1, 2]),
        (300..700, vec![2, 0]),
        (319..321, vec![1]),
        (799..800, vec![0, 1]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    check_strings(&t, &want, &[0, 1], 100..700);
    check_string_take(&t, &want, &[0, 1], &[799, 7, 0, 450, 7]);
    // What this file keeps readable: pages coded with symbol tables, through no codec.
    let summary = t.summary();
    for name in ["url", "path"] {
        let col = summary.iter().find(|s| s.name == name).unwrap();
        assert_eq!(col.encodings.get("symbols"), Some(&3), "{name}: {:?}", col.encodings);
    }
    let letters = summary.iter().find(|s| s.name == "letters").unwrap();
    assert_eq!(letters.encodings.get("plain"), Some(&3), "{:?}", letters.encodings);
}

#[test]
fn golden_statistics_read_back() {
    // Tables written before statistics have none, and read as before.
    for path in [golden_path(), runs_path(), scaled_path(), shared_path(), symbols_path()] {
        let t = TableReader::open(&path).unwrap();
        assert!(!t.has_statistics(), "{}", path.display());
        assert!(t.statistics(0).unwrap().is_none());
    }
    let t = TableReader::open(statistics_path()).unwrap();
    assert_eq!(t.layout(), 1);
    assert!(t.has_statistics());
    let groups: Vec<std::ops::Range<usize>> = (0..ROWS)
        .step_by(ROWS_PER_GROUP as usize)
        .map(|a| a..(a + ROWS_PER_GROUP as usize).min(ROWS))
        .collect();
    let nulls = |valid: &dyn Fn(usize) -> bool| -> Vec<u64> {
        groups
            .iter()
            .map(|g| g.clone().filter(|&i| !valid(i)).count() as u64)
            .collect()
    };
    let stat = |name: &str| t.statistics(t.column_index(name).unwrap()).unwrap().unwrap();

    let ids = stat("id");
    assert_eq!(ids.null_counts, [0, 0, 0, 0]);
    let want: Vec<i32> = groups.iter().map(|g| id(g.start)).collect();
    assert_eq!(ids.min.unwrap().as_primitive::<Int32Type>().values().to_vec(), want);
    let want: Vec<i32> = groups.iter().map(|g| id(g.end - 1)).collect();
    assert_eq!(ids.max.unwrap().as_primitive::<Int32Type>().values().to_vec(), want);

    let price = stat("price");
    assert_eq!(price.null_counts, nulls(&|i| self::price(i).is_some()));
    assert_eq!(price.nan_counts.as_deref(), Some(&[0, 0, 0, 0][..]));
    let bound = |pick: fn(f64, f64) -> f64| -> Vec<f64> {
        groups
            .iter()
            .map(|g| g.clone().filter_map(self::price).reduce(pick).unwrap())
            .collect()
    };
    assert_eq!(
        price.min.unwrap().as_primitive::<Float64Type>().values().to_vec(),
        bound(f64::min)
    );
    assert_eq!(
        price.max.unwrap().as_primitive::<Float64Type>().values().to_vec(),
        bound(f64::max)
    );

    let note = stat("note");
    assert_eq!(note.null_counts, nulls(&|i| self::note(i).is_some()));
    let strings = |max: bool| -> Vec<String> {
        groups
            .iter()
            .map(|g| {
                let values = g.clone().filter_map(self::note);
                if max { values.max() } else { values.min() }.unwrap()
            })
            .collect()
    };
    let got = |a: ArrayRef| {
        a.as_string::<i32>()
            .iter()
            .map(|s| s.unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(got(note.min.unwrap()), strings(false));
    assert_eq!(got(note.max.unwrap()), strings(true));

    let flag = stat("flag");
    assert_eq!(flag.null_counts, nulls(&|i| self::flag(i).is_some()));
    assert!(flag.min.is_some() && flag.max.is_some());
    let ts = stat("ts");
    assert_eq!(ts.null_counts, nulls(&|i| self::ts(i).is_some()));
    let ts_min = ts.min.unwrap();
    assert_eq!(ts_min.data_type(), golden_schema().field(5).data_type());
    let want: Vec<i64> = groups
        .iter()
        .map(|g| g.clone().filter_map(self::ts).min().unwrap())
        .collect();
    assert_eq!(
        ts_min.as_primitive::<TimestampMicrosecondType>().values().to_vec(),
        want
    );
    // Dictionary columns have null counts only.
    let city = stat("city");
    assert_eq!(city.null_counts, nulls(&|i| self::city(i).is_some()));
    assert!(city.min.is_none() && city.max.is_none());
    // The rows read as in the file without statistics.
    let (_, with) = t.read(None, 0..ROWS as u64, 1).unwrap();
    let (_, without) = TableReader::open(golden_path())
        .unwrap()
        .read(None, 0..ROWS as u64, 1)
        .unwrap();
    assert_eq!(with, without);
}

const NESTED_ROWS: usize = 90;
const NESTED_ROWS_PER_GROUP: u32 = 40;

/// A list of int32 (with null lists and null items), a struct of a string and a float (with
/// null structs), and a map of string keys to int64 values (with null maps and null values).
fn nested_batch() -> RecordBatch {
    use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder};
    let n = NESTED_ROWS;
    let list: ArrayRef = Arc::new(arrow_array::ListArray::from_iter_primitive::<Int32Type, _, _>(
        (0..n).map(|i| {
            (i % 9 != 4).then(|| {
                (0..(i % 4) as i32)
                    .map(|j| (j != 2).then_some(j * i as i32))
                    .collect::<Vec<_>>()
            })
        }),
    ));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("n{}", i % 6))));
    let weights: ArrayRef = Arc::new(Float64Array::from_iter(
        (0..n).map(|i| (i % 5 != 0).then_some(i as f64 / 8.0)),
    ));
    let point: ArrayRef = Arc::new(arrow_array::StructArray::new(
        vec![
            Field::new("name", DataType::Utf8, false),
            Field::new("weight", DataType::Float64, true),
        ]
        .into(),
        vec![names, weights],
        Some((0..n).map(|i| i % 11 != 7).collect()),
    ));
    let mut tags = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    for i in 0..n {
        if i % 13 == 5 {
            tags.append(false).unwrap();
            continue;
        }
        for j in 0..i % 3 {
            tags.keys().append_value(format!("k{j}"));
            tags.values().append_option((j != 1).then_some(i as i64 * 100));
        }
        tags.append(true).unwrap();
    }
    let tags: ArrayRef = Arc::new(tags.finish());
    RecordBatch::try_from_iter_with_nullable([("list", list, true), ("point", point, true), ("tags", tags, true)])
        .unwrap()
}

#[test]
fn golden_nested_table_reads_back_exactly() {
    let want = nested_batch();
    let t = open_golden(nested_path(), 3, NESTED_ROWS, want.schema().as_ref().clone());
    let cases = [(0..NESTED_ROWS, vec![0, 1, 2]), (35..85, vec![2, 0]), (79..81, vec![1])];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    let (_, taken) = t.take(None, &[89, 0, 44, 44], 1).unwrap();
    let indices = arrow_array::UInt64Array::from(vec![89, 0, 44, 44]);
    for c in 0..3 {
        let expected = arrow_select::take::take(want.column(c).as_ref(), &indices, None).unwrap();
        assert_eq!(taken.column(c).as_ref(), expected.as_ref(), "take, column {c}");
    }
}

// The layout-6 golden table: floats that are not decimals (sevenths), with nulls, drawn from
// 1,100 values, which no page's own dictionary holds (at most a quarter of its 4,096 rows):
// shared by the pages of their column; and a sorted count, on its own (it is small enough as
// it is; kept under the fuzz seeds' 32 KiB).

const NUMBERS_ROWS: usize = 3 * 4096;
const NUMBERS_ROWS_PER_GROUP: u32 = 4096;

/// A well-mixed hash of `i` (splitmix64's finalizer): values drawn with it repeat as random
/// draws do.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn sevenths(i: usize) -> Option<f64> {
    (i % 41 != 9).then(|| (mix(i as u64) % 1100) as f64 / 7.0 + 3.0)
}

fn numbers_schema() -> Schema {
    Schema::new(vec![
        Field::new("sevenths", DataType::Float64, true),
        Field::new("count", DataType::Int32, false),
    ])
}

fn numbers_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from_iter((0..NUMBERS_ROWS).map(sevenths))),
        Arc::new(Int32Array::from_iter_values((0..NUMBERS_ROWS).map(|i| (i / 3) as i32))),
    ];
    RecordBatch::try_new(Arc::new(numbers_schema()), columns).unwrap()
}

#[test]
fn golden_numbers_table_reads_back_exactly() {
    let t = open_golden(numbers_path(), 6, NUMBERS_ROWS, numbers_schema());
    let want = numbers_batch();
    let cases = [
        (0..NUMBERS_ROWS, vec![0, 1]),
        (4000..8200, vec![1, 0]),
        (4095..4097, vec![0]),
        (NUMBERS_ROWS - 1..NUMBERS_ROWS, vec![0]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    let indices = [12_287u64, 0, 4096, 77, 8191, 77];
    let (_, taken) = t.take(Some(&[0, 1]), &indices, 1).unwrap();
    for (k, &i) in indices.iter().enumerate() {
        for c in 0..2 {
            let (got, expected) = (taken.column(c).slice(k, 1), want.column(c).slice(i as usize, 1));
            assert_eq!(got.as_ref(), expected.as_ref(), "row {i}");
        }
    }
    let mut floats = vec![0u8; 8 * 5000];
    t.read_column_into(0, 3000..8000, &mut floats, 1).unwrap();
    for (k, v) in floats.chunks_exact(8).enumerate() {
        if let Some(want) = sevenths(3000 + k) {
            assert_eq!(f64::from_le_bytes(v.try_into().unwrap()), want, "row {}", 3000 + k);
        }
    }
    // What this file keeps readable: numbers coded against their column's dictionary.
    let summary = t.summary();
    let col = summary.iter().find(|s| s.name == "sevenths").unwrap();
    assert_eq!(col.encodings.get("column dict"), Some(&3), "{:?}", col.encodings);
    let count = summary.iter().find(|s| s.name == "count").unwrap();
    assert!(!count.encodings.contains_key("column dict"), "{:?}", count.encodings);
}

// The layout-7 golden table: STAR-like scores and class sizes, 40 % missing in runs and
// scattered, a float column with a null in 8 rows (the threshold), a list of readings whose
// items are a third null, and a factor (dictionary keys) with nulls.

const SPARSE_ROWS: usize = 2500;
const SPARSE_ROWS_PER_GROUP: u32 = 1000;

fn star_score(i: usize) -> Option<i32> {
    (i % 5 >= 2 && !(700..900).contains(&i)).then(|| 400 + (i * 37 % 250) as i32)
}

fn eighth(i: usize) -> Option<f64> {
    (i % 8 != 3).then(|| (i * 7919 % 1000) as f64 / 100.0)
}

fn list_reading(i: usize, k: usize) -> Option<f64> {
    (!(i + k).is_multiple_of(3)).then(|| ((i * 31 + k * 7) % 500) as f64 / 4.0)
}

fn grade(i: usize) -> Option<i8> {
    (i % 9 > 3).then_some((i % 4) as i8)
}

fn sparse_schema() -> Schema {
    let item = Arc::new(Field::new("item", DataType::Float64, true));
    Schema::new(vec![
        Field::new("score", DataType::Int32, true),
        Field::new("eighth", DataType::Float64, true),
        Field::new("readings", DataType::List(item), true),
        Field::new(
            "grade",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            true,
        ),
    ])
}

fn sparse_batch() -> RecordBatch {
    let mut readings = arrow_array::builder::ListBuilder::new(arrow_array::builder::Float64Builder::new());
    for i in 0..SPARSE_ROWS {
        for k in 0..i % 4 {
            readings.values().append_option(list_reading(i, k));
        }
        readings.append(i % 10 != 7);
    }
    let grades = DictionaryArray::<Int8Type>::new(
        arrow_array::Int8Array::from_iter((0..SPARSE_ROWS).map(grade)),
        Arc::new(StringArray::from(vec!["K", "1", "2", "3"])),
    );
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter((0..SPARSE_ROWS).map(star_score))),
        Arc::new(Float64Array::from_iter((0..SPARSE_ROWS).map(eighth))),
        Arc::new(readings.finish()),
        Arc::new(grades),
    ];
    RecordBatch::try_new(Arc::new(sparse_schema()), columns).unwrap()
}

#[test]
fn golden_sparse_table_reads_back_exactly() {
    let t = open_golden(sparse_path(), 7, SPARSE_ROWS, sparse_schema());
    let want = sparse_batch();
    let cases = [
        (0..SPARSE_ROWS, vec![0, 1, 2, 3]),
        (650..1950, vec![3, 2, 1, 0]),
        (999..1001, vec![0, 2]),
        (SPARSE_ROWS - 1..SPARSE_ROWS, vec![1]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    let indices = [2499u64, 0, 1000, 703, 703, 1999];
    let (_, taken) = t.take(None, &indices, 1).unwrap();
    for (k, &i) in indices.iter().enumerate() {
        for c in 0..4 {
            let (got, expected) = (taken.column(c).slice(k, 1), want.column(c).slice(i as usize, 1));
            assert_eq!(got.as_ref(), expected.as_ref(), "column {c}, row {i}");
        }
    }
    let mut scores = vec![0u8; 4 * 1500];
    let valid = t.read_column_into_with_validity(0, 600..2100, &mut scores, 1).unwrap();
    for (k, v) in scores.chunks_exact(4).enumerate() {
        let i = 600 + k;
        if let Some(want) = star_score(i) {
            assert_eq!(i32::from_le_bytes(v.try_into().unwrap()), want, "row {i}");
        }
        let valid = valid.as_ref().expect("the column has nulls");
        assert_eq!(valid.value(k), star_score(i).is_some(), "row {i}");
    }
}

// The layout-8 golden table: grades on a 16-step scale and eight large integers, each about
// as frequent as the others (dictionary pages whose codes are bit-packed: their bytes hold
// nothing the codec could take out), with nulls in the integers, and a row number.

const PACKED_ROWS: usize = 3000;
const PACKED_ROWS_PER_GROUP: u32 = 1024;
const GRADES: [f64; 16] = [
    0.0, 0.3, 0.7, 1.0, 1.3, 1.5, 1.7, 2.0, 2.3, 2.5, 2.7, 3.0, 3.3, 3.5, 3.7, 4.0,
];
const AMOUNTS: [i64; 8] = [100_003, 250_000, 1_000_000, 7, -5_000_000, 12_345_678, 999, 31_000];

/// Bits of row `i` that look random (no repeats for the codec to find).
fn scrambled(i: usize) -> usize {
    ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize
}

fn grade_point(i: usize) -> f64 {
    GRADES[scrambled(i) % 16]
}

fn packed_amount(i: usize) -> Option<i64> {
    (i % 11 != 4).then_some(AMOUNTS[(scrambled(i) >> 16) % 8])
}

fn packed_schema() -> Schema {
    Schema::new(vec![
        Field::new("row", DataType::Int32, false),
        Field::new("grade", DataType::Float64, false),
        Field::new("amount", DataType::Int64, true),
    ])
}

fn packed_batch() -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values((0..PACKED_ROWS).map(|i| i as i32))),
        Arc::new(Float64Array::from_iter_values((0..PACKED_ROWS).map(grade_point))),
        Arc::new(arrow_array::Int64Array::from_iter((0..PACKED_ROWS).map(packed_amount))),
    ];
    RecordBatch::try_new(Arc::new(packed_schema()), columns).unwrap()
}

#[test]
fn golden_packed_codes_table_reads_back_exactly() {
    let t = open_golden(packed_path(), 8, PACKED_ROWS, packed_schema());
    let encodings: Vec<_> = t.summary().into_iter().map(|c| c.encodings).collect();
    assert_eq!(encodings[1], [("dict", 3)].into_iter().collect(), "grades");
    assert_eq!(encodings[2], [("dict", 3)].into_iter().collect(), "amounts");
    let want = packed_batch();
    let cases = [
        (0..PACKED_ROWS, vec![0, 1, 2]),
        (700..2900, vec![2, 1]),
        (1023..1026, vec![1, 2]),
        (PACKED_ROWS - 1..PACKED_ROWS, vec![2]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    let indices = [2999u64, 0, 1024, 777, 777, 2047];
    let (_, taken) = t.take(None, &indices, 1).unwrap();
    for (k, &i) in indices.iter().enumerate() {
        for c in 0..3 {
            let (got, expected) = (taken.column(c).slice(k, 1), want.column(c).slice(i as usize, 1));
            assert_eq!(got.as_ref(), expected.as_ref(), "column {c}, row {i}");
        }
    }
    let mut grades = vec![0u8; 8 * 1500];
    t.read_column_into_with_validity(1, 600..2100, &mut grades, 1).unwrap();
    for (k, v) in grades.chunks_exact(8).enumerate() {
        assert_eq!(
            f64::from_le_bytes(v.try_into().unwrap()),
            grade_point(600 + k),
            "row {}",
            600 + k
        );
    }
}

// The layout-9 golden table: readings of two decimals (a nested dictionary whose values are a
// decimal page), 600 ratios that are no decimals, 40 of them in nine rows of ten (plain
// values, codes bit-packed in 10 bits), sevenths (values unshuffled), large integers of 200 values
// (bit-packed values), with nulls in the readings, and a row number.

const NESTED_DICT_ROWS: usize = 10_000;
const NESTED_DICT_ROWS_PER_GROUP: u32 = 8000;

fn milk_reading(i: usize) -> Option<f64> {
    (i % 13 != 6).then(|| (250 + scrambled(i) % 164) as f64 / 100.0)
}

fn ratio(i: usize) -> f64 {
    let scrambled = |i: u64| (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    let r = scrambled(i as u64 + 7) % 1_000_000;
    let k = if r < 900_000 { r % 40 } else { r % 600 };
    f64::from_bits(scrambled(k) << 20 | 0x3FF0 << 48)
}

fn seventh(i: usize) -> f64 {
    (scrambled(i + 3) % 200) as f64 / 7.0 + 3.0
}

fn large_id(i: usize) -> i64 {
    let k = (scrambled(i + 11) % 200) as i64;
    1_000_003 * k * k + k
}

fn nested_dict_schema() -> Schema {
    Schema::new(vec![
        Field::new("row", DataType::Int32, false),
        Field::new("protein", DataType::Float64, true),
        Field::new("ratio", DataType::Float64, false),
        Field::new("seventh", DataType::Float64, false),
        Field::new("id", DataType::Int64, false),
    ])
}

fn nested_dict_batch() -> RecordBatch {
    let n = NESTED_DICT_ROWS;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values((0..n).map(|i| i as i32))),
        Arc::new(Float64Array::from_iter((0..n).map(milk_reading))),
        Arc::new(Float64Array::from_iter_values((0..n).map(ratio))),
        Arc::new(Float64Array::from_iter_values((0..n).map(seventh))),
        Arc::new(arrow_array::Int64Array::from_iter_values((0..n).map(large_id))),
    ];
    RecordBatch::try_new(Arc::new(nested_dict_schema()), columns).unwrap()
}

#[test]
fn golden_nested_dictionary_table_reads_back_exactly() {
    let t = open_golden(nested_dict_path(), 9, NESTED_DICT_ROWS, nested_dict_schema());
    let encodings: Vec<_> = t.summary().into_iter().map(|c| c.encodings).collect();
    for c in [1, 3, 4] {
        assert_eq!(encodings[c], [("nested dict", 2)].into_iter().collect(), "column {c}");
    }
    // The first group's ratios are a nested dictionary of plain values, which its writer
    // wrote only for codes packed in more than 8 bits; the last group's 2,000 rows hold fewer
    // than 256 of them.
    let ratios = [("nested dict", 1), ("dict", 1)].into_iter().collect();
    assert_eq!(encodings[2], ratios, "ratios");
    let want = nested_dict_batch();
    let cases = [
        (0..NESTED_DICT_ROWS, vec![0, 1, 2, 3, 4]),
        (700..9900, vec![4, 2, 1]),
        (7999..8002, vec![3, 1, 2]),
        (NESTED_DICT_ROWS - 1..NESTED_DICT_ROWS, vec![2]),
    ];
    check_reads(&t, &cases, |c, got, at| {
        let expected = want.column(c).slice(at, got.len());
        assert_eq!(got, expected.as_ref(), "column {c}, rows from {at}");
    });
    let indices = [9999u64, 0, 8000, 777, 777, 7999];
    let (_, taken) = t.take(None, &indices, 1).unwrap();
    for (k, &i) in indices.iter().enumerate() {
        for c in 0..5 {
            let (got, expected) = (taken.column(c).slice(k, 1), want.column(c).slice(i as usize, 1));
            assert_eq!(got.as_ref(), expected.as_ref(), "column {c}, row {i}");
        }
    }
    let mut ratios = vec![0u8; 8 * 3000];
    t.read_column_into_with_validity(2, 6000..9000, &mut ratios, 1).unwrap();
    for (k, v) in ratios.chunks_exact(8).enumerate() {
        assert_eq!(
            f64::from_le_bytes(v.try_into().unwrap()).to_bits(),
            ratio(6000 + k).to_bits(),
            "row {}",
            6000 + k
        );
    }
}
