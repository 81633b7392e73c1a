//! Planning and filtering, case by case: the semantics of python/kompakt/_plan.py (which this
//! replaces), and [`matches()`] for every op.

#![allow(clippy::single_range_in_vec_init)] // plans of one range of rows
use super::*;
use crate::{SortKey, TableOptions, TableWriter};
use arrow_array::types::Int32Type;
use arrow_array::{
    BooleanArray, DictionaryArray, Float32Array, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, TimestampMillisecondArray,
};
use arrow_schema::DataType;
use std::sync::Arc;

/// `batch` as a table of `rows_per_group` rows a group, sorted by `sorted_by`.
pub(super) fn table(
    batch: &RecordBatch,
    rows_per_group: u32,
    sorted_by: Vec<SortKey>,
    statistics: bool,
) -> TableReader {
    let options = TableOptions {
        rows_per_group,
        sorted_by,
        statistics,
        threads: 1,
        ..TableOptions::default()
    };
    let mut w = TableWriter::new(Vec::new(), batch.schema(), options).unwrap();
    w.write(batch).unwrap();
    TableReader::from_source(Arc::new(w.finish().unwrap())).unwrap()
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

fn filter(column: &str, op: &str, values: ArrayRef) -> Filter {
    Filter::new(column, op.parse().unwrap(), values)
}

fn int(v: i64) -> ArrayRef {
    Arc::new(Int64Array::from(vec![v]))
}

fn ints(v: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn float(v: f64) -> ArrayRef {
    Arc::new(Float64Array::from(vec![v]))
}

fn floats(v: Vec<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(v))
}

fn strings(v: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn plan(t: &TableReader, filters: &[Filter]) -> Vec<Range<u64>> {
    plan_rows(t, filters, 0..t.num_rows()).unwrap()
}

/// The rows of the table that pass, by [`matches()`] over all of them.
fn passing(t: &TableReader, filters: &[Filter]) -> Vec<u64> {
    let (_, batches) = t.read(None, 0..t.num_rows(), 1).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    for b in batches {
        let m = matches(&b, filters).unwrap();
        out.extend((0..b.num_rows()).filter(|&i| m.value(i)).map(|i| at + i as u64));
        at += b.num_rows() as u64;
    }
    out
}

#[test]
fn ops_parse_from_the_spellings_of_pyarrow_filters() {
    let ops = [
        Op::Eq,
        Op::Eq,
        Op::Ne,
        Op::Lt,
        Op::Le,
        Op::Gt,
        Op::Ge,
        Op::In,
        Op::NotIn,
    ];
    for (name, op) in OP_NAMES.iter().zip(ops) {
        assert_eq!(name.parse::<Op>().unwrap(), op);
        assert_eq!(op.as_str().parse::<Op>().unwrap(), op);
    }
    assert_eq!(Op::NotIn.to_string(), "not in");
    for bad in ["~", "", "IN", "not  in", "=>", "eq"] {
        let e = bad.parse::<Op>().unwrap_err();
        assert!(matches!(e, Error::InvalidOption { .. }), "{e}");
        assert!(e.to_string().contains("==, =, !=, <, <=, >, >=, in, not in"), "{e}");
    }
}

#[test]
fn bad_filters_are_option_errors_that_say_what_is_valid() {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1)])]);
    let b = batch(vec![
        ("n", ints(vec![Some(1)])),
        ("s", strings(&["a"])),
        ("l", Arc::new(list) as ArrayRef),
    ]);
    let t = table(&b, 10, vec![], true);
    let cases = [
        (filter("nope", "==", int(1)), "one of [\"n\", \"s\", \"l\"]"),
        (filter("n", "==", ints(vec![Some(1), Some(2)])), "one value for =="),
        (filter("n", "<", ints(vec![])), "a list of any length for in"),
        (filter("n", ">", strings(&["1"])), "values of type Int64"),
        (
            filter("n", "in", Arc::new(Int32Array::from(vec![1]))),
            "values of type Int64",
        ),
        (filter("s", "==", int(1)), "values of type Utf8"),
        (filter("l", "==", int(1)), "a column of a type with an order"),
    ];
    for (f, message) in cases {
        for e in [
            plan_rows(&t, std::slice::from_ref(&f), 0..1).unwrap_err(),
            matches(&b, std::slice::from_ref(&f)).unwrap_err(),
            check_filters(&b.schema(), std::slice::from_ref(&f)).unwrap_err(),
        ] {
            assert!(matches!(e, Error::InvalidOption { .. }), "{e}");
            assert!(e.to_string().contains(message), "{e}\nshould say {message}");
        }
    }
    let e = plan_rows(&t, &[], 0..2).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    // Lists of any length, the empty one included, are fine.
    check_filters(
        &b.schema(),
        &[filter("n", "in", ints(vec![])), filter("n", "not in", ints(vec![]))],
    )
    .unwrap();
}

