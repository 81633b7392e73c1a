//! Tables of every supported type with nulls, written in random batches and row-group sizes:
//! any column subset and row range reads back equal to slicing the original.

use arrow_array::types::Int8Type;
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use kompakt_table::{write_table_file, StringLayout, TableOptions, TableReader, TableWriter};
use proptest::prelude::*;
use std::sync::Arc;

fn columns(n: usize, seed: u64) -> Vec<(&'static str, ArrayRef)> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let r: Vec<u64> = (0..n).map(|_| next()).collect();
    let null = |i: usize, r: &[u64]| r[i].is_multiple_of(7);
    let cities = ["Oslo", "Lima", "Paris", "Quito", "Accra"];
    let cols: Vec<(&'static str, ArrayRef)> = vec![
        (
            "bool",
            Arc::new(BooleanArray::from_iter(
                (0..n).map(|i| (!null(i, &r)).then_some(r[i].is_multiple_of(2))),
            )),
        ),
        ("i8", Arc::new(Int8Array::from_iter_values((0..n).map(|i| r[i] as i8)))),
        (
            "small_int",
            Arc::new(Int32Array::from_iter(
                (0..n).map(|i| (!null(i, &r)).then_some(1 + (r[i] % 100) as i32)),
            )),
        ),
        (
            "wide_int",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| r[i] as i64))),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from_iter_values((0..n).map(|i| (r[i] % 3000) as u16))),
        ),
        (
            "price",
            Arc::new(Float64Array::from_iter((0..n).map(|i| {
                (!null(i, &r)).then_some([9.99, 19.5, 0.25, -3.0][(r[i] % 4) as usize])
            }))),
        ),
        (
            "f32",
            Arc::new(Float32Array::from_iter_values(
                (0..n).map(|i| f32::from_bits(r[i] as u32)),
            )),
        ),
        (
            "ts",
            Arc::new(
                TimestampNanosecondArray::from_iter_values((0..n).map(|i| 1_700_000_000_000_000_000 + i as i64 * 1000))
                    .with_timezone("Europe/Oslo"),
            ),
        ),
        (
            "date",
            Arc::new(Date32Array::from_iter(
                (0..n).map(|i| (!null(i, &r)).then_some(19000 + (r[i] % 400) as i32)),
            )),
        ),
        (
            "dec",
            Arc::new(
                Decimal128Array::from_iter_values((0..n).map(|i| r[i] as i128 * 1_000_000_007))
                    .with_precision_and_scale(38, 4)
                    .unwrap(),
            ),
        ),
        (
            "word",
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| (!null(i, &r)).then(|| format!("w{:x}", r[i] % 100_000))),
            )),
        ),
        (
            "city",
            Arc::new(LargeStringArray::from_iter_values(
                (0..n).map(|i| cities[(r[i] % 5) as usize]),
            )),
        ),
        (
            "blob",
            Arc::new(BinaryArray::from_iter((0..n).map(|i| {
                (!null(i, &r)).then(|| r[i].to_le_bytes()[..(r[i] % 9) as usize].to_vec())
            }))),
        ),
        (
            "fixed",
            Arc::new(
                FixedSizeBinaryArray::try_from_iter((0..n).map(|i| r[i].to_be_bytes()))
                    .unwrap_or_else(|_| FixedSizeBinaryArray::new_null(8, 0)),
            ),
        ),
        (
            "cat",
            Arc::new(
                (0..n)
                    .map(|i| (!null(i, &r)).then_some(cities[(r[i] % 5) as usize]))
                    .collect::<DictionaryArray<Int8Type>>(),
            ),
        ),
        ("nothing", Arc::new(NullArray::new(n))),
        (
            "dur",
            Arc::new(DurationMillisecondArray::from_iter_values(
                (0..n).map(|i| -(r[i] as i64 % 5000)),
            )),
        ),
        (
            "list",
            Arc::new(ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
                (0..n).map(|i| {
                    (!null(i, &r)).then(|| {
                        (0..(r[i] % 4) as i32)
                            .map(|j| (j % 3 != 1).then_some(j * 10))
                            .collect::<Vec<_>>()
                    })
                }),
            )),
        ),
        ("point", {
            let a: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("p{}", r[i] % 7))));
            let b: ArrayRef = Arc::new(Float64Array::from_iter(
                (0..n).map(|i| (!r[i].is_multiple_of(5)).then_some(i as f64 / 4.0)),
            ));
            let valid: arrow_buffer::NullBuffer = (0..n).map(|i| r[i] % 11 != 3).collect();
            Arc::new(StructArray::new(
                vec![
                    Field::new("a", DataType::Utf8, false),
                    Field::new("b", DataType::Float64, true),
                ]
                .into(),
                vec![a, b],
                Some(valid),
            ))
        }),
        // A map (string keys, int64 values with nulls), stored as a list of its entries.
        ("tags", {
            let mut m = arrow_array::builder::MapBuilder::new(
                None,
                arrow_array::builder::StringBuilder::new(),
                arrow_array::builder::Int64Builder::new(),
            );
            for i in 0..n {
                if null(i, &r) {
                    m.append(false).unwrap();
                    continue;
                }
                for j in 0..(r[i] % 3) {
                    m.keys().append_value(format!("k{j}"));
                    m.values().append_option((j != 1).then_some(r[i] as i64));
                }
                m.append(true).unwrap();
            }
            Arc::new(m.finish())
        }),
        // Signed values across zero: bit-packed as differences mod 2^32.
        (
            "across_zero",
            Arc::new(Int32Array::from_iter(
                (0..n).map(|i| (!null(i, &r)).then_some((r[i] % 2001) as i32 - 1000)),
            )),
        ),
        // Runs of 40-99 rows (stored as runs for seeds whose runs reach 64), nulls inside them.
        ("runs", {
            let run = 40 + (seed % 60) as usize;
            Arc::new(Int64Array::from_iter((0..n).map(|i| {
                (!null(i, &r)).then_some((i / run) as i64 * 1_000_000_007 - (seed % 5) as i64)
            })))
        }),
        (
            "runs_f64",
            Arc::new(Float64Array::from_iter_values((0..n).map(|i| {
                [1.5, -0.0, 0.0, f64::NAN, f64::INFINITY][(i / 20 + seed as usize % 5) % 5]
            }))),
        ),
        // Strings of one length: their lengths are a run.
        (
            "codes",
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| (!null(i, &r)).then(|| format!("{:08}", r[i] % 100_000_000))),
            )),
        ),
    ];
    cols
}

const COLUMNS: usize = 24;

