//! `kompakt head --where`: the first rows that pass every filter, reading only the row groups
//! the plan leaves (a sorted key's binary search, the row-group statistics).

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use kompakt_table::{SortKey, TableOptions, TableWriter};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

const ROWS: i64 = 100_000;
const CITIES: [&str; 5] = ["Oslo", "Bergen", "Tromsø", "Bodø", "Alta"];

/// Row `i`'s city: runs of 1000 rows, so that the statistics of groups of 1000 rows know them.
fn city(i: i64) -> &'static str {
    CITIES[((i / 1000) * 7 % 5) as usize]
}

fn price(i: i64) -> f64 {
    (i % 1000) as f64 / 10.0
}

/// `batch` written to `path` in row groups of `rows_per_group`, sorted by `sorted_by`.
fn write(path: &Path, batch: &RecordBatch, rows_per_group: u32, sorted_by: Vec<SortKey>) {
    let options = TableOptions {
        rows_per_group,
        sorted_by,
        ..TableOptions::default()
    };
    let mut w = TableWriter::new(Vec::new(), batch.schema(), options).unwrap();
    w.write(batch).unwrap();
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

/// A table of `ROWS` rows sorted by `t`: t, price, city, in groups of 1000 rows.
fn trades(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("trades.kpk");
    let batch = RecordBatch::try_from_iter([
        ("t", Arc::new(Int64Array::from_iter_values(0..ROWS)) as ArrayRef),
        ("price", Arc::new(Float64Array::from_iter_values((0..ROWS).map(price)))),
        ("city", Arc::new(StringArray::from_iter_values((0..ROWS).map(city)))),
    ])
    .unwrap();
    write(&path, &batch, 1000, vec![SortKey::ascending("t")]);
    path
}

fn head(file: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kompakt"))
        .arg("head")
        .arg(file)
        .args(args)
        .output()
        .unwrap()
}

/// The rows printed (each line's words, the header and footer apart), and the footer.
fn printed(out: &Output) -> (Vec<Vec<String>>, String) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let rows = lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    (rows, lines[lines.len() - 1].to_string())
}

/// The number of row groups the footer says were read.
fn groups_read(footer: &str) -> u64 {
    let at = footer.find("; read ").unwrap_or_else(|| panic!("{footer}"));
    footer[at + 7..].split(' ').next().unwrap().parse().unwrap()
}

fn fails(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn a_filter_on_the_sort_key_reads_one_row_group() {
    let dir = tempfile::tempdir().unwrap();
    let file = trades(dir.path());
    let (rows, footer) = printed(&head(&file, &["--where", "t>=50000", "--where", "t < 50005"]));
    let ts: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ts, ["50000", "50001", "50002", "50003", "50004"]);
    assert_eq!(rows[2], ["50002", "0.2", city(50002)]);
    assert!(
        footer.starts_with("[5 rows where t>=50000 and t < 50005, of 100000 rows; read 1 of 100 row groups]"),
        "{footer}"
    );
    // `=` and `==`, one row; none at all.
    let (rows, footer) = printed(&head(&file, &["--where", "t = 77777", "--columns", "price"]));
    assert_eq!(rows, [["77.7"]]);
    assert_eq!(groups_read(&footer), 1, "{footer}");
    let (rows, footer) = printed(&head(&file, &["--where", "t > 1000000"]));
    assert!(rows.is_empty());
    assert_eq!(groups_read(&footer), 0, "{footer}");
}

#[test]
fn filters_on_other_columns_skip_groups_by_their_statistics_and_all_must_hold() {
    let dir = tempfile::tempdir().unwrap();
    let file = trades(dir.path());
    let want: Vec<i64> = (0..ROWS)
        .filter(|&i| ["Tromsø", "Alta"].contains(&city(i)) && price(i) >= 99.5)
        .collect();
    let n = want.len().to_string();
    let out = head(
        &file,
        &[
            "--where",
            "city in (Tromsø, 'Alta')",
            "--where",
            "price>=99.5",
            "-n",
            &n,
            "--columns",
            "t,city",
        ],
    );
    let (rows, footer) = printed(&out);
    let got: Vec<i64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(got, want);
    assert!(rows.iter().all(|r| r.len() == 2), "only the columns asked for");
    // Two cities of five: 40 of the 100 row groups hold them, and only those are read.
    assert_eq!(groups_read(&footer), 40, "{footer}");
    // -n stops the read early.
    let (rows, footer) = printed(&head(&file, &["--where", "city == Bodø", "-n", "3"]));
    let first = (0..ROWS).find(|&i| city(i) == "Bodø").unwrap();
    assert_eq!(rows[0][0], first.to_string());
    assert_eq!(rows.len(), 3);
    assert_eq!(groups_read(&footer), 1, "{footer}");
    // `!=` and `not in` rule out groups of one value.
    let (rows, _) = printed(&head(
        &file,
        &["--where", "city not in (Oslo,Bergen,Tromsø,Bodø)", "-n", "1"],
    ));
    assert_eq!(rows[0][2], "Alta");
    let (rows, _) = printed(&head(
        &file,
        &["--where", "city != Oslo", "--where", "t<3000", "-n", "5000"],
    ));
    assert!(rows.iter().all(|r| r[2] != "Oslo") && !rows.is_empty());
}

