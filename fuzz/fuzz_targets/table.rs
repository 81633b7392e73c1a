//! Hostile table files and pages. Every input is used twice:
//! - as a table file (as it is, and with every checksum repaired so that mutations reach the
//!   table footer, the schema and the page decoders), opened with `TableReader::open`, then
//!   read whole, in sub-ranges, by row numbers (`take`) and column by column (as batches and
//!   with `read_columns`), summarized, and its row-group statistics read;
//! - as a page: byte 0 picks the type, bytes 1-2 the row count (at most 4096), the rest is
//!   given to `decode_page`, whose result must be a valid Arrow array of that many rows;
//!   string, binary and 4- and 8-byte pages are also decoded against a column dictionary of a
//!   few values.
//!
//! Errors are fine; panics, hangs and huge allocations are not.
#![no_main]

use arrow_array::Array;
use arrow_schema::DataType;
use kompakt_fuzz::repair;
use kompakt_table::page::{decode_page, decode_page_into, decode_page_rows_as, decode_page_rows_with, ColumnDict};
use kompakt_table::{StringLayout, TableReader};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The file each input is written to (one per fuzzing process).
fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| std::env::temp_dir().join(format!("kompakt-fuzz-table-{}.kpk", std::process::id())))
}

fn exercise_table(bytes: &[u8]) {
    std::fs::write(path(), bytes).expect("write the table file");
    exercise_table_file();
    // Left behind, one file per fuzzing process would pile up in the temp folder.
    let _ = std::fs::remove_file(path());
}

fn exercise_table_file() {
    let Ok(t) = TableReader::open(path()) else {
        return;
    };
    // A small read budget: every read below must stop at it with an error (counted before
    // allocating), whatever the pages claim; verifying has it once for the whole table.
    t.set_read_limit(64 << 20);
    let _ = t.verify_rows(1, &mut |_| {});
    let n = t.num_rows();
    let columns = t.schema().fields().len();
    let _ = t.summary();
    let _ = t.read(None, 0..n, 1);
    if columns > 0 {
        let _ = t.read(Some(&[0]), n / 3..n / 2, 1);
        let _ = t.read(Some(&[columns - 1]), n.saturating_sub(1)..n, 1);
    }
    for c in 0..columns {
        let _ = t.read(Some(&[c]), 0..n, 1);
    }
    // The statistics section: decoded whole, each part a valid array of one row per group.
    for c in 0..columns {
        if let Ok(Some(s)) = t.statistics(c) {
            assert_eq!(s.null_counts.len() as u64, t.num_groups());
            for a in [&s.min, &s.max].into_iter().flatten() {
                assert_eq!(a.len() as u64, t.num_groups());
                a.to_data()
                    .validate_full()
                    .unwrap_or_else(|e| panic!("statistics returned an invalid array: {e}"));
            }
        }
    }
    let _ = t.read(None, n / 2..n / 2, 1);
    let _ = t.read(None, 0..n.saturating_add(1), 1);
    // Rows by number, out of order and repeated, and one past the end (an error).
    if n > 0 {
        if let Ok((_, b)) = t.take(None, &[n - 1, 0, n / 2, 0], 2) {
            assert_eq!(b.num_rows(), 4);
            for a in b.columns() {
                a.to_data()
                    .validate_full()
                    .unwrap_or_else(|e| panic!("take returned an invalid array: {e}"));
            }
        }
    }
    assert!(t.take(None, &[n], 1).is_err());
    // Whole-column reads allocate what the rows asked for need (up to 16 bytes a row and
    // column) before decoding: a claim of billions of rows is a legitimate (if large) request,
    // so keep to sizes within the fuzzer's memory limit.
    if n.saturating_mul(columns as u64).saturating_mul(16) <= 256 << 20 {
        for (lo, hi) in [(0, n), (n / 3, n / 2), (n.saturating_sub(1), n)] {
            if let Ok((_, cols)) = t.read_columns(None, lo..hi, 2) {
                for chunks in cols {
                    assert_eq!(chunks.iter().map(|a| a.len() as u64).sum::<u64>(), hi - lo);
                    for a in chunks {
                        a.to_data()
                            .validate_full()
                            .unwrap_or_else(|e| panic!("read_columns returned an invalid array: {e}"));
                    }
                }
            }
        }
        for layout in [StringLayout::Large, StringLayout::View] {
            if let Ok((_, cols)) = t.read_columns_as(None, 0..n, 2, layout) {
                for a in cols.iter().flatten() {
                    a.to_data()
                        .validate_full()
                        .unwrap_or_else(|e| panic!("read_columns_as({layout:?}) returned an invalid array: {e}"));
                }
            }
        }
    }
}

fn page_type(b: u8) -> DataType {
    match b % 12 {
        0 => DataType::Int32,
        11 => DataType::Float32,
        1 => DataType::Int64,
        2 => DataType::Float64,
        3 => DataType::Boolean,
        4 => DataType::Utf8,
        5 => DataType::LargeBinary,
        10 => DataType::Binary,
        6 => DataType::Int8,
        7 => DataType::UInt16,
        8 => DataType::Decimal128(38, 2),
        _ => DataType::FixedSizeBinary(3),
    }
}

