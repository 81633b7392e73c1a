//! Filtered table reads, written once for every front end: the rows of a table that pass some
//! filters ([`read_where`]).
//!
//! The rows are planned first ([`kompakt_table::plan::plan_rows`]: binary search on the first
//! ascending sort key, row-group statistics), then only the planned ranges are read, a few row
//! groups at a time, and each batch read keeps the rows that pass every filter
//! ([`kompakt_table::plan::matches`]). A column a filter needs but the caller did not ask for is
//! read for the filter and dropped.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
//! use kompakt_api::table::read_where;
//! use kompakt_table::{Filter, Op, SortKey, TableOptions, TableReader, TableWriter};
//!
//! let t: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
//! let batch = RecordBatch::try_from_iter([("t", t)])?;
//! let options = TableOptions { rows_per_group: 100, sorted_by: vec![SortKey::ascending("t")], ..Default::default() };
//! let mut w = TableWriter::new(Vec::new(), batch.schema(), options)?;
//! w.write(&batch)?;
//! let table = TableReader::from_source(Arc::new(w.finish()?))?;
//!
//! let filters = [Filter::new("t", Op::Ge, Arc::new(Int64Array::from(vec![250])))];
//! let (rows, stats) = read_where(&table, None, 0..1000, &filters, 1)?;
//! assert_eq!(rows.num_rows(), 750);
//! assert_eq!((stats.groups_read, stats.groups_total), (8, 10));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};
use kompakt::{Error, Result};
use kompakt_table::plan::{matches, plan_rows, Filter};
use kompakt_table::TableReader;
use std::ops::Range;

/// Rows `rows` of the columns `columns` (positions; `None`: all) as one batch, each column's
/// chunks (one per row group for variable-width types) concatenated, strings with their stored
/// offsets; read on `threads` threads. What a front end hands out for a range read.
pub fn read_rows(
    reader: &TableReader,
    columns: Option<&[usize]>,
    rows: Range<u64>,
    threads: usize,
) -> Result<RecordBatch> {
    let range = rows.clone();
    let (schema, parts) = reader.read_columns_as(columns, rows, threads, kompakt_table::StringLayout::AsStored)?;
    // The reader checked the range against the table: its length fits in memory's indexes.
    let len = (range.end - range.start) as usize;
    let arrays = parts
        .into_iter()
        .zip(schema.fields())
        .map(|(chunks, field)| match chunks.len() {
            0 => Ok(arrow_array::new_empty_array(field.data_type())),
            1 => Ok(chunks.into_iter().next().expect("one chunk")),
            _ => {
                let refs: Vec<&dyn Array> = chunks.iter().map(|a| a.as_ref()).collect();
                arrow_select::concat::concat(&refs).map_err(internal)
            }
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(len));
    RecordBatch::try_new_with_options(schema, arrays, &opts).map_err(internal)
}

/// Row groups read at most per call to the reader: the memory a filtered read holds beside its
/// result is that many groups of the columns read.
const GROUPS_PER_READ: u64 = 16;

/// What a filtered read did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Row groups whose pages were read (the plan's few single-row reads of the sort key for
    /// its binary search are not counted).
    pub groups_read: u64,
    /// Row groups in the table.
    pub groups_total: u64,
    /// Rows read and compared with the filters.
    pub rows_scanned: u64,
}