#[test]
fn values_are_read_in_the_column_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kinds.kpk");
    let n = 20;
    let batch = RecordBatch::try_from_iter([
        (
            "day",
            Arc::new(Date32Array::from_iter_values((0..n).map(|i| 19_844 + i))) as ArrayRef,
        ), // 2024-05-01 on
        (
            "ts",
            Arc::new(
                TimestampMillisecondArray::from_iter_values((0..n as i64).map(|i| 1_714_564_800_000 + i * 3_600_000))
                    .with_timezone("UTC"),
            ),
        ),
        (
            "ok",
            Arc::new(BooleanArray::from_iter((0..n).map(|i| Some(i % 3 == 0)))),
        ),
        (
            "name",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("item {i}, boxed")),
            )),
        ),
        (
            "x",
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| Some(if i == 5 { f64::NAN } else { i as f64 })),
            )),
        ),
    ])
    .unwrap();
    write(&path, &batch, 4, vec![]);
    let firsts = |args: &[&str]| -> Vec<String> {
        let (rows, _) = printed(&head(&path, &[args, &["-n", "100", "--columns", "ok,x"]].concat()));
        rows.iter().map(|r| r[1].clone()).collect()
    };
    assert_eq!(firsts(&["--where", "day >= 2024-05-18"]), ["17", "18", "19"]);
    assert_eq!(firsts(&["--where", "day = 2024-05-03"]), ["2"]);
    // 2024-05-01T12:00:00Z is row 0, then one row an hour; 16:30+02:00 is 14:30Z.
    assert_eq!(firsts(&["--where", "ts < 2024-05-01T16:30:00+02:00"]), ["0", "1", "2"]);
    assert_eq!(firsts(&["--where", "ts == 2024-05-01T13:00:00.000Z"]), ["1"]);
    assert_eq!(firsts(&["--where", "ok == true", "--where", "x <= 6"]), ["0", "3", "6"]);
    assert_eq!(
        firsts(&["--where", "name in ('item 3, boxed', \"item 4, boxed\")"]),
        ["3", "4"]
    );
    assert_eq!(firsts(&["--where", "x > 17"]), ["18", "19"]);
    assert_eq!(firsts(&["--where", "x != 1", "--where", "x < 4"]), ["0", "2", "3"]);
    assert_eq!(firsts(&["--where", "x in ()"]), Vec::<String>::new());
    // The offset is needed with a time zone; precision beyond the unit is refused.
    let e = fails(&head(&path, &["--where", "ts < 2024-05-01T12:00:00"]));
    assert!(e.contains("needs its offset from UTC"), "{e}");
    let e = fails(&head(&path, &["--where", "ts < 2024-05-01T12:00:00.0001Z"]));
    assert!(e.contains("more precise"), "{e}");
    let e = fails(&head(&path, &["--where", "day < 2024-02-30"]));
    assert!(e.contains("is not a date (YYYY-MM-DD)") && e.contains("Date32"), "{e}");
    let e = fails(&head(&path, &["--where", "ok == yes"]));
    assert!(e.contains("\"yes\" is not true or false"), "{e}");
}

#[test]
fn bad_filters_exit_2_and_say_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let file = trades(dir.path());
    for bad in ["t ~ 3", "t", "== 3", "price >="] {
        let e = fails(&head(&file, &["--where", bad]));
        assert!(e.contains("==, =, !=, <, <=, >, >=, in, not in"), "{bad}: {e}");
    }
    let e = fails(&head(&file, &["--where", "nope > 3"]));
    assert!(e.contains("nope") && e.contains("\"t\", \"price\", \"city\""), "{e}");
    let e = fails(&head(&file, &["--where", "t > 3.5"]));
    assert!(e.contains("\"3.5\" is not an int64"), "{e}");
    let e = fails(&head(&file, &["--where", "city in Oslo"]));
    assert!(e.contains("a list in parentheses"), "{e}");
    let e = fails(&head(&file, &["--where", "t>1", "--take", "1,2"]));
    assert!(e.contains("--take"), "{e}");

    let path = dir.path().join("lists.kpk");
    let list = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>([Some(vec![Some(1)])]);
    let batch = RecordBatch::try_from_iter([("l", Arc::new(list) as ArrayRef)]).unwrap();
    write(&path, &batch, 10, vec![]);
    let e = fails(&head(&path, &["--where", "l == 1"]));
    assert!(e.contains("integers, floats, booleans, strings"), "{e}");
}