fn table(n: usize, seed: u64) -> RecordBatch {
    let cols = columns(n, seed);
    let fields: Vec<Field> = cols
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields).with_metadata([("pandas".to_string(), "{}".to_string())].into()));
    RecordBatch::try_new(schema, cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

/// Writes `batch` cut at `cuts` with `rows_per_group`, returns the file's path (kept in `dir`).
fn write(dir: &std::path::Path, batch: &RecordBatch, cuts: &[usize], rows_per_group: u32) -> std::path::PathBuf {
    let path = dir.join("t.kpk");
    let mut pieces = Vec::new();
    let mut at = 0;
    for &c in cuts.iter().chain([batch.num_rows()].iter()) {
        let c = c.clamp(at, batch.num_rows());
        pieces.push(Ok(batch.slice(at, c - at)));
        at = c;
    }
    let opts = TableOptions {
        rows_per_group,
        ..Default::default()
    };
    let rows = write_table_file(&path, batch.schema(), pieces, opts).unwrap();
    assert_eq!(rows, batch.num_rows() as u64);
    path
}

fn check_read(t: &TableReader, batch: &RecordBatch, cols: &[usize], start: usize, stop: usize) {
    let (schema, batches) = t.read(Some(cols), start as u64..stop as u64, 1).unwrap();
    assert_eq!(schema.fields().len(), cols.len());
    let got: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(got, stop - start);
    let mut at = start;
    for b in &batches {
        for (j, &c) in cols.iter().enumerate() {
            let want = batch.column(c).slice(at, b.num_rows());
            assert_eq!(
                b.column(j).as_ref(),
                want.as_ref(),
                "column {} rows {at}..",
                batch.schema().field(c).name()
            );
        }
        at += b.num_rows();
    }
    // Column by column: the chunks of each column, in order, are the same rows.
    for threads in [1, 2] {
        let (schema, columns) = t.read_columns(Some(cols), start as u64..stop as u64, threads).unwrap();
        assert_eq!(schema.fields().len(), cols.len());
        assert_eq!(columns.len(), cols.len());
        for (chunks, &c) in columns.iter().zip(cols) {
            let mut at = start;
            for chunk in chunks {
                assert_eq!(chunk.data_type(), batch.schema().field(c).data_type());
                let want = batch.column(c).slice(at, chunk.len());
                assert_eq!(chunk.as_ref(), want.as_ref(), "read_columns: column {c} rows {at}..");
                at += chunk.len();
            }
            assert_eq!(at, stop, "read_columns: column {c} has every row");
        }
    }
    // With 64-bit string offsets or as views: utf8 and binary columns change type, not values,
    // and the other columns do not change at all.
    for layout in [StringLayout::Large, StringLayout::View] {
        let (schema, columns) = t
            .read_columns_as(Some(cols), start as u64..stop as u64, 2, layout)
            .unwrap();
        for ((chunks, &c), field) in columns.iter().zip(cols).zip(schema.fields()) {
            let want = read_as(batch.column(c), layout);
            assert_eq!(field.data_type(), want.data_type());
            let mut at = start;
            for chunk in chunks {
                chunk.to_data().validate_full().unwrap();
                let want = want.slice(at, chunk.len());
                assert_eq!(chunk.as_ref(), want.as_ref(), "{layout:?}: column {c} rows {at}..");
                at += chunk.len();
            }
            assert_eq!(at, stop, "{layout:?}: column {c} has every row");
        }
    }
}

/// The file's statistics hold for `batch`: null and NaN counts exact, every valid non-NaN value
/// within its group's bounds (in Arrow's total order), bounds null only for groups without one.
fn check_statistics(t: &TableReader, batch: &RecordBatch) {
    use arrow_ord::ord::make_comparator;
    use arrow_schema::SortOptions;
    assert!(t.has_statistics());
    let (n, r) = (batch.num_rows(), t.rows_per_group() as usize);
    let groups = t.num_groups() as usize;
    for c in 0..batch.num_columns() {
        let name = batch.schema().field(c).name().clone();
        let s = t
            .statistics(c)
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: no statistics"));
        assert_eq!(s.null_counts.len(), groups, "{name}");
        for g in 0..groups {
            let rows = batch.column(c).slice(g * r, r.min(n - g * r));
            let nulls = if *rows.data_type() == DataType::Null {
                rows.len()
            } else {
                rows.null_count()
            };
            assert_eq!(s.null_counts[g], nulls as u64, "{name} group {g}");
            let nan = |i: usize| match rows.data_type() {
                DataType::Float32 => rows.as_any().downcast_ref::<Float32Array>().unwrap().value(i).is_nan(),
                DataType::Float64 => rows.as_any().downcast_ref::<Float64Array>().unwrap().value(i).is_nan(),
                _ => false,
            };
            let values: Vec<usize> = (0..rows.len()).filter(|&i| rows.is_valid(i) && !nan(i)).collect();
            if let Some(nans) = &s.nan_counts {
                let want = (0..rows.len()).filter(|&i| rows.is_valid(i) && nan(i)).count();
                assert_eq!(nans[g], want as u64, "{name} group {g}");
            }
            let (Some(min), Some(max)) = (&s.min, &s.max) else {
                continue;
            };
            if values.is_empty() {
                assert!(min.is_null(g) && max.is_null(g), "{name} group {g}: bounds of nothing");
                continue;
            }
            assert!(min.is_valid(g) && max.is_valid(g), "{name} group {g}: bounds missing");
            let below = make_comparator(min.as_ref(), rows.as_ref(), SortOptions::default()).unwrap();
            let above = make_comparator(rows.as_ref(), max.as_ref(), SortOptions::default()).unwrap();
            for i in values {
                assert!(below(g, i).is_le(), "{name} group {g} row {i}: below its minimum");
                assert!(above(i, g).is_le(), "{name} group {g} row {i}: above its maximum");
            }
        }
    }
}

/// `a` as a read with `layout` hands it over: utf8 and binary rebuilt value by value as the
/// types it asks for.
fn read_as(a: &ArrayRef, layout: StringLayout) -> ArrayRef {
    use arrow_array::cast::AsArray;
    match (layout, a.data_type()) {
        (StringLayout::Large, DataType::Utf8) => Arc::new(LargeStringArray::from_iter(a.as_string::<i32>().iter())),
        (StringLayout::Large, DataType::Binary) => Arc::new(LargeBinaryArray::from_iter(a.as_binary::<i32>().iter())),
        (StringLayout::View, DataType::Utf8) => Arc::new(StringViewArray::from_iter(a.as_string::<i32>().iter())),
        (StringLayout::View, DataType::Binary) => Arc::new(BinaryViewArray::from_iter(a.as_binary::<i32>().iter())),
        _ => a.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_columns_and_rows_equal_the_sliced_original(
        n in 0usize..700,
        seed in any::<u64>(),
        rows_per_group in prop_oneof![Just(1u32), 2u32..70, Just(256u32)],
        cuts in proptest::collection::vec(0usize..700, 0..4),
        reads in proptest::collection::vec((proptest::collection::vec(0usize..COLUMNS, 1..4), 0usize..700, 0usize..700), 1..6),
    ) {
        let batch = table(n, seed);
        let dir = tempfile::tempdir().unwrap();
        let mut cuts = cuts;
        cuts.sort_unstable();
        let path = write(dir.path(), &batch, &cuts, rows_per_group);
        let t = TableReader::open(&path).unwrap();
        prop_assert_eq!(t.num_rows(), n as u64);
        prop_assert_eq!(t.schema(), batch.schema());
        check_read(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, n);
        check_statistics(&t, &batch);
        // verify checks them too, and finds nothing wrong with a good file.
        prop_assert_eq!(t.verify_rows(1, &mut |_| {}).unwrap(), n as u64);
        if rows_per_group == 256 && n >= 256 {
            // The run columns are what they say (the reads above went through runs).
            let summary = t.summary();
            let runs = summary.iter().find(|c| c.name == "runs_f64").unwrap();
            prop_assert!(runs.encodings.contains_key("runs"), "{:?}", runs.encodings);
            // 2 for the runs, 3 when a page is also scaled or decimal.
            prop_assert!(t.layout() >= 2);
        }
        for (cols, a, b) in reads {
            let (a, b) = (a.min(n), b.min(n));
            check_read(&t, &batch, &cols, a.min(b), a.max(b));
        }
    }
}

/// `take` of `indices` equals arrow's take of the same rows of the original.
fn check_take(t: &TableReader, batch: &RecordBatch, cols: &[usize], indices: &[u64], threads: usize) {
    let (schema, got) = t.take(Some(cols), indices, threads).unwrap();
    assert_eq!(schema.fields().len(), cols.len());
    assert_eq!(got.num_rows(), indices.len());
    let positions = UInt64Array::from(indices.to_vec());
    for (j, &c) in cols.iter().enumerate() {
        let want = arrow_select::take::take(batch.column(c).as_ref(), &positions, None).unwrap();
        assert_eq!(got.column(j).data_type(), want.data_type());
        assert_eq!(
            got.column(j).as_ref(),
            want.as_ref(),
            "column {} at {indices:?}",
            batch.schema().field(c).name()
        );
        if let DataType::Dictionary(..) = want.data_type() {
            // The column's one dictionary, not a copy per row group taken from.
            use arrow_array::cast::AsArray;
            assert_eq!(
                got.column(j).as_any_dictionary().values().len(),
                batch.column(c).as_any_dictionary().values().len()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn take_equals_taking_from_the_original(
        n in 1usize..700,
        seed in any::<u64>(),
        rows_per_group in prop_oneof![Just(1u32), 2u32..70, Just(256u32)],
        takes in proptest::collection::vec(
            (proptest::collection::vec(0usize..COLUMNS, 0..4), proptest::collection::vec(any::<u64>(), 0..60)),
            1..5,
        ),
    ) {
        let batch = table(n, seed);
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), &batch, &[], rows_per_group);
        let t = TableReader::open(&path).unwrap();
        for (threads, (cols, picks)) in takes.into_iter().enumerate() {
            // Any order, repeats, and every row group or a few.
            let indices: Vec<u64> = picks.iter().map(|p| p % n as u64).collect();
            check_take(&t, &batch, &cols, &indices, threads % 3);
        }
        check_take(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), &(0..n as u64).rev().collect::<Vec<_>>(), 0);
    }
}

#[test]
fn take_refuses_rows_outside_the_table_and_takes_none() {
    let batch = table(1000, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch, &[], 100);
    let t = TableReader::open(&path).unwrap();
    let err = t.take(None, &[5, 1000], 1).unwrap_err();
    assert!(err.to_string().contains("row 1000 of a table of 1000 rows"), "{err}");
    assert!(t.take(Some(&[COLUMNS]), &[5], 1).is_err());
    let (schema, none) = t.take(None, &[], 1).unwrap();
    assert_eq!(none.num_rows(), 0);
    assert_eq!(none.num_columns(), schema.fields().len());
    let (_, no_columns) = t.take(Some(&[]), &[1, 2, 2], 1).unwrap();
    assert_eq!((no_columns.num_rows(), no_columns.num_columns()), (3, 0));
}

#[test]
fn larger_than_one_round_of_groups_and_threads_do_not_change_the_bytes() {
    let batch = table(40_000, 7);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for threads in [1, 2, 3] {
        let mut w = TableWriter::new(
            Vec::new(),
            batch.schema(),
            TableOptions {
                rows_per_group: 1000,
                threads,
                ..Default::default()
            },
        )
        .unwrap();
        w.write(&batch.slice(0, 12_345)).unwrap();
        w.write(&batch.slice(12_345, 40_000 - 12_345)).unwrap();
        files.push(w.finish().unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
    let path = dir.path().join("t.kpk");
    std::fs::write(&path, &files[0]).unwrap();
    let t = TableReader::open(&path).unwrap();
    check_read(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, 40_000);
    check_read(&t, &batch, &[3, 10], 19_999, 21_001);
}

#[test]
fn pages_that_share_trial_verdicts_keep_the_bytes_independent_of_threads() {
    // Narrow codes whose packing is decided by trials: the round's first group decides for the
    // others that look the same (page::Verdicts), and a column whose values change half-way
    // asks again. Three rounds of 16 groups; the bytes must not depend on the threads.
    let n = 3 * 16 * 500 + 77;
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as i32
    };
    let ten: Int32Array = (0..n).map(|_| Some(next().rem_euclid(10))).collect();
    let changing: Int32Array = (0..n)
        .map(|i| {
            Some(if i < n / 2 {
                next().rem_euclid(3)
            } else {
                next().rem_euclid(200)
            })
        })
        .collect();
    let skewed: Int64Array = (0..n)
        .map(|_| Some(i64::from(next().rem_euclid(16).min(9)) * 1000))
        .collect();
    // Plain strings, zstd or LZ4 by the round's first page: text, then printable noise.
    let text: StringArray = (0..n)
        .map(|i| {
            let r = next();
            Some(if i < n / 2 {
                format!("line {} of {}", r.rem_euclid(1000), ["a.py", "b.py", "c.rs"][i % 3])
            } else {
                (0..12)
                    .map(|k| (b' ' + (r >> (k % 4)).rem_euclid(95) as u8) as char)
                    .collect()
            })
        })
        .collect();
    let batch = RecordBatch::try_from_iter([
        ("ten", Arc::new(ten) as ArrayRef),
        ("changing", Arc::new(changing) as ArrayRef),
        ("skewed", Arc::new(skewed) as ArrayRef),
        ("text", Arc::new(text) as ArrayRef),
    ])
    .unwrap();
    let mut files = Vec::new();
    for threads in [1, 2, 3] {
        let opts = TableOptions {
            rows_per_group: 500,
            threads,
            ..Default::default()
        };
        let mut w = TableWriter::new(Vec::new(), batch.schema(), opts).unwrap();
        w.write(&batch.slice(0, 5_000)).unwrap();
        w.write(&batch.slice(5_000, n - 5_000)).unwrap();
        files.push(w.finish().unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    std::fs::write(&path, &files[0]).unwrap();
    let t = TableReader::open(&path).unwrap();
    check_read(&t, &batch, &[0, 1, 2, 3], 0, n);
    check_read(&t, &batch, &[1, 3], 11_999, 12_555);
}

#[test]
fn long_text_pages_are_blocks_written_and_read_in_parallel() {
    // Pages of 16,384 entries of ~300 bytes (5 MB) are cut into 2 MiB blocks, compressed and
    // decoded on the pools' threads; the bytes must not depend on the threads, every read
    // must equal the original, and damage to one block of a page must be found.
    let n = 40_000;
    let mut state = 3u64;
    let mut word = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ["apt", "fix", "build", "upload", "debian", "release", "policy", "tests"][(state >> 40) as usize % 8]
    };
    let text: StringArray = (0..n)
        .map(|i| {
            Some(format!(
                "  * entry {i}: {}",
                (0..40).map(|_| word()).collect::<Vec<_>>().join(" ")
            ))
        })
        .collect();
    let ids = Int64Array::from_iter_values(0..n as i64);
    let batch =
        RecordBatch::try_from_iter([("text", Arc::new(text) as ArrayRef), ("id", Arc::new(ids) as ArrayRef)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for threads in [1, 2, 3] {
        let path = dir.path().join(format!("t{threads}.kpk"));
        let opts = TableOptions {
            threads,
            ..Default::default()
        };
        write_table_file(&path, batch.schema(), [Ok(batch.clone())], opts).unwrap();
        files.push(std::fs::read(&path).unwrap());
    }
    assert!(
        files.windows(2).all(|w| w[0] == w[1]),
        "the same bytes on 1, 2 and 3 threads"
    );
    let path = dir.path().join("t1.kpk");
    let t = TableReader::open(&path).unwrap();
    let blocks = t.summary()[0].codecs.values().sum::<u64>();
    assert!(blocks >= 3 + 4, "pages of several blocks: {blocks} blocks in 3 pages");
    check_read(&t, &batch, &[0, 1], 0, n);
    check_read(&t, &batch, &[0], 20_000, 20_100);
    // A flipped byte in the middle of the file, inside one of the text blocks.
    let mut bad = files[0].clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x10;
    let bad_path = dir.path().join("bad.kpk");
    std::fs::write(&bad_path, &bad).unwrap();
    let t = TableReader::open(&bad_path).unwrap();
    let err = t.read_columns(Some(&[0]), 0..n as u64, 2).unwrap_err();
    assert!(err.is_corruption(), "{err}");
}

#[test]
fn dictionaries_that_differ_between_batches_are_merged() {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "c",
        DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
        true,
    )]));
    let a: DictionaryArray<Int8Type> = vec![Some("x"), Some("y"), None, Some("x")].into_iter().collect();
    let b: DictionaryArray<Int8Type> = vec![Some("z"), Some("x"), Some("y")].into_iter().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.kpk");
    let batches = [a.clone(), b.clone()]
        .map(|d| Ok(RecordBatch::try_new(schema.clone(), vec![Arc::new(d) as ArrayRef]).unwrap()));
    write_table_file(&path, schema.clone(), batches, TableOptions::default()).unwrap();
    let (_, got) = TableReader::open(&path).unwrap().read(None, 0..7, 1).unwrap();
    let got = got[0]
        .column(0)
        .as_any()
        .downcast_ref::<DictionaryArray<Int8Type>>()
        .unwrap()
        .clone();
    let values: Vec<Option<String>> = got
        .downcast_dict::<StringArray>()
        .unwrap()
        .into_iter()
        .map(|v| v.map(str::to_string))
        .collect();
    let want: Vec<Option<String>> = ["x", "y", "", "x", "z", "x", "y"]
        .iter()
        .enumerate()
        .map(|(i, s)| (i != 2).then(|| s.to_string()))
        .collect();
    assert_eq!(values, want);
}

#[test]
fn schema_mismatch_and_unsupported_types_are_clear_errors() {
    let batch = table(10, 1);
    let mut w = TableWriter::new(Vec::new(), batch.schema(), TableOptions::default()).unwrap();
    let other = RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)]).unwrap();
    let e = w.write(&other).unwrap_err().to_string();
    assert!(e.contains("columns"), "{e}");
    let list = Schema::new(vec![Field::new(
        "l",
        DataType::List(Arc::new(Field::new(
            "item",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            true,
        ))),
        true,
    )]);
    let e = TableWriter::new(Vec::new(), Arc::new(list), TableOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("supported"), "{e}");
    let e = TableOptions {
        rows_per_group: 0,
        ..Default::default()
    };
    assert!(TableWriter::new(Vec::new(), batch.schema(), e).is_err());
    let _ = TimeUnit::Second;
}