/// The rows of `rows` that pass every filter in `filters`, of the columns `columns` (positions,
/// in that order; `None`: all), as one batch, in table order, read on `threads` threads (0: all
/// cores). Without filters it is the plain read of `rows`.
///
/// Only the row ranges the plan leaves are read ([`plan_rows`]), a few row groups at a time;
/// the columns the filters compare are read with the others and dropped unless asked for. A
/// dictionary column keeps the table's dictionary (its factor levels), even when no row passes.
///
/// Errors: a filter [`kompakt_table::plan::check_filters`] refuses (an unknown column, a
/// wrong value type or count: [`Error::InvalidOption`]), a column position past the table's
/// columns (the same), `rows` past the end of the table ([`Error::OutOfRange`]), and the
/// errors of reading the table.
pub fn read_where(
    reader: &TableReader,
    columns: Option<&[usize]>,
    rows: Range<u64>,
    filters: &[Filter],
    threads: usize,
) -> Result<(RecordBatch, ReadStats)> {
    let groups_total = reader.num_groups();
    let mut stats = ReadStats {
        groups_total,
        ..ReadStats::default()
    };
    let wanted: Vec<usize> = match columns {
        Some(c) => c.to_vec(),
        None => (0..reader.schema().fields().len()).collect(),
    };
    // The plan checks the filters (and the rows) before anything is read.
    let planned = plan_rows(reader, filters, rows.clone())?;
    // The columns asked for, then those only the filters need.
    let mut read = wanted.clone();
    for f in filters {
        let c = reader.column_index(&f.column)?;
        if !read.contains(&c) {
            read.push(c);
        }
    }
    let r = u64::from(reader.rows_per_group()).max(1);
    let mut parts: Vec<RecordBatch> = Vec::new();
    let mut schema: Option<SchemaRef> = None;
    for range in &planned {
        let mut start = range.start;
        while start < range.end {
            let stop = range.end.min((start / r + GROUPS_PER_READ) * r);
            let (_, batches) = reader.read(Some(&read), start..stop, threads)?;
            stats.groups_read += (stop - 1) / r - start / r + 1;
            stats.rows_scanned += stop - start;
            for b in batches {
                let b = passing(&b, filters, wanted.len())?;
                schema.get_or_insert_with(|| b.schema());
                if b.num_rows() > 0 {
                    parts.push(b);
                }
            }
            start = stop;
        }
    }
    if parts.is_empty() {
        // No row passes: the empty read of the columns asked for, dictionaries included.
        let at = rows.start.min(reader.num_rows());
        let (_, mut empty) = reader.read(Some(&wanted), at..at, 1)?;
        return Ok((empty.remove(0), stats));
    }
    let schema = schema.expect("a batch was read");
    Ok((concat(schema, &parts)?, stats))
}

/// The rows of `batch` that pass `filters`, of its first `keep` columns.
fn passing(batch: &RecordBatch, filters: &[Filter], keep: usize) -> Result<RecordBatch> {
    let projected = batch.project(&(0..keep).collect::<Vec<_>>()).map_err(internal)?;
    if filters.is_empty() {
        return Ok(projected);
    }
    let pass = matches(batch, filters)?;
    if pass.true_count() == batch.num_rows() {
        return Ok(projected);
    }
    let columns = projected
        .columns()
        .iter()
        .map(|c| arrow_select::filter::filter(c.as_ref(), &pass).map_err(internal))
        .collect::<Result<Vec<_>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(pass.true_count()));
    RecordBatch::try_new_with_options(projected.schema(), columns, &opts).map_err(internal)
}

/// The batches as one, each column concatenated; a dictionary column keeps the one dictionary
/// its pages share (Arrow's concatenation may merge dictionaries into new values).
fn concat(schema: SchemaRef, parts: &[RecordBatch]) -> Result<RecordBatch> {
    let rows: usize = parts.iter().map(RecordBatch::num_rows).sum();
    if parts.len() == 1 {
        return Ok(parts[0].clone());
    }
    let columns = (0..schema.fields().len())
        .map(|k| {
            let pieces: Vec<&ArrayRef> = parts.iter().map(|b| b.column(k)).collect();
            concat_column(schema.field(k).data_type(), &pieces)
        })
        .collect::<Result<Vec<_>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema, columns, &opts).map_err(internal)
}

fn concat_column(dt: &DataType, pieces: &[&ArrayRef]) -> Result<ArrayRef> {
    let plain = |arrays: &[&dyn Array]| arrow_select::concat::concat(arrays).map_err(internal);
    if !matches!(dt, DataType::Dictionary(..)) {
        return plain(&pieces.iter().map(|p| p.as_ref()).collect::<Vec<_>>());
    }
    let values = pieces[0].as_any_dictionary().values().to_data();
    let shared = pieces
        .iter()
        .all(|p| p.as_any_dictionary().values().to_data() == values);
    if !shared {
        return plain(&pieces.iter().map(|p| p.as_ref()).collect::<Vec<_>>());
    }
    let keys: Vec<&dyn Array> = pieces
        .iter()
        .map(|p| p.as_any_dictionary().keys() as &dyn Array)
        .collect();
    let keys = plain(&keys)?.to_data();
    let data = keys
        .into_builder()
        .data_type(dt.clone())
        .child_data(vec![values])
        .build()
        .map_err(internal)?;
    Ok(make_array(data))
}

