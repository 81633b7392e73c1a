//! Table files in the CLI: the `inspect` section of a table and `kompakt head`.

use crate::args::HeadArgs;
use crate::human::format_size;
use crate::{CliError, CliResult};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use kompakt_table::plan::{matches, plan_rows, Filter, Op};
use kompakt_table::TableReader;
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

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

/// `kompakt head`: the first rows of a table (or those `--take` names, or the first that pass
/// every `--where`), as aligned text.
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
    if !a.filters.is_empty() {
        return head_where(&a, &t, positions);
    }
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
    let footer = match &a.take {
        Some(_) => format!("[{} rows by number, of {} rows]", rows, t.num_rows()),
        None => format!("[{} of {} rows]", rows, t.num_rows()),
    };
    print_cells(&cells, &footer)
}

/// `head --where`: the first `a.rows` rows that pass every filter, reading only the row
/// ranges the plan leaves (kompakt_table::plan), a few row groups at a time.
fn head_where(a: &HeadArgs, t: &TableReader, positions: Option<Vec<usize>>) -> CliResult {
    let filters = a
        .filters
        .iter()
        .map(|text| parse_where(t, text))
        .collect::<CliResult<Vec<Filter>>>()?;
    let in_file = |e: kompakt::Error| CliError::from(e).context(a.file.display());
    let planned = plan_rows(t, &filters, 0..t.num_rows()).map_err(in_file)?;
    // The columns printed, then the filtered ones not among them.
    let shown = positions.unwrap_or_else(|| (0..t.schema().fields().len()).collect());
    let mut read = shown.clone();
    for f in &filters {
        let c = t.column_index(&f.column).map_err(in_file)?;
        if !read.contains(&c) {
            read.push(c);
        }
    }
    let schema = t.schema();
    let mut cells: Vec<Vec<String>> = vec![shown.iter().map(|&c| schema.field(c).name().clone()).collect()];
    let r = u64::from(t.rows_per_group()).max(1);
    let (mut found, mut groups_read, mut step) = (0u64, 0u64, 1u64);
    'ranges: for range in &planned {
        let mut start = range.start;
        while start < range.end && found < a.rows {
            // Whole row groups, one at first and more each time, up to 16: few rows
            // wanted read little, and a scan for rare rows still reads on every core.
            let stop = range.end.min((start / r + step) * r);
            let (_, batches) = t.read(Some(&read), start..stop, 0).map_err(in_file)?;
            groups_read += (stop - 1) / r - start / r + 1;
            step = (step * 2).min(16);
            for b in &batches {
                let pass = matches(b, &filters).map_err(in_file)?;
                let columns: Vec<Column<'_>> = b.columns()[..shown.len()].iter().map(Column::new).collect();
                for i in (0..b.num_rows()).filter(|&i| pass.value(i)) {
                    cells.push(columns.iter().map(|c| c.cell(i)).collect());
                    found += 1;
                    if found == a.rows {
                        break 'ranges;
                    }
                }
            }
            start = stop;
        }
        if found >= a.rows {
            break;
        }
    }
    let footer = format!(
        "[{found} row{} where {}, of {} rows; read {groups_read} of {} row groups]",
        if found == 1 { "" } else { "s" },
        a.filters.iter().map(|f| f.trim()).collect::<Vec<_>>().join(" and "),
        t.num_rows(),
        t.num_groups()
    );
    print_cells(&cells, &footer)
}