#[test]
fn damage_is_an_error_never_a_panic() {
    let batch = table(300, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch, &[100], 64);
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("bad.kpk");
    let try_all = |bytes: &[u8]| -> bool {
        std::fs::write(&bad_path, bytes).unwrap();
        match TableReader::open(&bad_path) {
            Err(_) => false,
            Ok(t) => {
                let batches = t.read(None, 0..t.num_rows(), 1).is_ok();
                let columns = t.read_columns(None, 0..t.num_rows(), 2).is_ok();
                assert_eq!(batches, columns, "both ways of reading see the damage");
                // Reads do not touch the statistics: damage there shows when they are read.
                let statistics = (0..t.schema().fields().len()).all(|c| t.statistics(c).is_ok());
                batches && statistics
            }
        }
    };
    for cut in (0..good.len()).step_by(97) {
        assert!(!try_all(&good[..cut]), "truncated at {cut}");
    }
    // Checksums catch any flipped bit, in blocks and in the footer.
    for pos in (0..good.len()).step_by(61) {
        let mut bytes = good.clone();
        bytes[pos] ^= 0x10;
        assert!(!try_all(&bytes), "flipped a bit at {pos}");
    }
}

#[test]
fn empty_tables() {
    let batch = table(0, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch, &[], 16);
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.num_rows(), 0);
    let (schema, batches) = t.read(None, 0..0, 0).unwrap();
    assert_eq!(schema, batch.schema());
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].num_rows(), 0);
    assert!(t.read(None, 0..1, 0).is_err());
}