fn internal(e: arrow_schema::ArrowError) -> Error {
    Error::Internal(format!("a filtered table read: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int32Type;
    use arrow_array::{BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray};
    use kompakt::ErrorKind;
    use kompakt_table::{Op, SortKey, TableOptions, TableWriter};
    use std::sync::Arc;

    /// 1000 rows in groups of 100, sorted by `t`: `t` (0..1000, ascending), `x` (floats with
    /// nulls), `s` (strings), `d` (a dictionary of three values).
    fn table() -> (TableReader, RecordBatch) {
        let n = 1000;
        let t: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let x: ArrayRef = Arc::new(Float64Array::from_iter((0..n).map(|i| {
            if i % 7 == 0 {
                None
            } else {
                Some((i * 37 % 101) as f64)
            }
        })));
        let s: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("s{}", i % 13))));
        let d: ArrayRef = Arc::new(
            (0..n)
                .map(|i| ["oslo", "bergen", "tromsø"][(i % 3) as usize])
                .collect::<DictionaryArray<Int32Type>>(),
        );
        let batch = RecordBatch::try_from_iter([("t", t), ("x", x), ("s", s), ("d", d)]).unwrap();
        let options = TableOptions {
            rows_per_group: 100,
            sorted_by: vec![SortKey::ascending("t")],
            ..Default::default()
        };
        let mut w = TableWriter::new(Vec::new(), batch.schema(), options).unwrap();
        w.write(&batch).unwrap();
        (TableReader::from_source(Arc::new(w.finish().unwrap())).unwrap(), batch)
    }

    /// The rows of `batch[rows]` passing `filters`, one at a time, of `columns`.
    fn brute_force(batch: &RecordBatch, rows: Range<u64>, filters: &[Filter], columns: &[usize]) -> RecordBatch {
        let part = batch.slice(rows.start as usize, (rows.end - rows.start) as usize);
        let pass = matches(&part, filters).unwrap();
        let part = part.project(columns).unwrap();
        arrow_select::filter::filter_record_batch(&part, &pass).unwrap()
    }

    fn i64s(v: &[i64]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn rows_equal_a_brute_force_filter() {
        let (table, batch) = table();
        let cases: Vec<Vec<Filter>> = vec![
            vec![],
            vec![
                Filter::new("t", Op::Ge, i64s(&[250])),
                Filter::new("t", Op::Lt, i64s(&[420])),
            ],
            vec![Filter::new("t", Op::Eq, i64s(&[999]))],
            vec![Filter::new("t", Op::Gt, i64s(&[5000]))],
            vec![Filter::new("x", Op::Ge, Arc::new(Float64Array::from(vec![50.0])))],
            vec![Filter::new("x", Op::Ne, Arc::new(Float64Array::from(vec![3.0])))],
            vec![Filter::new("s", Op::In, Arc::new(StringArray::from(vec!["s1", "s12"])))],
            vec![Filter::new(
                "s",
                Op::NotIn,
                Arc::new(StringArray::from(vec!["s1", "s12"])),
            )],
            vec![
                Filter::new("d", Op::Eq, Arc::new(StringArray::from(vec!["bergen"]))),
                Filter::new("t", Op::Le, i64s(&[500])),
            ],
            vec![Filter::new("t", Op::In, i64s(&[]))],
        ];
        let selections: Vec<(Option<Vec<usize>>, Vec<usize>)> = vec![
            (None, vec![0, 1, 2, 3]),
            (Some(vec![2]), vec![2]),
            (Some(vec![3, 0]), vec![3, 0]),
        ];
        for filters in &cases {
            for (columns, positions) in &selections {
                for rows in [0..1000, 130..870, 500..500] {
                    let (got, _) = read_where(&table, columns.as_deref(), rows.clone(), filters, 2).unwrap();
                    let want = brute_force(&batch, rows.clone(), filters, positions);
                    assert_eq!(got.num_rows(), want.num_rows(), "{filters:?} {columns:?} {rows:?}");
                    for k in 0..positions.len() {
                        // Dictionaries compare by their values.
                        let (g, w) = (plain(got.column(k)), plain(want.column(k)));
                        assert_eq!(g.as_ref(), w.as_ref(), "{filters:?} {columns:?} {rows:?} column {k}");
                    }
                    assert_eq!(got.schema().fields(), want.schema().fields());
                }
            }
        }
    }

    /// A dictionary's keys resolved to its values (other arrays as they are).
    fn plain(a: &ArrayRef) -> ArrayRef {
        match a.data_type() {
            DataType::Dictionary(..) => {
                let d = a.as_any_dictionary();
                arrow_select::take::take(d.values().as_ref(), d.keys(), None).unwrap()
            }
            _ => a.clone(),
        }
    }

    #[test]
    fn a_pruned_read_reads_fewer_groups() {
        let (table, _) = table();
        let filters = [
            Filter::new("t", Op::Ge, i64s(&[250])),
            Filter::new("t", Op::Lt, i64s(&[420])),
        ];
        let (rows, stats) = read_where(&table, Some(&[1]), 0..1000, &filters, 1).unwrap();
        assert_eq!(rows.num_rows(), 170);
        assert_eq!(
            stats,
            ReadStats {
                groups_read: 3,
                groups_total: 10,
                rows_scanned: 170
            }
        );
        // Nothing can pass: nothing is read, and the columns still come with their types.
        let none = [Filter::new("t", Op::Gt, i64s(&[1000]))];
        let (rows, stats) = read_where(&table, Some(&[3]), 0..1000, &none, 1).unwrap();
        assert_eq!((rows.num_rows(), stats.groups_read), (0, 0));
        let dict = rows.column(0).as_any_dictionary();
        assert_eq!(dict.values().len(), 3, "the empty factor keeps its levels");
        // A filter on another column reads the groups its statistics leave: all of them when
        // every group holds passing rows, fewer when some hold none (x is 0 in 8 rows, in 8
        // of the 10 groups).
        let every = [Filter::new("x", Op::Ge, Arc::new(Float64Array::from(vec![0.0])))];
        let (_, stats) = read_where(&table, None, 0..1000, &every, 1).unwrap();
        assert_eq!(stats.groups_read, 10);
        let zero = [Filter::new("x", Op::Lt, Arc::new(Float64Array::from(vec![1.0])))];
        let (rows, stats) = read_where(&table, None, 0..1000, &zero, 1).unwrap();
        assert_eq!((rows.num_rows(), stats.groups_read), (8, 8));
    }

    #[test]
    fn a_dictionary_column_keeps_its_one_dictionary() {
        let (table, _) = table();
        let filters = [Filter::new("s", Op::Eq, Arc::new(StringArray::from(vec!["s4"])))];
        let (rows, stats) = read_where(&table, Some(&[3]), 0..1000, &filters, 0).unwrap();
        assert_eq!(stats.groups_read, 10);
        let d = rows.column(0).as_any_dictionary();
        let values = d.values().as_string::<i32>();
        assert_eq!(
            values.iter().flatten().collect::<Vec<_>>(),
            ["oslo", "bergen", "tromsø"]
        );
    }

    #[test]
    fn bad_filters_are_option_errors() {
        let (table, _) = table();
        let unknown = [Filter::new("nope", Op::Eq, i64s(&[1]))];
        let e = read_where(&table, None, 0..1000, &unknown, 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Option);
        assert!(e.to_string().contains("nope"), "{e}");
        let wrong_type = [Filter::new("t", Op::Eq, Arc::new(Int32Array::from(vec![1])))];
        let e = read_where(&table, None, 0..1000, &wrong_type, 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Option);
        assert!(e.to_string().contains("Int64"), "{e}");
        let two = [Filter::new("t", Op::Eq, i64s(&[1, 2]))];
        assert_eq!(
            read_where(&table, None, 0..1000, &two, 1).unwrap_err().kind(),
            ErrorKind::Option
        );
        let unordered = [Filter::new("t", Op::Eq, Arc::new(BooleanArray::from(vec![true])))];
        assert_eq!(
            read_where(&table, None, 0..1000, &unordered, 1).unwrap_err().kind(),
            ErrorKind::Option
        );
        assert_eq!(
            read_where(&table, Some(&[9]), 0..1000, &[], 1).unwrap_err().kind(),
            ErrorKind::Option
        );
        assert_eq!(
            read_where(&table, None, 0..1001, &[], 1).unwrap_err().kind(),
            ErrorKind::Option
        );
    }
}