/// Prints `cells` (a header row, then rows) as aligned columns of at most 40 characters, then
/// `footer`.
fn print_cells(cells: &[Vec<String>], footer: &str) -> CliResult {
    let width = cells.first().map_or(0, |r| r.len());
    let widths: Vec<usize> = (0..width)
        .map(|j| cells.iter().map(|r| r[j].chars().count()).max().unwrap_or(0).min(40))
        .collect();
    // Rust's stdout flushes every line: 1000 rows were 1000 writes.
    let mut out = io::BufWriter::new(io::stdout().lock());
    for row in cells {
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
    writeln!(out, "{footer}")?;
    out.flush()?;
    Ok(())
}

/// The ops of `--where`, as they may be written.
const WHERE_OPS: &str = "==, =, !=, <, <=, >, >=, in, not in";

/// What `--where` takes, for its error messages.
fn where_usage(text: &str, problem: &str) -> CliError {
    CliError::new(format!(
        "invalid --where {text:?}: {problem}; expected COLUMN OP VALUE with OP one of {WHERE_OPS} \
         (e.g. 'price>=10', 'city in (Oslo,Bergen)', 'day < 2024-05-01')"
    ))
}

/// `--where`'s text split into column, op and value text: at the first comparison sign, or
/// at `in` / `not in` standing as words after the column, whichever comes first.
fn split_where(text: &str) -> Option<(&str, Op, &str)> {
    const SIGNS: [(&str, Op); 7] = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("!=", Op::Ne),
        ("==", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ];
    let sign = text.char_indices().find_map(|(i, _)| {
        SIGNS
            .iter()
            .find(|(s, _)| text[i..].starts_with(s))
            .map(|&(s, op)| (i, i + s.len(), op))
    });
    // Words and where they start.
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (i, ch) in text.char_indices().chain([(text.len(), ' ')]) {
        if !ch.is_whitespace() {
            start = start.or(Some(i));
        } else if let Some(s) = start.take() {
            words.push((s, &text[s..i]));
        }
    }
    let is_in = |w: &str| {
        w.eq_ignore_ascii_case("in")
            || w.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("in")) && w[2..].starts_with('(')
    };
    let word = (1..words.len()).find_map(|k| {
        let (start, w) = words[k];
        if w.eq_ignore_ascii_case("not") && words.get(k + 1).is_some_and(|&(_, next)| is_in(next)) {
            return Some((start, words[k + 1].0 + 2, Op::NotIn));
        }
        is_in(w).then_some((start, start + 2, Op::In))
    });
    let (start, end, op) = match (sign, word) {
        (Some(s), Some(w)) => {
            if w.0 < s.0 {
                w
            } else {
                s
            }
        }
        (s, w) => s.or(w)?,
    };
    let column = text[..start].trim();
    (!column.is_empty()).then_some((column, op, text[end..].trim()))
}

/// `text` without one pair of matching quotes around it.
fn unquote(text: &str) -> &str {
    let t = text.trim();
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return &t[1..t.len() - 1];
        }
    }
    t
}

/// The items of a list `(a, b, ...)` (or `a, b, ...`): split at commas outside quotes,
/// each unquoted.
fn list_items(text: &str) -> Vec<String> {
    let t = text.trim();
    let t = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(t);
    if t.trim().is_empty() {
        return Vec::new();
    }
    let (mut items, mut item, mut quote) = (Vec::new(), String::new(), None);
    for ch in t.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => {
                quote = Some(ch);
                item.push(ch);
            }
            (Some(q), c) if c == q => {
                quote = None;
                item.push(ch);
            }
            (None, ',') => items.push(std::mem::take(&mut item)),
            _ => item.push(ch),
        }
    }
    items.push(item);
    items.iter().map(|i| unquote(i).to_string()).collect()
}

/// One `--where` as a filter, its value(s) read in the column's type.
fn parse_where(t: &TableReader, text: &str) -> CliResult<Filter> {
    let (column, op, value) = split_where(text).ok_or_else(|| where_usage(text, "no op in it"))?;
    let c = t
        .column_index(column)
        .map_err(|e| CliError::from(e).context(format!("--where {text:?}")))?;
    let items = if op.takes_list() {
        if !(value.starts_with('(') && value.ends_with(')')) {
            return Err(where_usage(text, "in and not in take a list in parentheses, as (a, b)"));
        }
        list_items(value)
    } else {
        if value.is_empty() {
            return Err(where_usage(text, "no value"));
        }
        vec![unquote(value).to_string()]
    };
    let dt = t.schema().field(c).data_type().clone();
    let values = typed_values(&dt, &items).map_err(|problem| {
        CliError::new(format!(
            "invalid --where {text:?}: {problem} (column {column:?} is {dt})"
        ))
    })?;
    Ok(Filter::new(column, op, values))
}

