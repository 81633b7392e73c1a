//! Planning never drops a row that passes the filters: random tables (sorted by a key or not,
//! with or without statistics) of ints, floats with NaN and signed zeros, strings and a
//! dictionary, with nulls, against random filters, compared with a brute-force filter of
//! every row. The brute force also checks [`matches()`].

use super::tests::table;
use super::*;
use crate::SortKey;
use arrow_array::types::Int32Type;
use arrow_array::{DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::sync::Arc;

/// One cell: null, an int, a float or a string.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    I(i64),
    F(f64),
    S(String),
}

const FLOATS: [f64; 7] = [-0.0, 0.0, 1.5, -2.0, 9.0, f64::INFINITY, f64::NAN];

fn strings() -> Vec<String> {
    [
        "",
        "a",
        "ab",
        "b",
        &"é".repeat(40),
        &"z".repeat(70),
        "zz",
        &"\u{10FFFF}".repeat(20),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The order of two cells of one column, as IEEE 754 orders floats (`None`: NaN).
fn order(a: &V, b: &V) -> Option<Ordering> {
    match (a, b) {
        (V::I(x), V::I(y)) => Some(x.cmp(y)),
        (V::F(x), V::F(y)) => x.partial_cmp(y),
        (V::S(x), V::S(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn is_nan(v: &V) -> bool {
    matches!(v, V::F(x) if x.is_nan())
}

/// Whether `row op values` holds as [`matches()`] documents it.
fn passes(row: &V, op: Op, values: &[V]) -> bool {
    if op.takes_list() {
        let hit = values.iter().any(|v| match (row, v) {
            (V::Null, V::Null) => true,
            (V::Null, _) | (_, V::Null) => false,
            _ => order(row, v) == Some(Ordering::Equal) || (is_nan(row) && is_nan(v)),
        });
        return hit == (op == Op::In);
    }
    if *row == V::Null || values[0] == V::Null {
        return false;
    }
    let o = order(row, &values[0]);
    match op {
        Op::Eq => o == Some(Ordering::Equal),
        Op::Ne => o != Some(Ordering::Equal),
        Op::Lt => o == Some(Ordering::Less),
        Op::Le => matches!(o, Some(Ordering::Less | Ordering::Equal)),
        Op::Gt => o == Some(Ordering::Greater),
        Op::Ge => matches!(o, Some(Ordering::Greater | Ordering::Equal)),
        Op::In | Op::NotIn => unreachable!(),
    }
}

/// Whether some engine other than Arrow may let the row pass: pandas keeps null rows for
/// `!=` and `not in`, Polars counts NaN greater than every number, and pyarrow's `is_in`
/// tells -0.0 from 0.0. The plan keeps these rows too.
fn may_pass_elsewhere(row: &V, op: Op, values: &[V]) -> bool {
    match (row, op) {
        (V::Null, Op::Ne | Op::NotIn) => true,
        (V::F(x), Op::Gt | Op::Ge) if x.is_nan() => !is_nan(&values[0]) && values[0] != V::Null,
        (V::F(x), Op::NotIn) if *x == 0.0 => !values
            .iter()
            .any(|v| matches!(v, V::F(y) if *y == 0.0 && y.is_sign_negative() == x.is_sign_negative())),
        _ => false,
    }
}

/// Column `c` of the table (0: int, 1: float, 2: string, 3: the strings as a dictionary).
fn column(rows: &[[V; 3]], c: usize) -> ArrayRef {
    let cell = |r: &[V; 3]| r[c.min(2)].clone();
    match c {
        0 => Arc::new(Int64Array::from_iter(rows.iter().map(|r| match cell(r) {
            V::I(x) => Some(x),
            _ => None,
        }))),
        1 => Arc::new(Float64Array::from_iter(rows.iter().map(|r| match cell(r) {
            V::F(x) => Some(x),
            _ => None,
        }))),
        _ => {
            let s: Vec<Option<String>> = rows
                .iter()
                .map(|r| match cell(r) {
                    V::S(x) => Some(x),
                    _ => None,
                })
                .collect();
            if c == 2 {
                Arc::new(StringArray::from(s))
            } else {
                Arc::new(s.iter().map(|x| x.as_deref()).collect::<DictionaryArray<Int32Type>>())
            }
        }
    }
}

/// `values` as an array of column `c`'s type (strings for the dictionary: its value type).
fn values_array(c: usize, values: &[V]) -> ArrayRef {
    let rows: Vec<[V; 3]> = values
        .iter()
        .map(|v| {
            let mut r = [V::Null, V::Null, V::Null];
            r[c.min(2)] = v.clone();
            r
        })
        .collect();
    column(&rows, c.min(2))
}

const NAMES: [&str; 4] = ["i", "f", "s", "d"];

fn cell(c: usize) -> BoxedStrategy<V> {
    let value = match c {
        0 => (-5i64..=5).prop_map(V::I).boxed(),
        1 => proptest::sample::select(FLOATS.to_vec()).prop_map(V::F).boxed(),
        _ => proptest::sample::select(strings()).prop_map(V::S).boxed(),
    };
    prop_oneof![1 => Just(V::Null), 3 => value].boxed()
}

fn filter_value(c: usize) -> BoxedStrategy<V> {
    let value = match c {
        0 => (-6i64..=6).prop_map(V::I).boxed(),
        1 => proptest::sample::select(FLOATS.to_vec()).prop_map(V::F).boxed(),
        _ => proptest::sample::select([strings(), vec!["zzz".to_string(), "c".to_string()]].concat())
            .prop_map(V::S)
            .boxed(),
    };
    prop_oneof![1 => Just(V::Null), 12 => value].boxed()
}

fn op() -> impl Strategy<Value = Op> {
    proptest::sample::select(vec![Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::In, Op::NotIn])
}

/// A random filter: column, op, values.
fn a_filter() -> impl Strategy<Value = (usize, Op, Vec<V>)> {
    (0usize..4, op()).prop_flat_map(|(c, op)| {
        let n = if op.takes_list() { 0..4usize } else { 1..2 };
        (Just(c), Just(op), proptest::collection::vec(filter_value(c), n))
    })
}

/// The sort a table may have: none, or a column, direction and null placement.
fn a_sort() -> impl Strategy<Value = Option<(usize, bool, bool)>> {
    proptest::option::of((0usize..4, any::<bool>(), any::<bool>()))
}

/// Sorts `rows` by column `c` as the writer checks it: floats with -0.0 equal to 0.0 and NaN
/// after +inf, nulls first or last whatever the direction.
fn sort_rows(rows: &mut [[V; 3]], c: usize, descending: bool, nulls_first: bool) {
    let c = c.min(2);
    rows.sort_by(|a, b| match (&a[c], &b[c]) {
        (V::Null, V::Null) => Ordering::Equal,
        (V::Null, _) => {
            if nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (_, V::Null) => {
            if nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (x, y) => {
            let o = match (is_nan(x), is_nan(y)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => order(x, y).unwrap(),
            };
            if descending {
                o.reverse()
            } else {
                o
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn planning_never_drops_a_row_that_passes(
        mut rows in proptest::collection::vec((cell(0), cell(1), cell(2)).prop_map(|(a, b, c)| [a, b, c]), 0..60),
        rows_per_group in 1u32..9,
        sort in a_sort(),
        statistics in any::<bool>(),
        filters in proptest::collection::vec(a_filter(), 1..4),
        cut in (0usize..70, 0usize..70),
    ) {
        let mut keys = Vec::new();
        if let Some((c, descending, nulls_first)) = sort {
            sort_rows(&mut rows, c, descending, nulls_first);
            let mut key = if descending { SortKey::descending(NAMES[c]) } else { SortKey::ascending(NAMES[c]) };
            key.nulls_first = nulls_first;
            keys.push(key);
        }
        let n = rows.len();
        let b = RecordBatch::try_from_iter((0..4).map(|c| (NAMES[c], column(&rows, c)))).unwrap();
        let t = table(&b, rows_per_group, keys, statistics);
        let fs: Vec<Filter> = filters
            .iter()
            .map(|(c, op, values)| Filter::new(NAMES[*c], *op, values_array(*c, values)))
            .collect();
        // matches agrees with the brute force, row by row.
        let m = matches(&b, &fs).unwrap();
        let pass: Vec<bool> = rows
            .iter()
            .map(|r| filters.iter().all(|(c, op, v)| passes(&r[(*c).min(2)], *op, v)))
            .collect();
        prop_assert_eq!(m.iter().map(|x| x.unwrap()).collect::<Vec<_>>(), pass.clone());
        let may: Vec<bool> = rows
            .iter()
            .map(|r| filters.iter().all(|(c, op, v)| {
                let x = &r[(*c).min(2)];
                passes(x, *op, v) || may_pass_elsewhere(x, *op, v)
            }))
            .collect();
        let (a, z) = (cut.0.min(n), cut.1.min(n));
        let asked = a.min(z) as u64..a.max(z) as u64;
        for rows_asked in [0..n as u64, asked] {
            let planned = plan_rows(&t, &fs, rows_asked.clone()).unwrap();
            // In order, apart, inside the rows asked for.
            for w in planned.windows(2) {
                prop_assert!(w[0].end < w[1].start, "{:?}", planned);
            }
            for r in &planned {
                prop_assert!(r.start < r.end && rows_asked.start <= r.start && r.end <= rows_asked.end, "{:?}", planned);
            }
            for i in rows_asked.clone() {
                if may[i as usize] {
                    prop_assert!(
                        planned.iter().any(|r| r.contains(&i)),
                        "row {} ({:?}) passes {:?} but the plan {:?} of {:?} drops it",
                        i, rows[i as usize], filters, planned, rows_asked
                    );
                }
            }
        }
    }
}