#[test]
fn a_sorted_key_is_narrowed_by_binary_search() {
    let n = 1000;
    let b = batch(vec![("t", ints((0..n).map(|i| Some(i / 2)).collect()))]);
    // No statistics: only the search narrows.
    let t = table(&b, 64, vec![SortKey::ascending("t")], false);
    let cases: [(&str, i64, Range<u64>); 8] = [
        (">", 6, 14..1000),
        (">=", 6, 12..1000),
        ("<", 6, 0..12),
        ("<=", 6, 0..14),
        ("==", 6, 12..14),
        ("=", 100, 200..202),
        ("==", 5000, 0..0),
        (">", -1, 0..1000),
    ];
    for (op, v, want) in cases {
        let f = [filter("t", op, int(v))];
        let want: Vec<Range<u64>> = if want.is_empty() { vec![] } else { vec![want] };
        assert_eq!(plan(&t, &f), want, "t {op} {v}");
    }
    // Several filters intersect; a sub-range of rows narrows within it.
    let f = [filter("t", ">=", int(100)), filter("t", "<", int(300))];
    assert_eq!(plan(&t, &f), vec![200..600]);
    assert_eq!(plan_rows(&t, &f, 250..700).unwrap(), vec![250..600]);
    assert_eq!(plan_rows(&t, &f, 700..1000).unwrap(), vec![]);
    assert_eq!(plan_rows(&t, &f, 300..300).unwrap(), vec![]);
    // Not narrowed by `!=`, `in`, `not in`, nor on a descending key.
    for f in [
        filter("t", "!=", int(3)),
        filter("t", "in", ints(vec![Some(3)])),
        filter("t", "not in", ints(vec![])),
    ] {
        assert_eq!(plan(&t, &[f]), vec![0..1000]);
    }
    let desc = batch(vec![("t", ints((0..n).rev().map(Some).collect()))]);
    let t = table(&desc, 64, vec![SortKey::descending("t")], false);
    assert_eq!(plan(&t, &[filter("t", ">", int(900))]), vec![0..1000]);
    // A key that is not the first narrows nothing.
    let two = batch(vec![
        ("a", ints(vec![Some(1); 100])),
        ("t", ints((0..100).map(Some).collect())),
    ]);
    let t = table(&two, 10, vec![SortKey::ascending("a"), SortKey::ascending("t")], false);
    assert_eq!(plan(&t, &[filter("t", ">", int(90))]), vec![0..100]);
}