#[test]
fn dictionaries_of_repeated_or_empty_values_read_back() {
    // A dictionary page whose values would be one run: readers bound a dictionary's count by
    // its bytes, so the writer stores dictionary values without runs.
    let repeated = DictionaryArray::<arrow_array::types::Int16Type>::try_new(
        Int16Array::from(vec![0, 999, 5]),
        Arc::new(Int64Array::from(vec![7i64; 1000])),
    )
    .unwrap();
    let empty = DictionaryArray::<arrow_array::types::Int16Type>::try_new(
        Int16Array::from(vec![4, 0, 999]),
        Arc::new(StringArray::from(vec![""; 1000])),
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("repeated", repeated.data_type().clone(), false),
        Field::new("empty", empty.data_type().clone(), false),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(repeated), Arc::new(empty)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    write_table_file(&path, schema, [Ok(batch.clone())], TableOptions::default()).unwrap();
    let t = TableReader::open(&path).unwrap();
    let (_, batches) = t.read(None, 0..3, 1).unwrap();
    let b = &batches[0];
    let repeated = b
        .column(0)
        .as_any()
        .downcast_ref::<DictionaryArray<arrow_array::types::Int16Type>>()
        .unwrap();
    let values = repeated.downcast_dict::<Int64Array>().unwrap();
    assert_eq!(values.into_iter().collect::<Vec<_>>(), vec![Some(7); 3]);
    let empty = b
        .column(1)
        .as_any()
        .downcast_ref::<DictionaryArray<arrow_array::types::Int16Type>>()
        .unwrap();
    let values = empty.downcast_dict::<StringArray>().unwrap();
    assert_eq!(values.into_iter().collect::<Vec<_>>(), vec![Some(""); 3]);
    assert_eq!(t.layout(), 1, "no page needs layout 2 or 3");
    drop(batch);
}

#[test]
fn the_layout_is_the_newest_any_page_needs_and_appends_keep_it() {
    use kompakt_table::append_table_file;
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, true)]));
    let batch = |values: Vec<Option<i32>>| {
        RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(values)) as ArrayRef]).unwrap()
    };
    let varied: Vec<Option<i32>> = (0..300).map(|i| Some(i * 7919 % 1000)).collect();
    let runs: Vec<Option<i32>> = (0..300).map(|i| (i % 13 != 0).then_some(i / 100)).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let opts = TableOptions {
        rows_per_group: 100,
        ..Default::default()
    };
    // No runs: layout 1, which older readers read.
    write_table_file(&path, schema.clone(), [Ok(batch(varied.clone()))], opts.clone()).unwrap();
    assert_eq!(TableReader::open(&path).unwrap().layout(), 1);
    // An append that brings runs makes it layout 2; one without runs keeps layout 2.
    append_table_file(&path, [Ok(batch(runs.clone()))], opts.clone()).unwrap();
    assert_eq!(TableReader::open(&path).unwrap().layout(), 2);
    append_table_file(&path, [Ok(batch(varied.clone()))], opts.clone()).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.layout(), 2);
    let (_, cols) = t.read_columns(None, 0..900, 2).unwrap();
    let got: Vec<Option<i32>> = cols[0]
        .iter()
        .flat_map(|a| {
            a.as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    let want: Vec<Option<i32>> = varied.iter().chain(&runs).chain(&varied).copied().collect();
    assert_eq!(got, want);
}

#[test]
fn shared_string_dictionaries_grow_with_appends() {
    use kompakt_table::append_table_file;
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let batch = |values: &[Option<String>]| {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StringArray::from(values.to_vec())) as ArrayRef],
        )
        .unwrap()
    };
    let tails = |from: usize, n: usize, kinds: usize| -> Vec<Option<String>> {
        (from..from + n)
            .map(|i| (i % 50 != 7).then(|| format!("N{}", i * 7919 % kinds)))
            .collect()
    };
    let unique: Vec<Option<String>> = (0..300).map(|i| Some(format!("id-{i}"))).collect();
    let opts = TableOptions {
        rows_per_group: 128,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let summary = |path: &std::path::Path| {
        let t = TableReader::open(path).unwrap();
        (t.layout(), t.summary()[0].encodings.clone())
    };
    // Unique values: no shared dictionary (and no layout 4).
    write_table_file(&path, schema.clone(), [Ok(batch(&unique))], opts.clone()).unwrap();
    let (layout, encodings) = summary(&path);
    assert!(layout < 4, "{layout}");
    assert!(!encodings.contains_key("column dict"), "{encodings:?}");
    // An append of repeating values starts one; the next append adds values to it.
    let first = tails(0, 1000, 40);
    let second = tails(1000, 1000, 60);
    append_table_file(&path, [Ok(batch(&first))], opts.clone()).unwrap();
    let (layout, encodings) = summary(&path);
    assert_eq!(layout, 4);
    assert!(encodings["column dict"] >= 7, "{encodings:?}");
    let before = TableReader::open(&path).unwrap();
    append_table_file(&path, [Ok(batch(&second))], opts.clone()).unwrap();
    let t = TableReader::open(&path).unwrap();
    let want: Vec<Option<String>> = unique.iter().chain(&first).chain(&second).cloned().collect();
    let read = |t: &TableReader, rows: std::ops::Range<u64>| -> Vec<Option<String>> {
        let (_, batches) = t.read(None, rows, 2).unwrap();
        batches
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
                a.iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(read(&t, 0..2300), want);
    assert_eq!(read(&t, 1250..1390), want[1250..1390]);
    // A reader opened before the last append still reads the table (and dictionary) it opened.
    assert_eq!(read(&before, 0..1300), want[..1300]);
    // One write of the same rows reads the same.
    let once = dir.path().join("once.kpk");
    write_table_file(&once, schema.clone(), [Ok(batch(&want))], opts).unwrap();
    assert_eq!(read(&TableReader::open(&once).unwrap(), 0..2300), want);
}

#[test]
fn appends_equal_one_write_and_keep_old_readers_working() {
    use kompakt_table::append_table_file;
    let batch = table(5_000, 11);
    let dir = tempfile::tempdir().unwrap();
    // 1234 rows in groups of 100: the last group is partial and gets rewritten.
    let path = write(dir.path(), &batch.slice(0, 1234), &[], 100);
    let before = TableReader::open(&path).unwrap();
    let opts = TableOptions::default();
    assert_eq!(
        append_table_file(&path, [Ok(batch.slice(1234, 1000))], opts.clone()).unwrap(),
        1000
    );
    // Appending nothing, then the rest in two batches.
    assert_eq!(append_table_file(&path, [], opts.clone()).unwrap(), 0);
    append_table_file(&path, [Ok(batch.slice(2234, 766)), Ok(batch.slice(3000, 2000))], opts).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.num_rows(), 5_000);
    assert_eq!(t.rows_per_group(), 100);
    check_read(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, 5_000);
    check_read(&t, &batch, &[14, 0], 1190, 1250);
    // The statistics cover every row: the rewritten partial group's too.
    check_statistics(&t, &batch);
    // A reader opened before the appends still reads the table it opened.
    check_read(&before, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, 1234);
    assert!(!kompakt_table::journal_path(&path).exists());
}