fn fixed_width(dt: &DataType) -> Option<usize> {
    Some(match dt {
        DataType::Int8 => 1,
        DataType::UInt16 => 2,
        DataType::Int32 | DataType::Float32 => 4,
        DataType::Int64 | DataType::Float64 => 8,
        DataType::Decimal128(..) => 16,
        _ => return None,
    })
}

fn exercise_page(data: &[u8]) {
    let [t, n0, n1, bytes @ ..] = data else {
        return;
    };
    let dtype = page_type(*t);
    let n = usize::from(u16::from_le_bytes([*n0, *n1])) % 4097;
    // Straight into a buffer, as whole-column reads do: the same verdict and values.
    if let Some(w) = fixed_width(&dtype) {
        let mut dst = vec![0u8; w * n];
        let into = decode_page_into(&dtype, n, bytes, 0..n, &mut dst);
        let page = decode_page(&dtype, n, bytes);
        assert_eq!(
            into.is_ok(),
            page.is_ok(),
            "{dtype}: decode_page_into and decode_page agree"
        );
        if let Ok(page) = page {
            assert_eq!(page.buffers()[0].as_slice(), &dst[..], "{dtype}: the same values");
        }
    }
    if let Ok(array) = decode_page(&dtype, n, bytes) {
        assert_eq!(array.len(), n, "{dtype}: rows decoded");
        assert_eq!(array.data_type(), &dtype);
        array
            .validate_full()
            .unwrap_or_else(|e| panic!("{dtype}: decode_page returned an invalid array: {e}"));
    }
    // Strings with 64-bit offsets and as views (what reads into pandas and polars ask for).
    if matches!(dtype, DataType::Utf8 | DataType::Binary) {
        for layout in [StringLayout::Large, StringLayout::View] {
            if let Ok(array) = decode_page_rows_as(&dtype, layout, n, bytes, n / 3..n) {
                assert_eq!(array.len(), n - n / 3, "{dtype} {layout:?}: rows decoded");
                assert_eq!(Some(array.data_type().clone()), layout.read_type(&dtype));
                array
                    .validate_full()
                    .unwrap_or_else(|e| panic!("{dtype} {layout:?}: an invalid array: {e}"));
            }
        }
    }
}

/// The dictionary string pages are decoded against: short and long values, UTF-8 and not
/// ASCII, an empty one.
fn column_dict() -> &'static ColumnDict {
    static DICT: OnceLock<ColumnDict> = OnceLock::new();
    DICT.get_or_init(|| {
        let values = arrow_array::StringArray::from(vec!["", "N14228", "a value longer than twelve bytes", "café"]);
        ColumnDict::new(&values.to_data()).expect("a valid dictionary")
    })
}

/// The dictionaries pages of 4- and 8-byte values are decoded against (table layout 6).
fn numeric_dict(width: usize) -> &'static ColumnDict {
    static DICTS: OnceLock<[ColumnDict; 2]> = OnceLock::new();
    let [four, eight] = DICTS.get_or_init(|| {
        let four = arrow_array::Int32Array::from(vec![0, -1, 7, i32::MAX]).to_data();
        let eight = arrow_array::Float64Array::from(vec![0.0, f64::NAN, -2.5, 1e300]).to_data();
        [four, eight].map(|values| ColumnDict::new(&values).expect("a valid dictionary"))
    });
    if width == 4 {
        four
    } else {
        eight
    }
}

/// A page of 4- or 8-byte values coded against [`numeric_dict`], whole and a window.
fn exercise_numeric_dict_page(dtype: &DataType, n: usize, bytes: &[u8]) {
    let Some(w @ (4 | 8)) = fixed_width(dtype) else {
        return;
    };
    for rows in [0..n, n / 3..n] {
        let dict = Some(numeric_dict(w));
        if let Ok(array) = decode_page_rows_with(dtype, StringLayout::AsStored, n, bytes, rows.clone(), dict) {
            assert_eq!(array.len(), rows.len(), "{dtype} against a dictionary: rows decoded");
            array
                .validate_full()
                .unwrap_or_else(|e| panic!("{dtype} against a dictionary: an invalid array: {e}"));
        }
    }
}

/// A string or binary page coded against [`column_dict`], as stored and in every layout.
fn exercise_column_dict_page(dtype: &DataType, n: usize, bytes: &[u8]) {
    for layout in [StringLayout::AsStored, StringLayout::Large, StringLayout::View] {
        let rows = if layout == StringLayout::Large { n / 3..n } else { 0..n };
        if let Ok(array) = decode_page_rows_with(dtype, layout, n, bytes, rows.clone(), Some(column_dict())) {
            assert_eq!(array.len(), rows.len(), "{dtype} {layout:?} against a dictionary: rows decoded");
            array
                .validate_full()
                .unwrap_or_else(|e| panic!("{dtype} {layout:?} against a dictionary: an invalid array: {e}"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    exercise_table(data);
    if let Some(fixed) = repair(data) {
        if fixed != data {
            exercise_table(&fixed);
        }
    }
    exercise_page(data);
    if let [t, n0, n1, bytes @ ..] = data {
        let dtype = page_type(*t);
        let n = usize::from(u16::from_le_bytes([*n0, *n1])) % 4097;
        if matches!(dtype, DataType::Utf8 | DataType::Binary | DataType::LargeBinary) {
            exercise_column_dict_page(&dtype, n, bytes);
        }
        exercise_numeric_dict_page(&dtype, n, bytes);
    }
});