#[test]
fn nan_sorts_as_infinity_and_nulls_sit_at_their_end() {
    // As python/tests/test_statistics.py: NaN rows kept by `>` and `>=`.
    let x = floats(vec![1.0, 2.0, 7.0, f64::NAN, f64::NAN, -f64::NAN, f64::NAN]);
    let t = table(&batch(vec![("x", x)]), 2, vec![SortKey::ascending("x")], false);
    let cases = [
        (">", 5.0, 2..7),
        (">=", 7.0, 2..7),
        ("<", 5.0, 0..2),
        ("==", 7.0, 2..3),
        // NaN after every number, +inf included: kept by `> inf`, as Polars keeps it.
        ("==", f64::INFINITY, 0..0),
        (">", f64::INFINITY, 3..7),
        ("<=", f64::INFINITY, 0..3),
        ("<", f64::NAN, 0..7),
        ("==", f64::NAN, 0..0),
        (">", f64::NAN, 0..0),
    ];
    for (op, v, want) in cases {
        let want: Vec<Range<u64>> = if want.is_empty() { vec![] } else { vec![want] };
        assert_eq!(plan(&t, &[filter("x", op, float(v))]), want, "x {op} {v}");
    }
    // Signed zeros are one value to the search.
    let z = floats(vec![-1.0, 0.0, -0.0, 0.0, -0.0, 3.0]);
    let t = table(&batch(vec![("z", z)]), 4, vec![SortKey::ascending("z")], false);
    assert_eq!(plan(&t, &[filter("z", "==", float(-0.0))]), vec![1..5]);
    assert_eq!(plan(&t, &[filter("z", "<", float(0.0))]), vec![0..1]);

    let values = |v: Vec<Option<i64>>| batch(vec![("k", ints(v))]);
    let last = values(vec![Some(1), Some(2), Some(3), None, None]);
    let t = table(&last, 2, vec![SortKey::ascending("k")], false);
    assert_eq!(plan(&t, &[filter("k", ">", int(1))]), vec![1..5]);
    assert_eq!(plan(&t, &[filter("k", "<", int(3))]), vec![0..2]);
    let mut key = SortKey::ascending("k");
    key.nulls_first = true;
    let first = values(vec![None, None, Some(1), Some(2), Some(3)]);
    let t = table(&first, 2, vec![key], false);
    assert_eq!(plan(&t, &[filter("k", "<", int(3))]), vec![0..4]);
    assert_eq!(plan(&t, &[filter("k", ">", int(1))]), vec![3..5]);
    // Many nulls: the probes land on them.
    let t = table(
        &values(vec![None, None, None, None, None, None, Some(1), Some(2), Some(3)]),
        2,
        vec![t.sorted_by()[0].clone()],
        false,
    );
    assert_eq!(plan(&t, &[filter("k", "<", int(3))]), vec![0..8]);
    assert_eq!(plan(&t, &[filter("k", "<=", int(0))]), vec![0..6]);
    assert_eq!(plan(&t, &[filter("k", ">", int(1))]), vec![7..9]);
    let t = table(
        &values(vec![Some(1), Some(2), Some(3), None, None, None, None, None, None]),
        2,
        vec![SortKey::ascending("k")],
        false,
    );
    assert_eq!(plan(&t, &[filter("k", ">", int(3))]), vec![3..9]);
    assert_eq!(plan(&t, &[filter("k", "<", int(3))]), vec![0..2]);
    // A null value has no place in the order: nothing is narrowed by it.
    assert_eq!(plan(&t, &[filter("k", ">", ints(vec![None]))]), vec![0..9]);
}

#[test]
fn a_dictionary_key_is_searched_by_its_values() {
    // Sorted: 3 apple, 6 kiwi, 3 pear, 3 plum.
    let sorted = [["apple"; 3].as_slice(), &["kiwi"; 6], &["pear"; 3], &["plum"; 3]].concat();
    let d: DictionaryArray<Int32Type> = sorted.into_iter().collect();
    let t = table(
        &batch(vec![("d", Arc::new(d) as ArrayRef)]),
        4,
        vec![SortKey::ascending("d")],
        false,
    );
    assert_eq!(plan(&t, &[filter("d", "==", strings(&["kiwi"]))]), vec![3..9]);
    assert_eq!(plan(&t, &[filter("d", ">", strings(&["pear"]))]), vec![12..15]);
    // Values given as a dictionary work too.
    let v: DictionaryArray<Int32Type> = vec!["kiwi"].into_iter().collect();
    assert_eq!(plan(&t, &[filter("d", "==", Arc::new(v))]), vec![3..9]);
}

/// A float column of three row groups of 3: `groups`.
fn float_groups(groups: [[Option<f64>; 3]; 3]) -> TableReader {
    let x: Float64Array = groups.iter().flatten().copied().collect();
    table(&batch(vec![("x", Arc::new(x) as ArrayRef)]), 3, vec![], true)
}