/// `items` as an array of type `dt` (a dictionary's value type for a dictionary).
fn typed_values(dt: &DataType, items: &[String]) -> Result<ArrayRef, String> {
    use arrow_array::*;
    macro_rules! parsed {
        ($array:ty, $native:ty, $what:expr) => {
            Arc::new(
                items
                    .iter()
                    .map(|s| {
                        s.trim()
                            .parse::<$native>()
                            .map_err(|_| format!("{s:?} is not {}", $what))
                    })
                    .collect::<Result<$array, String>>()?,
            ) as ArrayRef
        };
    }
    Ok(match dt {
        DataType::Dictionary(_, value) => return typed_values(value, items),
        DataType::Int8 => parsed!(Int8Array, i8, "an int8"),
        DataType::Int16 => parsed!(Int16Array, i16, "an int16"),
        DataType::Int32 => parsed!(Int32Array, i32, "an int32"),
        DataType::Int64 => parsed!(Int64Array, i64, "an int64"),
        DataType::UInt8 => parsed!(UInt8Array, u8, "a uint8"),
        DataType::UInt16 => parsed!(UInt16Array, u16, "a uint16"),
        DataType::UInt32 => parsed!(UInt32Array, u32, "a uint32"),
        DataType::UInt64 => parsed!(UInt64Array, u64, "a uint64"),
        DataType::Float32 => parsed!(Float32Array, f32, "a number"),
        DataType::Float64 => parsed!(Float64Array, f64, "a number"),
        DataType::Boolean => Arc::new(
            items
                .iter()
                .map(|s| match s.trim().to_ascii_lowercase().as_str() {
                    "true" => Ok(true),
                    "false" => Ok(false),
                    _ => Err(format!("{s:?} is not true or false")),
                })
                .collect::<Result<BooleanArray, String>>()?,
        ),
        DataType::Utf8 => Arc::new(StringArray::from_iter_values(items)),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from_iter_values(items)),
        DataType::Utf8View => Arc::new(StringViewArray::from_iter_values(items)),
        DataType::Date32 => Arc::new(Date32Array::from(
            items
                .iter()
                .map(|s| {
                    let day = parse_date(s.trim()).and_then(|d| i32::try_from(d).ok());
                    day.ok_or_else(|| format!("{s:?} is not a date (YYYY-MM-DD)"))
                })
                .collect::<Result<Vec<i32>, String>>()?,
        )),
        DataType::Date64 => Arc::new(Date64Array::from(
            items
                .iter()
                .map(|s| {
                    let day = parse_date(s.trim()).map(|d| d * 86_400_000);
                    day.ok_or_else(|| format!("{s:?} is not a date (YYYY-MM-DD)"))
                })
                .collect::<Result<Vec<i64>, String>>()?,
        )),
        DataType::Timestamp(unit, tz) => {
            let values = items
                .iter()
                .map(|s| timestamp(s.trim(), *unit, tz.is_some()))
                .collect::<Result<Vec<i64>, String>>()?;
            let data = PrimitiveArray::<Int64Type>::from(values)
                .into_data()
                .into_builder()
                .data_type(dt.clone())
                .build()
                .map_err(|e| e.to_string())?;
            make_array(data)
        }
        DataType::Decimal128(precision, scale) => Arc::new(
            items
                .iter()
                .map(|s| decimal(s.trim(), *precision, *scale))
                .collect::<Result<Decimal128Array, String>>()?
                .with_precision_and_scale(*precision, *scale)
                .map_err(|e| e.to_string())?,
        ),
        _ => {
            return Err(
                "--where compares integers, floats, booleans, strings, decimals, dates (YYYY-MM-DD) \
                        and timestamps (RFC 3339, e.g. 2024-05-01T12:00:00Z), not this type"
                    .into(),
            )
        }
    })
}

