//! Table files in the CLI: the `inspect` section of a table and `kompakt head`.

use crate::args::HeadArgs;
use crate::human::format_size;
use crate::{CliError, CliResult};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use kompakt_table::TableReader;
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::Path;

fn open(path: &Path) -> CliResult<TableReader> {
    // Damage exits 1 and other faults 2, as in every command.
    crate::source::open_table(path).map_err(|e| CliError::from(e).context(path.display()))
}

/// The table part of `kompakt inspect`: rows, schema, and per column its page encodings and
/// sizes (`encoded` is after the page encoding, before the codec).
pub fn inspect_section(path: &Path, out: &mut dyn Write) -> CliResult {
    let t = open(path)?;
    let columns = t.summary();
    writeln!(out)?;
    writeln!(
        out,
        "table: {} rows x {} columns, {} rows per group, table layout {}",
        t.num_rows(),
        columns.len(),
        t.rows_per_group(),
        t.layout()
    )?;
    if !t.sorted_by().is_empty() {
        let keys: Vec<String> = t.sorted_by().iter().map(|k| k.to_string()).collect();
        writeln!(out, "sorted by: {}", keys.join("; "))?;
    }
    if t.has_statistics() {
        writeln!(
            out,
            "row-group statistics: null counts and bounds, for filters to skip row groups"
        )?;
    }
    writeln!(
        out,
        "{:<20}  {:<28}  {:>10}  {:>10}  {:>7}  {:<22}  codecs",
        "column", "type", "encoded", "stored", "ratio", "pages"
    )?;
    for c in &columns {
        let pages: Vec<String> = c.encodings.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let mut pages = pages.join(", ");
        if c.pages_with_nulls > 0 {
            pages.push_str(&format!(" ({} w/ nulls)", c.pages_with_nulls));
        }
        let codecs: Vec<String> = c.codecs.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            out,
            "{:<20}  {:<28}  {:>10}  {:>10}  {:>7.3}  {:<22}  {}",
            c.name,
            c.data_type.to_string(),
            format_size(c.encoded),
            format_size(c.stored),
            c.encoded as f64 / c.stored.max(1) as f64,
            pages,
            codecs.join(", ")
        )?;
    }
    Ok(())
}

/// The table part of `kompakt inspect --json`.
pub fn inspect_json(path: &Path) -> CliResult<Value> {
    let t = open(path)?;
    Ok(json!({
        "rows": t.num_rows(),
        "rows_per_group": t.rows_per_group(),
        "layout": t.layout(),
        "statistics": t.has_statistics(),
        "sorted_by": t.sorted_by().iter().map(|k| json!({
            "column": k.column, "descending": k.descending, "nulls_first": k.nulls_first,
        })).collect::<Vec<_>>(),
        "columns": t.summary().iter().map(|c| json!({
            "name": c.name, "type": c.data_type.to_string(), "pages": c.encodings,
            "pages_with_nulls": c.pages_with_nulls, "encoded_size": c.encoded, "stored_size": c.stored,
            "codecs": c.codecs,
        })).collect::<Vec<_>>(),
    }))
}

pub fn head(a: HeadArgs) -> CliResult {
    let t = open(&a.file)?;
    let positions = match &a.columns {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| t.column_index(n.trim()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| CliError::new(e.to_string()))?,
        ),
    };
    let (rows, schema, batches) = match &a.take {
        Some(indices) => {
            let (schema, batch) = t
                .take(positions.as_deref(), indices, 0)
                .map_err(|e| CliError::from(e).context(a.file.display()))?;
            (indices.len() as u64, schema, vec![batch])
        }
        None => {
            let rows = a.rows.min(t.num_rows());
            let (schema, batches) = t
                .read(positions.as_deref(), 0..rows, 0)
                .map_err(|e| CliError::from(e).context(a.file.display()))?;
            (rows, schema, batches)
        }
    };
    let mut cells: Vec<Vec<String>> = vec![schema.fields().iter().map(|f| f.name().clone()).collect()];
    for b in &batches {
        let columns: Vec<Column<'_>> = b.columns().iter().map(Column::new).collect();
        for i in 0..b.num_rows() {
            cells.push(columns.iter().map(|c| c.cell(i)).collect());
        }
    }
    let widths: Vec<usize> = (0..schema.fields().len())
        .map(|j| cells.iter().map(|r| r[j].chars().count()).max().unwrap_or(0).min(40))
        .collect();
    // Rust's stdout flushes every line: 1000 rows were 1000 writes.
    let mut out = io::BufWriter::new(io::stdout().lock());
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, &w)| {
                let c: String = if c.chars().count() > w {
                    c.chars().take(w - 1).chain(['…']).collect()
                } else {
                    c.clone()
                };
                format!("{c:<w$}")
            })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    match &a.take {
        Some(_) => writeln!(out, "[{} rows by number, of {} rows]", rows, t.num_rows())?,
        None => writeln!(out, "[{} of {} rows]", rows, t.num_rows())?,
    }
    out.flush()?;
    Ok(())
}