#[test]
fn statistics_drop_row_groups_for_every_op() {
    // Groups: 0..=2 with a null, 5 alone, 10..=20.
    let t = table(
        &batch(vec![(
            "n",
            ints(vec![
                Some(0),
                None,
                Some(2),
                Some(5),
                Some(5),
                Some(5),
                Some(10),
                Some(20),
                Some(15),
            ]),
        )]),
        3,
        vec![],
        true,
    );
    let cases: Vec<(Filter, Vec<Range<u64>>)> = vec![
        (filter("n", "==", int(5)), vec![3..6]),
        (filter("n", "==", int(3)), vec![]),
        (filter("n", "!=", int(5)), vec![0..3, 6..9]),
        (filter("n", "!=", int(0)), vec![0..9]),
        (filter("n", "<", int(5)), vec![0..3]),
        (filter("n", "<=", int(5)), vec![0..6]),
        (filter("n", ">", int(5)), vec![6..9]),
        (filter("n", ">=", int(5)), vec![3..9]),
        (filter("n", "in", ints(vec![Some(1), Some(12)])), vec![0..3, 6..9]),
        (filter("n", "in", ints(vec![])), vec![]),
        (filter("n", "not in", ints(vec![Some(5), Some(7)])), vec![0..3, 6..9]),
        (filter("n", "not in", ints(vec![Some(7)])), vec![0..9]),
        (filter("n", "not in", ints(vec![])), vec![0..9]),
        // A null value compares with nothing known: every group with values is kept.
        (filter("n", "==", ints(vec![None])), vec![0..9]),
        (filter("n", "in", ints(vec![None, Some(3)])), vec![0..9]),
        // All filters must hold.
        (filter("n", ">", int(1)), vec![0..9]),
    ];
    for (f, want) in &cases {
        assert_eq!(
            plan(&t, std::slice::from_ref(f)),
            *want,
            "{} {} {:?}",
            f.column,
            f.op,
            f.values
        );
        let rows: Vec<u64> = want.iter().flat_map(|r| r.clone()).collect();
        assert!(passing(&t, std::slice::from_ref(f)).iter().all(|r| rows.contains(r)));
    }
    let both = [filter("n", ">", int(1)), filter("n", "<", int(10))];
    assert_eq!(plan(&t, &both), vec![0..6]);
    // The rows asked for, cut to them.
    assert_eq!(plan_rows(&t, &[filter("n", ">=", int(5))], 4..8).unwrap(), vec![4..8]);
    assert_eq!(plan_rows(&t, &[filter("n", "==", int(5))], 1..4).unwrap(), vec![3..4]);
}

#[test]
fn groups_of_nulls_match_only_what_nulls_may_match() {
    let t = table(
        &batch(vec![("n", ints(vec![None, None, Some(1), Some(2)]))]),
        2,
        vec![],
        true,
    );
    for (op, want) in [
        ("==", vec![2..4]),
        ("<", vec![]),
        ("<=", vec![2..4]),
        ("!=", vec![0..4]),
        (">=", vec![2..4]),
    ] {
        assert_eq!(plan(&t, &[filter("n", op, int(1))]), want, "{op}");
    }
    assert_eq!(plan(&t, &[filter("n", "in", ints(vec![Some(1)]))]), vec![2..4]);
    assert_eq!(plan(&t, &[filter("n", "not in", ints(vec![Some(1)]))]), vec![0..4]);
    // A null in an `in` list matches the null rows.
    assert_eq!(plan(&t, &[filter("n", "in", ints(vec![None]))]), vec![0..4]);
    assert_eq!(passing(&t, &[filter("n", "in", ints(vec![None]))]), vec![0, 1]);
}