/// Days since 1970-01-01 of a date written YYYY-MM-DD.
fn parse_date(s: &str) -> Option<i64> {
    let mut parts = s.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || !(y.to_owned() + m + d).bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[m as usize - 1] {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// An RFC 3339 time (`2024-05-01T12:30:00.25Z`, `2024-05-01 12:30+02:00`; a date alone is its
/// midnight) in `unit`s since 1970-01-01 UTC. A column with a time zone needs the offset
/// (`Z` or `±HH:MM`); one without takes the time as written.
fn timestamp(s: &str, unit: TimeUnit, zoned: bool) -> Result<i64, String> {
    let bad = || format!("{s:?} is not an RFC 3339 time such as 2024-05-01T12:00:00Z");
    let day = parse_date(s.get(..10).ok_or_else(bad)?).ok_or_else(bad)?;
    let rest = &s[10..];
    let (mut seconds, mut nanos, mut offset) = (day * 86_400, 0i64, None);
    if !rest.is_empty() {
        let rest = rest.strip_prefix(['T', 't', ' ']).ok_or_else(bad)?;
        let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let (time, zone) = rest.split_at(zone_at);
        let (hms, fraction) = time.split_once('.').unwrap_or((time, ""));
        let fields: Vec<&str> = hms.split(':').collect();
        if !(2..=3).contains(&fields.len())
            || fields
                .iter()
                .any(|f| f.len() != 2 || !f.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad());
        }
        let field = |k: usize| fields.get(k).map_or(0, |f| f.parse::<i64>().unwrap_or(99));
        let (h, m, sec) = (field(0), field(1), field(2));
        if h > 23 || m > 59 || sec > 60 || fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        seconds += h * 3600 + m * 60 + sec;
        if !fraction.is_empty() {
            nanos = format!("{fraction:0<9}").parse::<i64>().map_err(|_| bad())?;
        }
        if !zone.is_empty() {
            offset = Some(if zone.eq_ignore_ascii_case("z") {
                0
            } else {
                let (sign, hm) = zone.split_at(1);
                let (oh, om) = hm.split_once(':').ok_or_else(bad)?;
                if oh.len() != 2 || om.len() != 2 {
                    return Err(bad());
                }
                let (oh, om): (i64, i64) = (oh.parse().map_err(|_| bad())?, om.parse().map_err(|_| bad())?);
                if oh > 23 || om > 59 {
                    return Err(bad());
                }
                (oh * 3600 + om * 60) * if sign == "-" { -1 } else { 1 }
            });
        }
    }
    match offset {
        Some(o) => seconds -= o,
        None if zoned => {
            return Err(format!(
                "{s:?} needs its offset from UTC (as 2024-05-01T12:00:00Z or 2024-05-01T14:00:00+02:00): the column has a time zone"
            ))
        }
        None => {}
    }
    let per_second: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let step = 1_000_000_000 / per_second;
    if nanos % step != 0 {
        return Err(format!("{s:?} is more precise than the column's unit ({unit:?})"));
    }
    seconds
        .checked_mul(per_second)
        .and_then(|v| v.checked_add(nanos / step))
        .ok_or_else(|| format!("{s:?} is out of the column's range"))
}

/// A decimal number (`-12.5`) as a Decimal128 of `scale` digits after the point, at most
/// `precision` digits in all.
fn decimal(s: &str, precision: u8, scale: i8) -> Result<i128, String> {
    let bad = || format!("{s:?} is not a decimal number of at most {precision} digits, {scale} after the point");
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let scale = usize::try_from(scale).map_err(|_| bad())?;
    let fraction = fraction.trim_end_matches('0');
    if whole.is_empty() && fraction.is_empty()
        || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        || fraction.len() > scale
    {
        return Err(bad());
    }
    let text = format!("{whole}{fraction:0<scale$}");
    let text = text.trim_start_matches('0');
    if text.len() > usize::from(precision) {
        return Err(bad());
    }
    let v: i128 = if text.is_empty() {
        0
    } else {
        text.parse().map_err(|_| bad())?
    };
    Ok(if negative { -v } else { v })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_splits_at_the_first_op() {
        let split = |t: &str| split_where(t).map(|(c, op, v)| (c.to_string(), op, v.to_string()));
        let s = |c: &str, op: Op, v: &str| Some((c.to_string(), op, v.to_string()));
        assert_eq!(split("price>=10"), s("price", Op::Ge, "10"));
        assert_eq!(split(" price  <  10 "), s("price", Op::Lt, "10"));
        assert_eq!(split("a=b==c"), s("a", Op::Eq, "b==c"));
        assert_eq!(split("a != 'x'"), s("a", Op::Ne, "'x'"));
        assert_eq!(split("city in (Oslo, a<b)"), s("city", Op::In, "(Oslo, a<b)"));
        assert_eq!(split("city IN(Oslo)"), s("city", Op::In, "(Oslo)"));
        assert_eq!(split("city not  in (x)"), s("city", Op::NotIn, "(x)"));
        assert_eq!(split("note == x in y"), s("note", Op::Eq, "x in y"));
        // Any whitespace, at any width in bytes.
        assert_eq!(split("naïve\u{a0}in\u{3000}(é)"), s("naïve", Op::In, "(é)"));
        for bad in ["", "x", "in (1)", "== 3", "x ~ 3", "inside 3"] {
            assert_eq!(split(bad), None, "{bad}");
        }
        assert_eq!(list_items("(a, 'b, c' , \"d\",)"), ["a", "b, c", "d", ""]);
        assert_eq!(list_items("()"), Vec::<String>::new());
        assert_eq!(unquote(" 'x y' "), "x y");
    }

    #[test]
    fn dates_times_and_decimals_read_as_written() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "24-01-01", "2024-01-001"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        let ms = |s: &str| timestamp(s, TimeUnit::Millisecond, true);
        assert_eq!(ms("1970-01-01T00:00:01.5Z"), Ok(1500));
        assert_eq!(ms("1970-01-01 01:00+01:00"), Ok(0));
        assert_eq!(ms("1970-01-01T00:00:00-00:30"), Ok(1_800_000));
        assert_eq!(timestamp("1970-01-02", TimeUnit::Second, false), Ok(86_400));
        assert_eq!(
            timestamp("1970-01-01T00:00:00.000000001Z", TimeUnit::Nanosecond, true),
            Ok(1)
        );
        for bad in [
            "1970-01-01T24:00Z",
            "1970-01-01T00:00:00",
            "1970-01-01X00:00Z",
            "1970-01-01T1:00Z",
        ] {
            assert!(ms(bad).is_err(), "{bad}");
        }
        assert_eq!(decimal("-12.5", 5, 2), Ok(-1250));
        assert_eq!(decimal("0.10", 5, 1), Ok(1));
        assert_eq!(decimal("7", 3, 0), Ok(7));
        for bad in ["1.234", "1234", "", ".", "1e3", "--1"] {
            assert!(decimal(bad, 3, 2).is_err(), "{bad}");
        }
    }
}