#[test]
fn small_tables_are_one_row_group_under_the_default_only() {
    use kompakt_table::{append_table_file, DEFAULT_ROWS_PER_GROUP};
    let default = DEFAULT_ROWS_PER_GROUP as usize;
    let all = (0..COLUMNS).collect::<Vec<_>>();
    let batch = table(2 * default + 1, 17);
    let dir = tempfile::tempdir().unwrap();
    // (rows, rows per group asked for, batch cuts, the file's rows per group)
    let cases = [
        (default + 1, DEFAULT_ROWS_PER_GROUP, vec![], default + 1),
        (2 * default, DEFAULT_ROWS_PER_GROUP, vec![5, default + 3], 2 * default),
        (2 * default + 1, DEFAULT_ROWS_PER_GROUP, vec![], default),
        (default, DEFAULT_ROWS_PER_GROUP, vec![], default),
        (default + 1, 10_000, vec![], 10_000),
    ];
    for (rows, asked, cuts, groups_of) in cases {
        let part = batch.slice(0, rows);
        let t = TableReader::open(write(dir.path(), &part, &cuts, asked)).unwrap();
        assert_eq!(
            (t.num_rows(), t.rows_per_group() as usize),
            (rows as u64, groups_of),
            "{rows} rows"
        );
        check_read(&t, &part, &all, 0, rows);
        check_read(&t, &part, &[14, 0], rows - 1500, rows - 2);
        check_statistics(&t, &part);
    }
    // More than 8 MiB of data keeps two groups, which read on two cores: 20,000 strings of
    // 500 bytes.
    let long = StringArray::from_iter_values((0..20_000).map(|i| format!("{i:0500}")));
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
    let big = RecordBatch::try_new(schema.clone(), vec![Arc::new(long) as ArrayRef]).unwrap();
    let path = dir.path().join("big.kpk");
    write_table_file(&path, schema, [Ok(big.clone())], TableOptions::default()).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.rows_per_group() as usize, default);
    check_read(&t, &big, &[0], 0, 20_000);
    // Appends continue the one group's size; an append's own rows are never merged.
    let path = write(dir.path(), &batch.slice(0, default + 1), &[], DEFAULT_ROWS_PER_GROUP);
    let opts = TableOptions::default();
    append_table_file(&path, [Ok(batch.slice(default + 1, default))], opts).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(
        (t.num_rows(), t.rows_per_group() as usize),
        (2 * default as u64 + 1, default + 1)
    );
    check_read(&t, &batch, &all, 0, 2 * default + 1);
    check_statistics(&t, &batch);
}

#[test]
fn a_crash_during_an_append_leaves_the_old_table() {
    use kompakt_table::append_table_file;
    let batch = table(2_000, 5);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch.slice(0, 1500), &[], 64);
    let good = std::fs::read(&path).unwrap();
    append_table_file(&path, [Ok(batch.slice(1500, 500))], TableOptions::default()).unwrap();
    let appended = std::fs::read(&path).unwrap();
    // Replay the crash: the journal of an append to the old file, and the file cut at any
    // point of the append's writing.
    let journal = kompakt_table::journal_path(&path);
    std::fs::write(&path, &good).unwrap();
    let record = kompakt_table::append_journal_for_tests(&path).unwrap();
    let cut = u64::from_le_bytes(record[8..16].try_into().unwrap()) as usize;
    for len in [
        cut,
        cut + 1,
        (cut + appended.len()) / 2,
        appended.len() - 1,
        appended.len(),
    ] {
        // The journal the append wrote first (the old footer and trailer), and the file as
        // far as the append got.
        std::fs::write(&journal, &record).unwrap();
        let mut bytes = appended.clone();
        bytes.truncate(len);
        std::fs::write(&path, &bytes).unwrap();
        let t = TableReader::open(&path).unwrap();
        assert_eq!(t.num_rows(), 1500, "cut at {len}");
        check_read(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, 1500);
        assert!(!journal.exists());
        assert_eq!(std::fs::read(&path).unwrap(), good);
    }
}

#[test]
fn sort_keys_are_recorded_checked_and_kept_by_appends() {
    use kompakt_table::{append_table_file, SortKey};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sorted.kpk");
    let cities: DictionaryArray<Int8Type> = ["Lima", "Oslo", "Oslo", "Rome"].into_iter().collect();
    let batch = |day: Vec<i32>, price: Vec<Option<f64>>, city: DictionaryArray<Int8Type>| {
        RecordBatch::try_from_iter([
            ("day", Arc::new(Int32Array::from(day)) as ArrayRef),
            ("price", Arc::new(Float64Array::from(price)) as ArrayRef),
            ("city", Arc::new(city) as ArrayRef),
        ])
        .unwrap()
    };
    let first = batch(vec![1, 1, 2, 2], vec![Some(9.0), Some(3.0), Some(5.0), None], cities);
    let keys = vec![
        SortKey::ascending("day"),
        SortKey::descending("price"),
        SortKey::ascending("city"),
    ];
    let opts = TableOptions {
        rows_per_group: 3,
        sorted_by: keys.clone(),
        ..TableOptions::default()
    };
    write_table_file(&path, first.schema(), [Ok(first.clone())], opts.clone()).unwrap();
    assert_eq!(TableReader::open(&path).unwrap().sorted_by(), &keys[..]);

    // A later batch with its own dictionary: compared by values ("Bern" < "Zug"), not keys.
    let zug_bern: DictionaryArray<Int8Type> = ["Zug", "Bern", "Zug"].into_iter().collect();
    let more = batch(vec![3, 3, 4], vec![Some(1.0), Some(1.0), Some(0.5)], zug_bern.clone());
    let err = append_table_file(&path, [Ok(more.clone())], TableOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row 5 sorts before row 4") && err.contains("\"city\""),
        "{err}"
    );
    let before = std::fs::read(&path).unwrap();
    assert_eq!(
        TableReader::open(&path).unwrap().num_rows(),
        4,
        "a refused append changes nothing"
    );

    let bern_zug: DictionaryArray<Int8Type> = ["Bern", "Zug", "Zug"].into_iter().collect();
    let ok = batch(vec![3, 3, 4], vec![Some(1.0), Some(1.0), Some(0.5)], bern_zug);
    append_table_file(&path, [Ok(ok)], TableOptions::default()).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!((t.num_rows(), t.sorted_by()), (7, &keys[..]));
    assert_ne!(std::fs::read(&path).unwrap(), before);

    // Rows that sort before the table's last row: with a partial last group (7 rows, which the
    // append writes again), then with full groups only (9 rows, compared with the last kept row).
    let zugs = |rows: Vec<i32>, price: f64| {
        let n = rows.len();
        let city: DictionaryArray<Int8Type> = std::iter::repeat_n("Zug", n).collect();
        batch(rows, vec![Some(price); n], city)
    };
    for rows in [vec![2], vec![4, 3]] {
        assert!(append_table_file(&path, [Ok(zugs(rows, 0.0))], TableOptions::default()).is_err());
        assert_eq!(TableReader::open(&path).unwrap().num_rows(), 7);
    }
    append_table_file(&path, [Ok(zugs(vec![4, 5], 0.5))], TableOptions::default()).unwrap();
    for rows in [vec![2], vec![5, 4]] {
        assert!(append_table_file(&path, [Ok(zugs(rows, 0.0))], TableOptions::default()).is_err());
        assert_eq!(TableReader::open(&path).unwrap().num_rows(), 9);
    }
    // An append may not name other keys.
    let other = TableOptions {
        sorted_by: vec![SortKey::ascending("price")],
        ..TableOptions::default()
    };
    assert!(append_table_file(&path, [], other).is_err());

    // A write of unsorted rows fails and leaves no file.
    let unsorted = dir.path().join("unsorted.kpk");
    let err = write_table_file(&unsorted, more.schema(), [Ok(first.clone()), Ok(first)], opts)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row 4 sorts before row 3") && err.contains("\"day\""),
        "{err}"
    );
    assert!(!unsorted.exists());
    let bad_key = TableOptions {
        sorted_by: vec![SortKey::ascending("nope")],
        ..TableOptions::default()
    };
    let err = write_table_file(&unsorted, more.schema(), [], bad_key)
        .unwrap_err()
        .to_string();
    assert!(err.contains("a column of the table: day, price, city"), "{err}");
}