#[test]
fn nan_and_signed_zeros_keep_their_groups() {
    let (nan, z) = (Some(f64::NAN), Some(-0.0));
    let t = float_groups([
        [Some(1.0), nan, Some(2.0)],
        [z, Some(0.0), z],
        [Some(5.0), Some(5.0), Some(5.0)],
    ]);
    let cases: Vec<(Filter, Vec<Range<u64>>)> = vec![
        // NaN rows "may match" every comparison.
        (filter("x", ">", float(3.0)), vec![0..3, 6..9]),
        (filter("x", "<", float(-1.0)), vec![0..3]),
        (filter("x", "==", float(0.0)), vec![0..6]),
        (filter("x", "==", float(-0.0)), vec![0..6]),
        (filter("x", "<", float(0.0)), vec![0..3]),
        (filter("x", "<=", float(-0.0)), vec![0..6]),
        // A group of zeros is never ruled out by `!=` or `not in`; one of 5.0 is.
        (filter("x", "!=", float(0.0)), vec![0..9]),
        (filter("x", "!=", float(5.0)), vec![0..6]),
        (filter("x", "not in", floats(vec![0.0, 5.0])), vec![0..6]),
        (filter("x", "not in", floats(vec![-0.0])), vec![0..9]),
        // A NaN value matches nothing (but the NaN rows' group is kept).
        (filter("x", "==", float(f64::NAN)), vec![0..3]),
        (filter("x", "in", floats(vec![f64::NAN])), vec![0..3]),
        (filter("x", "!=", float(f64::NAN)), vec![0..9]),
    ];
    for (f, want) in &cases {
        assert_eq!(plan(&t, std::slice::from_ref(f)), *want, "x {} {:?}", f.op, f.values);
        let rows: Vec<u64> = want.iter().flat_map(|r| r.clone()).collect();
        assert!(passing(&t, std::slice::from_ref(f)).iter().all(|r| rows.contains(r)));
    }
    // A group of NaN alone has no bounds, and is kept.
    let t = float_groups([[nan, nan, nan], [Some(1.0), None, None], [None, None, None]]);
    assert_eq!(plan(&t, &[filter("x", "<", float(0.0))]), vec![0..3]);
    assert_eq!(plan(&t, &[filter("x", "!=", float(1.0))]), vec![0..9]);
}

#[test]
fn strings_dictionaries_and_timestamps_are_bounded_too() {
    let long = "z".repeat(70);
    let s = strings(&["a", "b", "ab", "c", "d", &long, "x", "y", "y"]);
    let d: DictionaryArray<Int32Type> = vec![Some("p"), None, None, None, None, None, Some("q"), None, Some("r")]
        .into_iter()
        .collect();
    let ts = TimestampMillisecondArray::from(vec![1, 2, 3, 10, 20, 30, 100, 200, 300]).with_timezone("UTC");
    let b = batch(vec![
        ("s", s),
        ("d", Arc::new(d) as ArrayRef),
        ("ts", Arc::new(ts) as ArrayRef),
    ]);
    let t = table(&b, 3, vec![], true);
    assert_eq!(plan(&t, &[filter("s", "==", strings(&[&long]))]), vec![3..6]);
    // The long string's bounds are a prefix and the prefix raised by one: its group is kept.
    assert_eq!(plan(&t, &[filter("s", ">", strings(&[&long]))]), vec![3..6]);
    assert_eq!(plan(&t, &[filter("s", ">", strings(&["zz"]))]), vec![3..6]);
    assert_eq!(plan(&t, &[filter("s", "==", strings(&["y"]))]), vec![3..9]);
    assert_eq!(plan(&t, &[filter("s", "==", strings(&["b"]))]), vec![0..3]);
    assert_eq!(plan(&t, &[filter("s", "in", strings(&["ab", "zz"]))]), vec![0..6]);
    // Dictionaries have null counts only: a group of nulls is dropped, the rest kept.
    assert_eq!(plan(&t, &[filter("d", "==", strings(&["q"]))]), vec![0..3, 6..9]);
    assert_eq!(plan(&t, &[filter("d", "!=", strings(&["q"]))]), vec![0..9]);
    // A timestamp in another zone (or none) compares by instant.
    let at = |v: i64, tz: Option<&str>| -> ArrayRef {
        Arc::new(TimestampMillisecondArray::from(vec![v]).with_timezone_opt(tz.map(str::to_string)))
    };
    assert_eq!(plan(&t, &[filter("ts", ">=", at(50, None))]), vec![6..9]);
    assert_eq!(plan(&t, &[filter("ts", "<", at(10, Some("+02:00")))]), vec![0..3]);
    assert_eq!(
        passing(&t, &[filter("ts", "<", at(10, Some("Europe/Oslo")))]),
        vec![0, 1, 2]
    );
    let e = plan_rows(&t, &[filter("ts", "<", Arc::new(Int64Array::from(vec![10])))], 0..9).unwrap_err();
    assert!(
        e.to_string().contains("Timestamp(ms, \"UTC\")") || e.to_string().contains("Timestamp(Millisecond"),
        "{e}"
    );
}