/// A column to print. A dictionary's keys are resolved once for the column: arrow resolves
/// them all at each call, which made printing 1000 rows of a factor quadratic (half of
/// `head`'s time on the fst table).
struct Column<'a> {
    array: &'a ArrayRef,
    dictionary: Option<(&'a ArrayRef, Vec<usize>)>,
}

impl<'a> Column<'a> {
    fn new(array: &'a ArrayRef) -> Self {
        let dictionary = matches!(array.data_type(), DataType::Dictionary(_, _)).then(|| {
            let d = array.as_any_dictionary();
            (d.values(), d.normalized_keys())
        });
        Column { array, dictionary }
    }

    fn cell(&self, i: usize) -> String {
        match &self.dictionary {
            Some((values, keys)) if !self.array.is_null(i) => cell(values, keys[i]),
            _ => cell(self.array, i),
        }
    }
}

/// One value as text (null as `null`; times with their unit's precision, in their column's
/// time zone with its offset, or as naive times when the column has none).
fn cell(a: &ArrayRef, i: usize) -> String {
    if a.is_null(i) {
        return "null".into();
    }
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive::<$t>().value(i).to_string()
        };
    }
    macro_rules! time {
        ($t:ty) => {
            a.as_primitive::<$t>()
                .value_as_datetime(i)
                .map_or_else(|| prim!($t), |d| d.to_string())
        };
    }
    match a.data_type() {
        DataType::Null => "null".into(),
        DataType::Boolean => a.as_boolean().value(i).to_string(),
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float16 => prim!(Float16Type),
        DataType::Float32 => prim!(Float32Type),
        DataType::Float64 => prim!(Float64Type),
        DataType::Decimal128(_, _) => {
            let arr = a.as_primitive::<Decimal128Type>();
            arr.value_as_string(i)
        }
        DataType::Date32 => time!(Date32Type),
        DataType::Date64 => time!(Date64Type),
        DataType::Timestamp(unit, Some(tz)) => {
            let zone = tz.parse::<arrow_array::timezone::Tz>();
            macro_rules! zoned {
                ($t:ty) => {
                    match zone {
                        Ok(zone) => a
                            .as_primitive::<$t>()
                            .value_as_datetime_with_tz(i, zone)
                            .map_or_else(|| prim!($t), |d| d.to_string()),
                        // A zone this build does not know: UTC, and said so.
                        Err(_) => format!("{} UTC", time!($t)),
                    }
                };
            }
            match unit {
                TimeUnit::Second => zoned!(TimestampSecondType),
                TimeUnit::Millisecond => zoned!(TimestampMillisecondType),
                TimeUnit::Microsecond => zoned!(TimestampMicrosecondType),
                TimeUnit::Nanosecond => zoned!(TimestampNanosecondType),
            }
        }
        DataType::Timestamp(TimeUnit::Second, _) => time!(TimestampSecondType),
        DataType::Timestamp(TimeUnit::Millisecond, _) => time!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => time!(TimestampMicrosecondType),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => time!(TimestampNanosecondType),
        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).to_string(),
        DataType::Binary => hex(a.as_binary::<i32>().value(i)),
        DataType::LargeBinary => hex(a.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(_) => hex(a.as_fixed_size_binary().value(i)),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let key = d.normalized_keys()[i];
            cell(d.values(), key)
        }
        _ => {
            // Times and durations: their integer value and unit.
            let data = a.to_data();
            let w = a.data_type().primitive_width().unwrap_or(8);
            let bytes = &data.buffers()[0].as_slice()[(data.offset() + i) * w..(data.offset() + i + 1) * w];
            let mut b = [0u8; 8];
            b[..w.min(8)].copy_from_slice(&bytes[..w.min(8)]);
            let v = if w == 4 {
                i32::from_le_bytes(b[..4].try_into().expect("4")) as i64
            } else {
                i64::from_le_bytes(b)
            };
            format!("{v} ({})", a.data_type())
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