#[test]
fn verify_rows_decodes_every_page_and_checks_the_sort_promise() {
    use kompakt::{ReadOptions, Reader, WriteOptions, Writer};
    use kompakt_table::meta::TableMeta;
    use kompakt_table::SortKey;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let batch = RecordBatch::try_from_iter([
        ("a", Arc::new(Int64Array::from_iter_values(0..5000)) as ArrayRef),
        (
            "s",
            Arc::new(StringArray::from_iter_values((0..5000).map(|i| format!("v{}", i % 7)))) as ArrayRef,
        ),
    ])
    .unwrap();
    let opts = TableOptions {
        rows_per_group: 100,
        sorted_by: vec![SortKey::ascending("a")],
        ..TableOptions::default()
    };
    write_table_file(&path, batch.schema(), [Ok(batch.clone())], opts).unwrap();
    let t = TableReader::open(&path).unwrap();
    let mut seen = Vec::new();
    assert_eq!(t.verify_rows(2, &mut |n| seen.push(n)).unwrap(), 5000);
    assert_eq!(seen, vec![1600, 3200, 4800, 5000]);

    // The same streams under a footer whose schema claims the opposite order: every checksum
    // holds, the promise does not.
    let bytes = std::fs::read(&path).unwrap();
    let mut r = Reader::new(std::io::Cursor::new(&bytes), ReadOptions::default()).unwrap();
    let lens: Vec<u64> = r.streams().iter().map(|s| s.raw_len).collect();
    let mut meta = TableMeta::decode(r.metadata(), &lens).unwrap();
    let json = String::from_utf8(meta.schema_json.clone()).unwrap();
    assert!(json.contains("\"descending\":false"), "{json}");
    meta.schema_json = json.replace("\"descending\":false", "\"descending\":true").into_bytes();
    let mut w = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
    for s in 0..lens.len() as u32 {
        let id = w.add_stream(None).unwrap();
        w.write(id, &r.read_stream(s).unwrap()).unwrap();
    }
    w.set_metadata(meta.encode()).unwrap();
    let forged = dir.path().join("forged.kpk");
    std::fs::write(&forged, w.finish().unwrap()).unwrap();
    let t = TableReader::open(&forged).unwrap();
    assert!(t.sorted_by()[0].descending);
    let err = t.verify_rows(1, &mut |_| {}).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains("row 1 sorts before row 0"), "{err}");
}