#[test]
fn tables_without_statistics_keep_every_group() {
    let b = batch(vec![("n", ints((0..100).map(Some).collect()))]);
    let t = table(&b, 10, vec![], false);
    assert_eq!(plan(&t, &[filter("n", ">", int(1000))]), vec![0..100]);
    assert_eq!(plan(&t, &[]), vec![0..100]);
}

#[test]
fn a_table_file_with_statistics_plans_as_python_did() {
    // The golden file of python/tests/test_statistics.py, with the same answers.
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/v1/table/statistics.kpk"
    );
    let t = TableReader::open(golden).unwrap();
    let id = |op: &str, v: i32| filter("id", op, Arc::new(Int32Array::from(vec![v])));
    assert_eq!(plan(&t, &[id(">", 10_000)]), vec![]);
    assert_eq!(plan(&t, &[id(">", 70)]), vec![64..100]);
    let fst = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/golden/v1/table/fst.kpk");
    let t = TableReader::open(fst).unwrap();
    assert!(!t.has_statistics());
    assert_eq!(plan(&t, &[id(">", 10_000)]), vec![0..100]);

    // And a file written here, clustered but unsorted, read back from disk.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kpk");
    let blocks: Vec<i64> = (0..40).map(|i| (i * 7) % 40).collect();
    let x: Vec<Option<f64>> = blocks
        .iter()
        .flat_map(|&b| (0..50).map(move |i| Some(b as f64 + i as f64 / 50.0)))
        .collect();
    let city: Vec<String> = blocks
        .iter()
        .flat_map(|&b| (0..50).map(move |_| format!("c{b:02}")))
        .collect();
    let b = batch(vec![
        ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
        ("city", Arc::new(StringArray::from(city)) as ArrayRef),
        ("v", ints((0..2000).map(Some).collect())),
    ]);
    let options = TableOptions {
        rows_per_group: 50,
        ..TableOptions::default()
    };
    crate::write_table_file(&path, b.schema(), [Ok(b.clone())], options).unwrap();
    let t = TableReader::open(&path).unwrap();
    assert!(t.has_statistics());
    let at = |b: i64| blocks.iter().position(|&x| x == b).unwrap() as u64 * 50;
    for (filters, groups) in [
        (
            vec![filter("x", ">=", float(10.0)), filter("x", "<", float(11.0))],
            vec![10],
        ),
        (vec![filter("city", "==", strings(&["c10"]))], vec![10]),
        (vec![filter("city", "in", strings(&["c10", "c11"]))], vec![10, 11]),
    ] {
        let mut want: Vec<Range<u64>> = groups.iter().map(|&g| at(g)..at(g) + 50).collect();
        want.sort_by_key(|r| r.start);
        assert_eq!(plan(&t, &filters), want);
        assert_eq!(passing(&t, &filters).len(), 50 * groups.len());
    }
}

#[test]
fn matches_follows_arrow_with_ieee_floats() {
    let x = Arc::new(Float64Array::from(vec![
        Some(1.0),
        None,
        Some(f64::NAN),
        Some(-0.0),
        Some(0.0),
        Some(2.0),
    ])) as ArrayRef;
    let f32s = Arc::new(Float32Array::from(vec![Some(0.1f32), None, Some(f32::NAN)])) as ArrayRef;
    let n = ints(vec![Some(1), None, Some(3)]);
    let d: DictionaryArray<Int32Type> = vec![Some("a"), None, Some("b")].into_iter().collect();
    let b = batch(vec![
        ("x", x.slice(0, 3)),
        ("f", f32s),
        ("n", n),
        ("d", Arc::new(d) as ArrayRef),
    ]);
    let xb = batch(vec![("x", x)]);
    let rows = |b: &RecordBatch, f: Filter| -> Vec<usize> {
        let m = matches(b, &[f]).unwrap();
        assert_eq!(m.null_count(), 0);
        (0..m.len()).filter(|&i| m.value(i)).collect()
    };
    let cases: Vec<(Filter, Vec<usize>)> = vec![
        (filter("x", "==", float(0.0)), vec![3, 4]),
        (filter("x", "==", float(-0.0)), vec![3, 4]),
        (filter("x", "!=", float(1.0)), vec![2, 3, 4, 5]),
        (filter("x", "<", float(1.0)), vec![3, 4]),
        (filter("x", "<=", float(1.0)), vec![0, 3, 4]),
        (filter("x", ">", float(0.0)), vec![0, 5]),
        (filter("x", ">=", float(f64::NEG_INFINITY)), vec![0, 3, 4, 5]),
        (filter("x", "==", float(f64::NAN)), vec![]),
        (filter("x", "!=", float(f64::NAN)), vec![0, 2, 3, 4, 5]),
        (filter("x", "in", floats(vec![f64::NAN, 2.0])), vec![2, 5]),
        (filter("x", "in", floats(vec![0.0])), vec![3, 4]),
        (filter("x", "not in", floats(vec![f64::NAN, 0.0])), vec![0, 1, 5]),
        (
            filter("x", "in", Arc::new(Float64Array::from(vec![None, Some(1.0)]))),
            vec![0, 1],
        ),
        (
            filter("x", "not in", Arc::new(Float64Array::from(vec![None]))),
            vec![0, 2, 3, 4, 5],
        ),
        (filter("x", "in", floats(vec![])), vec![]),
        (filter("x", "not in", floats(vec![])), vec![0, 1, 2, 3, 4, 5]),
        (filter("x", "==", Arc::new(Float64Array::from(vec![None]))), vec![]),
        (filter("x", "!=", Arc::new(Float64Array::from(vec![None]))), vec![]),
    ];
    for (f, want) in cases {
        let what = format!("x {} {:?}", f.op, f.values);
        assert_eq!(rows(&xb, f), want, "{what}");
    }
    let cases: Vec<(Filter, Vec<usize>)> = vec![
        (filter("f", "==", Arc::new(Float32Array::from(vec![0.1f32]))), vec![0]),
        (filter("n", "!=", int(1)), vec![2]),
        (filter("n", ">=", int(1)), vec![0, 2]),
        (filter("n", "in", ints(vec![Some(3), None])), vec![1, 2]),
        (filter("n", "not in", ints(vec![Some(3)])), vec![0, 1]),
        (filter("d", "==", strings(&["b"])), vec![2]),
        (filter("d", "<", strings(&["b"])), vec![0]),
        (filter("d", "not in", strings(&["a"])), vec![1, 2]),
        (
            filter("d", "in", Arc::new(StringArray::from(vec![None, Some("a")]))),
            vec![0, 1],
        ),
    ];
    for (f, want) in cases {
        let what = format!("{} {} {:?}", f.column, f.op, f.values);
        assert_eq!(rows(&b, f), want, "{what}");
    }
    // All filters must hold; none: every row.
    let both = [filter("n", ">=", int(1)), filter("d", "==", strings(&["a"]))];
    assert_eq!(
        matches(&b, &both).unwrap(),
        BooleanArray::from(vec![true, false, false])
    );
    assert_eq!(matches(&b, &[]).unwrap().true_count(), 3);
    assert_eq!(DataType::Boolean, *matches(&b, &[]).unwrap().data_type());
}