#[test]
fn plain_string_pages_take_the_string_codec() {
    // Random words (plain: too many distinct), category-like strings (a dictionary page),
    // numbers, and times written out (plain, but zstd stores them in under half LZ4's bytes).
    let n = 50_000;
    let mut x = 7u64;
    let mut letter = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (b'a' + ((x >> 33) % 26) as u8) as char
    };
    let words = StringArray::from_iter_values((0..n).map(|i| (0..3 + i % 8).map(|_| letter()).collect::<String>()));
    let mut y = 11u64;
    let mut printable = || {
        y = y.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (b' ' + ((y >> 33) % 95) as u8) as char
    };
    let noise = StringArray::from_iter_values((0..n).map(|_| (0..24).map(|_| printable()).collect::<String>()));
    let cities = StringArray::from_iter_values((0..n).map(|i| ["Oslo", "Lima", "Pune"][i % 3]));
    let ints = Int64Array::from_iter_values((0..n as i64).map(|i| (i * 7919) % 1_000_003));
    let digits = StringArray::from_iter_values((0..n).map(|i| {
        format!(
            "2013-{:02}-{:02} {:02}:{:02}:00",
            1 + i / 40_320,
            1 + i / 1440 % 28,
            i / 60 % 24,
            i % 60
        )
    }));
    let paths = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    let urls = StringArray::from_iter_values(
        (0..n).map(|i| format!("https://example.com/{}/{}", paths[i * 7 % 8], i * 7919 % 1_000_003)),
    );
    let batch = RecordBatch::try_from_iter([
        ("word", Arc::new(words) as ArrayRef),
        ("city", Arc::new(cities) as ArrayRef),
        ("int", Arc::new(ints) as ArrayRef),
        ("times", Arc::new(digits) as ArrayRef),
        ("url", Arc::new(urls) as ArrayRef),
        ("noise", Arc::new(noise) as ArrayRef),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let codecs = |opts: TableOptions| {
        let path = dir.path().join("t.kpk");
        write_table_file(&path, batch.schema(), [Ok(batch.clone())], opts).unwrap();
        let t = TableReader::open(&path).unwrap();
        check_read(&t, &batch, &[0, 1, 2, 3, 4, 5], 0, n);
        t.summary()
            .into_iter()
            .map(|c| {
                (
                    c.name,
                    c.encodings.into_keys().collect::<Vec<_>>(),
                    c.codecs.into_keys().collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    let by_default = codecs(TableOptions::default());
    // zstd where it stores a page in under 0.8x LZ4's bytes: random letters (LZ4 finds no
    // repeats, zstd's entropy coder spends under 5 bits a letter), times, URLs.
    let plain_zstd = |name: &str| (name.to_string(), vec!["plain"], vec!["zstd".to_string()]);
    assert_eq!(by_default[0], plain_zstd("word"));
    assert_eq!(by_default[1].1, vec!["column dict"]);
    assert_eq!(by_default[3], plain_zstd("times"));
    assert_eq!(by_default[4], plain_zstd("url"));
    // Elsewhere the string codec, LZ4, which stores 95 random printable characters as they are
    // (zstd would save under a fifth: 6.6 bits of 8).
    assert_eq!(by_default[5], ("noise".into(), vec!["plain"], vec!["none".to_string()]));
    // With symbol tables, URLs take one (their pages then go through no codec); random letters
    // have too few repeats for symbols to pay, and the rest is as before.
    let symbols = codecs(TableOptions {
        symbol_tables: true,
        ..Default::default()
    });
    assert_eq!(symbols[4], ("url".into(), vec!["symbols"], vec!["none".to_string()]));
    assert_eq!(symbols[..4], by_default[..4]);
    assert_eq!(symbols[5], by_default[5]);
    // A codec chosen for the whole table (no string codec of its own) covers strings too.
    let zstd = codecs(TableOptions {
        string_codec: None,
        ..Default::default()
    });
    assert_eq!(zstd[0].2, vec!["zstd".to_string()]);
    // Dictionary codes and numbers keep the table's codec either way.
    assert_eq!(zstd[1..3], by_default[1..3]);
    assert_eq!(zstd[3], by_default[3]);
    let lz4hc = codecs(TableOptions {
        codec: kompakt::CodecSpec::Fixed(kompakt::Codec::Lz4Hc { level: 9 }),
        string_codec: Some(kompakt::CodecSpec::Fixed(kompakt::Codec::Zstd { level: 1 })),
        ..Default::default()
    });
    // A codec named for every page (LZ4 too) is what every page gets: no symbol tables.
    let lz4 = codecs(
        TableOptions {
            symbol_tables: true,
            ..Default::default()
        }
        .with_codec(kompakt::CodecSpec::Fixed(kompakt::Codec::Lz4 { acceleration: 1 })),
    );
    assert_eq!(lz4[4].1, vec!["plain"]);
    assert_eq!(lz4[4].2, vec!["lz4".to_string()]);
    // `with_codec` is one codec for every page.
    let everywhere =
        codecs(TableOptions::default().with_codec(kompakt::CodecSpec::Fixed(kompakt::Codec::Zstd { level: 2 })));
    assert_eq!(everywhere, zstd);
    assert_eq!(lz4hc[0].2, vec!["zstd".to_string()]);
    assert_eq!(lz4hc[1].1, vec!["column dict"]);
    assert!(!lz4hc[1].2.contains(&"zstd".to_string()), "{lz4hc:?}");
}

#[test]
fn fixed_width_columns_decode_into_caller_memory() {
    let n = 40_000usize;
    let ints = Int32Array::from_iter_values((0..n as i32).map(|i| (i * 7919) % 1_000_003));
    let floats = Float64Array::from_iter((0..n).map(|i| (i % 1000 != 7).then_some(i as f64 / 4.0)));
    let words = StringArray::from_iter_values((0..n).map(|i| format!("w{}", i % 77)));
    let batch = RecordBatch::try_from_iter([
        ("i", Arc::new(ints.clone()) as ArrayRef),
        ("f", Arc::new(floats.clone()) as ArrayRef),
        ("s", Arc::new(words) as ArrayRef),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch, &[12_345], 4096);
    let t = TableReader::open(&path).unwrap();
    for (a, b) in [(0, n), (0, 1), (4095, 4097), (8192, 12_288), (39_999, n), (777, 777)] {
        let mut dst = vec![0u8; 4 * (b - a)];
        assert!(t.read_column_into(0, a as u64..b as u64, &mut dst, 2).unwrap());
        let got: Vec<i32> = dst
            .chunks_exact(4)
            .map(|x| i32::from_le_bytes(x.try_into().unwrap()))
            .collect();
        assert_eq!(got, ints.values()[a..b], "rows {a}..{b}");
        // The float column has a null at every 1000th row + 7: valid values are right, and
        // the answer says whether the rows hold a null.
        let mut dst = vec![0u8; 8 * (b - a)];
        let all_valid = t.read_column_into(1, a as u64..b as u64, &mut dst, 1).unwrap();
        assert_eq!(all_valid, (a..b).all(|i| i % 1000 != 7), "rows {a}..{b}");
        // From the index: every group of the float column has a null, none of the ints.
        assert!(!t.may_have_nulls(0, a as u64..b as u64).unwrap());
        assert_eq!(t.may_have_nulls(1, a as u64..b as u64).unwrap(), a < b, "rows {a}..{b}");
        for (i, x) in (a..b).zip(dst.chunks_exact(8)) {
            if floats.is_valid(i) {
                assert_eq!(f64::from_le_bytes(x.try_into().unwrap()), floats.value(i));
            }
        }
    }
    // Not fixed width, a wrong size, rows past the end: errors.
    assert!(t.read_column_into(2, 0..10, &mut [0u8; 40], 1).is_err());
    assert!(t.read_column_into(0, 0..10, &mut [0u8; 39], 1).is_err());
    assert!(t
        .read_column_into(0, 0..(n as u64 + 1), &mut vec![0u8; 4 * (n + 1)], 1)
        .is_err());
    assert!(t.read_column_into(3, 0..10, &mut [0u8; 40], 1).is_err());
}

#[test]
fn large_reads_on_threads_equal_the_original() {
    // Reads of more than 256 KiB of pages go to the thread pool (smaller ones, such as every
    // read of the property test above, run on the calling thread): the same rows either way.
    let n = 60_000;
    let batch = table(n, 7);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &batch, &[1000, 30_000], 4096);
    let t = TableReader::open(&path).unwrap();
    let encoded: u64 = t.summary().iter().map(|c| c.encoded).sum();
    assert!(
        encoded > 1 << 20,
        "{encoded} bytes of pages: too few to leave the calling thread"
    );
    let all: Vec<usize> = (0..COLUMNS).collect();
    check_read(&t, &batch, &all, 0, n);
    check_read(&t, &batch, &all, 4000, 50_001);
    let (_, two) = t.read(None, 0..n as u64, 2).unwrap();
    let (_, one) = t.read(None, 0..n as u64, 1).unwrap();
    assert_eq!(two, one);
}

#[test]
fn a_table_reads_the_same_from_a_file_and_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let batch = table(5_000, 11);
    let path = write(dir.path(), &batch, &[1_234], 1_000);
    let bytes: Arc<dyn kompakt::stream::ReadAt> = Arc::new(std::fs::read(&path).unwrap());
    let in_memory = TableReader::from_source(bytes).unwrap();
    let all: Vec<usize> = (0..batch.num_columns()).collect();
    check_read(&in_memory, &batch, &all, 0, batch.num_rows());
    check_read(&in_memory, &batch, &all[..2], 2_500, 3_700);
    assert_eq!(in_memory.verify_rows(2, &mut |_| {}).unwrap(), batch.num_rows() as u64);
    let cut: Arc<dyn kompakt::stream::ReadAt> = Arc::new(std::fs::read(&path).unwrap()[..100].to_vec());
    assert!(TableReader::from_source(cut).is_err_and(|e| e.is_corruption()));
}

#[test]
fn statistics_can_be_left_out_and_appends_never_leave_them_stale() {
    use kompakt_table::append_table_file;
    let batch = table(1_000, 5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let without = TableOptions {
        rows_per_group: 64,
        statistics: false,
        ..Default::default()
    };
    write_table_file(&path, batch.schema(), [Ok(batch.slice(0, 300))], without.clone()).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert!(!t.has_statistics());
    assert!(t.statistics(0).unwrap().is_none());
    assert!(t.statistics(COLUMNS).is_err());
    // An append to a table without statistics adds none (it cannot know the old groups').
    append_table_file(&path, [Ok(batch.slice(300, 300))], TableOptions::default()).unwrap();
    assert!(!TableReader::open(&path).unwrap().has_statistics());

    let path = write(dir.path(), &batch.slice(0, 300), &[], 64);
    append_table_file(&path, [Ok(batch.slice(300, 300))], TableOptions::default()).unwrap();
    check_statistics(&TableReader::open(&path).unwrap(), &batch.slice(0, 600));
    // An append told to keep none drops them rather than leave them stale.
    append_table_file(&path, [Ok(batch.slice(600, 400))], without).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert!(!t.has_statistics());
    check_read(&t, &batch, &(0..COLUMNS).collect::<Vec<_>>(), 0, 1_000);
}

#[test]
fn statistics_never_raise_the_table_layout() {
    // Days as microseconds, in runs: data pages need layout 2 (runs), while the bounds alone
    // (whole days) would be scaled pages of layout 3.
    let day = 86_400_000_000i64;
    let days = TimestampMicrosecondArray::from_iter_values((0..50_000).map(|i| (i / 5_000) as i64 * day));
    let batch = RecordBatch::try_from_iter([("day", Arc::new(days) as ArrayRef)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut layouts = Vec::new();
    for statistics in [false, true] {
        let path = dir.path().join(format!("{statistics}.kpk"));
        let opts = TableOptions {
            rows_per_group: 4096,
            statistics,
            ..Default::default()
        };
        write_table_file(&path, batch.schema(), [Ok(batch.clone())], opts).unwrap();
        let t = TableReader::open(&path).unwrap();
        layouts.push(t.layout());
        if statistics {
            check_statistics(&t, &batch);
        }
    }
    assert_eq!(layouts, [2, 2]);
}

/// A source that records the byte ranges it is told to prefetch and the reads it serves.
struct RecordingSource {
    data: Vec<u8>,
    hinted: std::sync::Mutex<Vec<std::ops::Range<u64>>>,
    read: std::sync::Mutex<Vec<std::ops::Range<u64>>>,
}

impl kompakt::stream::ReadAt for RecordingSource {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.data.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let at = offset as usize;
        buf.copy_from_slice(&self.data[at..at + buf.len()]);
        self.read.lock().unwrap().push(offset..offset + buf.len() as u64);
        Ok(())
    }

    fn prefetch(&self, ranges: &[std::ops::Range<u64>]) {
        self.hinted.lock().unwrap().extend(ranges.iter().cloned());
    }
}

#[test]
fn a_prefetch_hints_the_pages_that_reads_of_the_range_then_read() {
    let dir = tempfile::tempdir().unwrap();
    let batch = table(5_000, 3);
    let path = write(dir.path(), &batch, &[], 500);
    let source = Arc::new(RecordingSource {
        data: std::fs::read(&path).unwrap(),
        hinted: Default::default(),
        read: Default::default(),
    });
    let t = TableReader::from_source(Arc::clone(&source) as Arc<dyn kompakt::stream::ReadAt>).unwrap();
    source.read.lock().unwrap().clear();
    let (columns, rows) = ([1usize, 3], 1_200..3_700u64);
    t.prefetch(Some(&columns), rows.clone()).unwrap();
    let hinted = std::mem::take(&mut *source.hinted.lock().unwrap());
    assert!(!hinted.is_empty());
    assert!(source.read.lock().unwrap().is_empty(), "a hint reads nothing itself");
    // Reading the range a column and a chunk at a time reads only bytes the hint named.
    for &c in &columns {
        for start in (rows.start..rows.end).step_by(700) {
            t.read(Some(&[c]), start..(start + 700).min(rows.end), 1).unwrap();
        }
    }
    let read = source.read.lock().unwrap().clone();
    assert!(!read.is_empty());
    for r in &read {
        assert!(
            hinted.iter().any(|h| h.start <= r.start && r.end <= h.end),
            "{r:?} was read but not hinted: {hinted:?}"
        );
    }
    // Other columns' pages were not hinted: fewer bytes than the whole range of every column.
    t.prefetch(None, rows.clone()).unwrap();
    let all: u64 = source.hinted.lock().unwrap().iter().map(|r| r.end - r.start).sum();
    assert!(hinted.iter().map(|r| r.end - r.start).sum::<u64>() < all);
    // A hint of nothing hints nothing; one outside the table is an error, as a read is.
    source.hinted.lock().unwrap().clear();
    t.prefetch(None, 10..10).unwrap();
    assert!(source.hinted.lock().unwrap().is_empty());
    assert!(t.prefetch(None, 0..5_001).is_err());
    assert!(t.prefetch(Some(&[99]), 0..10).is_err());
}

/// Numbers drawn from a few thousand values (hourly earnings, prices) share one dictionary per
/// column (table layout 6): every read path gives them back, appends grow the dictionary, and
/// numbers whose own encodings are as small (sorted, narrow, few) keep them.
/// A row number hashed (splitmix64's finaliser): values drawn with it are about equally common.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn numeric_column_dictionaries_round_trip_and_grow_with_appends() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use kompakt_table::append_table_file;
    let schema = Arc::new(Schema::new(vec![
        Field::new("earnings", DataType::Float64, true),
        Field::new("wide", DataType::Int64, false),
        Field::new("narrow", DataType::UInt32, false),
        Field::new("sorted", DataType::Int64, false),
    ]));
    // Values hashed from the row number: each about as common as any other.
    let pick = |i: usize, kinds: usize| (mix(i as u64) % kinds as u64) as usize;
    let batch = |from: usize, n: usize, kinds: usize| {
        let rows = from..from + n;
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Float64Array::from_iter(
                    rows.clone()
                        .map(|i| (i % 97 != 5).then(|| pick(i, kinds) as f64 / 7.0 + 3.0)),
                )) as ArrayRef,
                Arc::new(Int64Array::from_iter_values(
                    // Ids of 64 bits: no common factor, no narrow range.
                    rows.clone().map(|i| mix(pick(i, kinds) as u64 + 77) as i64),
                )),
                Arc::new(UInt32Array::from_iter_values(
                    rows.clone().map(|i| pick(i, kinds) as u32),
                )),
                Arc::new(Int64Array::from_iter_values(rows.map(|i| (i / 13) as i64 * 3_600))),
            ],
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("numbers.kpk");
    let opts = TableOptions::default();
    write_table_file(&path, schema.clone(), [Ok(batch(0, 40_000, 3_000))], opts.clone()).unwrap();
    let t = TableReader::open(&path).unwrap();
    // 6 for the shared dictionaries of numbers; 9 as the sevenths' dictionary is stored
    // unshuffled (their mantissas repeat a pattern of bytes).
    assert_eq!(t.layout(), 9);
    let encodings: Vec<_> = t.summary().into_iter().map(|c| c.encodings).collect();
    for c in 0..2 {
        assert_eq!(encodings[c].get("column dict"), Some(&3), "{c}: {encodings:?}");
    }
    for c in 2..4 {
        assert!(!encodings[c].contains_key("column dict"), "{c}: {encodings:?}");
    }
    // Appended rows add values (the first 3,000 keep their codes) and new pages use them.
    append_table_file(&path, [Ok(batch(40_000, 30_000, 4_000))], opts.clone()).unwrap();
    let want = arrow_select::concat::concat_batches(&schema, &[batch(0, 40_000, 3_000), batch(40_000, 30_000, 4_000)])
        .unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.layout(), 9);
    assert_eq!(t.summary()[0].encodings.get("column dict"), Some(&5));
    let (_, batches) = t.read(None, 0..70_000, 2).unwrap();
    assert_eq!(arrow_select::concat::concat_batches(&schema, &batches).unwrap(), want);
    let (_, batches) = t.read(None, 16_000..41_000, 1).unwrap();
    assert_eq!(
        arrow_select::concat::concat_batches(&schema, &batches).unwrap(),
        want.slice(16_000, 25_000)
    );
    let indices = [0u64, 16_383, 16_384, 39_999, 40_000, 69_999, 123];
    let (_, taken) = t.take(None, &indices, 2).unwrap();
    for (k, &i) in indices.iter().enumerate() {
        assert_eq!(taken.slice(k, 1), want.slice(i as usize, 1), "row {i}");
    }
    // Straight into a caller's buffer, as whole-column reads into numpy and R do.
    let mut earnings = vec![0u8; 8 * 30_000];
    t.read_column_into(0, 35_000..65_000, &mut earnings, 2).unwrap();
    let want_earnings = want.column(0).as_primitive::<Float64Type>();
    for (k, v) in earnings.chunks_exact(8).enumerate() {
        if want_earnings.is_valid(35_000 + k) {
            assert_eq!(
                f64::from_le_bytes(v.try_into().unwrap()),
                want_earnings.value(35_000 + k)
            );
        }
    }
    let mut wide = vec![0u8; 8 * 70_000];
    t.read_column_into(1, 0..70_000, &mut wide, 2).unwrap();
    let want_wide = want.column(1).as_primitive::<Int64Type>().values();
    assert!(wide
        .chunks_exact(8)
        .zip(want_wide.iter())
        .all(|(v, w)| i64::from_le_bytes(v.try_into().unwrap()) == *w));
    // A reader checks the whole file, dictionaries included.
    assert_eq!(t.verify_rows(2, &mut |_| {}).unwrap(), 70_000);
}

#[test]
fn a_one_group_tables_floats_weigh_a_page_dictionary_not_a_shared_one() {
    // Amounts in cents drawn from 1,500 values up to $400, as hourly earnings are: as decimal
    // codes they take 16 bits a row, as a dictionary 11. In one row group the page weighs a
    // dictionary of its own (no column dictionary is tried there); in several the column
    // shares one.
    // Integers keep the shared dictionary in one group: ids of 64 bits drawn from 1,500.
    let schema = Arc::new(Schema::new(vec![
        Field::new("earnings", DataType::Float64, true),
        Field::new("id", DataType::Int64, false),
    ]));
    let amount = |i: u64| (400 + mix(i) % 1_500 * 2_641 % 40_000) as f64 / 100.0;
    let values: Float64Array = (0..20_000u64).map(|i| (i % 89 != 3).then(|| amount(i))).collect();
    let ids = Int64Array::from_iter_values((0..20_000u64).map(|i| (amount(i) * 100.0) as i64 * 0x2545_F491_4F6C_DD1D));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values) as ArrayRef, Arc::new(ids)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (rows_per_group, shared) in [(32_768, false), (10_000, true)] {
        let path = dir.path().join(format!("earnings-{rows_per_group}.kpk"));
        let opts = TableOptions {
            rows_per_group,
            ..TableOptions::default()
        };
        write_table_file(&path, schema.clone(), [Ok(batch.clone())], opts).unwrap();
        let t = TableReader::open(&path).unwrap();
        let encodings = &t.summary()[0].encodings;
        let page_dict = encodings.contains_key("dict") || encodings.contains_key("nested dict");
        assert_eq!(encodings.contains_key("column dict"), shared, "{encodings:?}");
        assert_eq!(page_dict, !shared, "{encodings:?}");
        assert!(!encodings.contains_key("decimal"), "{encodings:?}");
        let ids = &t.summary()[1].encodings;
        assert!(ids.contains_key("column dict"), "{ids:?}");
        let (_, batches) = t.read(None, 0..20_000, 2).unwrap();
        assert_eq!(arrow_select::concat::concat_batches(&schema, &batches).unwrap(), batch);
    }
}

#[test]
fn a_one_group_tables_float_pages_keep_their_bytes_on_any_threads() {
    // A one-group table's decimal floats weigh their decimal page against a dictionary of
    // their own, each page on whichever thread takes it: the bytes must not depend on how
    // many. Doubles and floats of 1,500 amounts, the doubles mostly null too, and doubles that
    // are no decimals.
    let n = 20_000u64;
    let amount = |i: u64| (400 + mix(i) % 1_500 * 2_641 % 40_000) as f64 / 100.0;
    let earnings: Float64Array = (0..n).map(|i| Some(amount(i))).collect();
    let earnings32: Float32Array = (0..n).map(|i| Some(amount(i) as f32)).collect();
    let sparse: Float64Array = (0..n).map(|i| (i % 10 == 0).then(|| amount(i))).collect();
    let sensor: Float64Array = (0..n)
        .map(|i| Some((mix(i) >> 11) as f64 / (1u64 << 53) as f64 * 20.0))
        .collect();
    let batch = RecordBatch::try_from_iter([
        ("earnings", Arc::new(earnings) as ArrayRef),
        ("earnings32", Arc::new(earnings32) as ArrayRef),
        ("sparse", Arc::new(sparse) as ArrayRef),
        ("sensor", Arc::new(sensor) as ArrayRef),
    ])
    .unwrap();
    let mut files = Vec::new();
    for threads in [1, 2, 3] {
        let opts = TableOptions {
            threads,
            ..TableOptions::default()
        };
        let mut w = TableWriter::new(Vec::new(), batch.schema(), opts).unwrap();
        w.write(&batch).unwrap();
        files.push(w.finish().unwrap());
    }
    assert!(
        files.windows(2).all(|w| w[0] == w[1]),
        "the bytes depend on the threads"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    std::fs::write(&path, &files[0]).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert_eq!(t.num_groups(), 1, "one group, one page a column");
    let summary = t.summary();
    assert!(
        !summary[3].encodings.keys().any(|e| e.contains("dict")),
        "sensor: {:?}",
        summary[3].encodings
    );
    for (c, name) in [(0, "earnings"), (1, "earnings32")] {
        let dict = summary[c].encodings.contains_key("dict") || summary[c].encodings.contains_key("nested dict");
        assert!(dict, "{name}: {:?}", summary[c].encodings);
    }
    let (_, batches) = t.read(None, 0..n, 2).unwrap();
    assert_eq!(
        arrow_select::concat::concat_batches(&batch.schema(), &batches).unwrap(),
        batch
    );
}
