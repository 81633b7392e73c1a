//! The table schema as JSON (docs/FORMAT.md, "Table schema"): Arrow types described in plain
//! words, so any JSON library can read a table's schema without an Arrow flatbuffer parser.

use arrow_schema::{DataType, Field, Schema, TimeUnit};
use kompakt::{Error, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

use crate::sort::{SortCheck, SortKey};
use crate::stats::{StatisticsLocation, STATISTICS_VERSION};

/// Where a column's data lives beyond its own stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnLayout {
    /// Stream holding the column-wide dictionary of a dictionary-typed column, or the
    /// dictionary the pages of a string or binary column share.
    pub dictionary_stream: Option<u32>,
    /// Where the current dictionary starts in that stream (appends add newer ones after it).
    pub dictionary_offset: u64,
}

/// Types a table column may have (checked before anything is written).
pub fn check_supported(field: &Field) -> Result<()> {
    let dt = field.data_type();
    if let DataType::List(_) | DataType::LargeList(_) | DataType::Struct(_) | DataType::Map(..) = dt {
        return check_nested(field, dt, 0);
    }
    match dt {
        DataType::Dictionary(key, value) => {
            if !key.is_dictionary_key_type() {
                return Err(unsupported(field, "dictionary keys must be integers"));
            }
            if !is_leaf(value) {
                return Err(unsupported(field, "dictionary values must be a non-nested type"));
            }
            Ok(())
        }
        t if is_leaf(t) => Ok(()),
        _ => Err(unsupported(field, "not supported yet")),
    }
}

/// Lists and structs of supported types (no dictionaries inside), nested at most
/// [`MAX_DEPTH`] deep.
fn check_nested(field: &Field, dt: &DataType, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(unsupported(field, "nested too deep"));
    }
    match dt {
        DataType::List(item) | DataType::LargeList(item) => check_nested(field, item.data_type(), depth + 1),
        DataType::Map(entries, _) => check_nested(field, entries.data_type(), depth + 1),
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_nested(field, f.data_type(), depth + 1)),
        t if is_leaf(t) => Ok(()),
        _ => Err(unsupported(field, "not supported inside a list or struct")),
    }
}

/// Deepest nesting of lists and structs.
const MAX_DEPTH: usize = 16;

fn unsupported(field: &Field, why: &str) -> Error {
    Error::invalid(
        "column type",
        format!("{} ({})", field.data_type(), field.name()),
        format!(
            "{why}; supported: null, bool, (u)int8..64, float16/32/64, decimal128, date32/64, time32/64, \
             timestamp, duration, utf8, large_utf8, binary, large_binary, fixed_size_binary, dictionaries of these, \
             and lists, structs and maps of them"
        ),
    )
}

/// Types stored as one node without children.
pub(crate) fn is_leaf(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Null
            | DataType::Boolean
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::FixedSizeBinary(_)
    ) || fixed_width(dt).is_some()
}

/// Bytes per value of a fixed-width type (bool excluded: it is a bitmap).
pub(crate) fn fixed_width(dt: &DataType) -> Option<usize> {
    Some(match dt {
        DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
        DataType::Int32 | DataType::UInt32 | DataType::Float32 | DataType::Date32 | DataType::Time32(_) => 4,
        DataType::Int64
        | DataType::UInt64
        | DataType::Float64
        | DataType::Date64
        | DataType::Time64(_)
        | DataType::Timestamp(_, _)
        | DataType::Duration(_) => 8,
        DataType::Decimal128(_, _) => 16,
        _ => return None,
    })
}

fn unit_name(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

fn parse_unit(v: &Value) -> std::result::Result<TimeUnit, String> {
    match v.as_str() {
        Some("s") => Ok(TimeUnit::Second),
        Some("ms") => Ok(TimeUnit::Millisecond),
        Some("us") => Ok(TimeUnit::Microsecond),
        Some("ns") => Ok(TimeUnit::Nanosecond),
        _ => Err(format!("unknown time unit {v}")),
    }
}

fn type_json(dt: &DataType) -> Value {
    let simple = |name: &str| json!({ "id": name });
    match dt {
        DataType::Null => simple("null"),
        DataType::Boolean => simple("bool"),
        DataType::Int8 => simple("int8"),
        DataType::Int16 => simple("int16"),
        DataType::Int32 => simple("int32"),
        DataType::Int64 => simple("int64"),
        DataType::UInt8 => simple("uint8"),
        DataType::UInt16 => simple("uint16"),
        DataType::UInt32 => simple("uint32"),
        DataType::UInt64 => simple("uint64"),
        DataType::Float16 => simple("float16"),
        DataType::Float32 => simple("float32"),
        DataType::Float64 => simple("float64"),
        DataType::Decimal128(p, s) => json!({ "id": "decimal128", "precision": p, "scale": s }),
        DataType::Date32 => simple("date32"),
        DataType::Date64 => simple("date64"),
        DataType::Time32(u) => json!({ "id": "time32", "unit": unit_name(u) }),
        DataType::Time64(u) => json!({ "id": "time64", "unit": unit_name(u) }),
        DataType::Timestamp(u, tz) => json!({ "id": "timestamp", "unit": unit_name(u), "tz": tz.as_deref() }),
        DataType::Duration(u) => json!({ "id": "duration", "unit": unit_name(u) }),
        DataType::Utf8 => simple("utf8"),
        DataType::LargeUtf8 => simple("large_utf8"),
        DataType::Binary => simple("binary"),
        DataType::LargeBinary => simple("large_binary"),
        DataType::FixedSizeBinary(w) => json!({ "id": "fixed_size_binary", "width": w }),
        DataType::Dictionary(k, v) => json!({ "id": "dictionary", "key": type_json(k), "value": type_json(v) }),
        DataType::List(item) => json!({ "id": "list", "item": Value::Object(field_json(item)) }),
        DataType::LargeList(item) => json!({ "id": "large_list", "item": Value::Object(field_json(item)) }),
        DataType::Map(entries, sorted) => json!({
            "id": "map",
            "entries": Value::Object(field_json(entries)),
            "keys_sorted": sorted,
        }),
        DataType::Struct(fields) => json!({
            "id": "struct",
            "fields": fields.iter().map(|f| Value::Object(field_json(f))).collect::<Vec<_>>(),
        }),
        // check_supported refuses everything else before a file is written.
        other => json!({ "id": format!("unsupported:{other}") }),
    }
}

/// A field's name, type, nullability, ordering and metadata; what has its default (nullable,
/// no metadata) is left out, as every reader of tables reads it: a table of a few hundred rows
/// spent a tenth of its bytes on its schema.
fn field_json(f: &Field) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("name".into(), json!(f.name()));
    o.insert("type".into(), type_json(f.data_type()));
    if !f.is_nullable() {
        o.insert("nullable".into(), json!(false));
    }
    if f.dict_is_ordered() == Some(true) {
        o.insert("ordered".into(), json!(true));
    }
    if !f.metadata().is_empty() {
        o.insert("metadata".into(), metadata_json(f.metadata()));
    }
    o
}

fn parse_field(f: &Value, depth: usize) -> std::result::Result<Field, String> {
    let name = f["name"].as_str().ok_or("a field without a name")?;
    let dt = parse_type(&f["type"], depth).map_err(|e| format!("field {name:?}: {e}"))?;
    let nullable = f["nullable"].as_bool().unwrap_or(true);
    let metadata = parse_metadata(&f["metadata"]).map_err(|e| format!("field {name:?}: {e}"))?;
    let mut field = Field::new(name, dt, nullable).with_metadata(metadata);
    if let DataType::Dictionary(_, _) = field.data_type() {
        field = field.with_dict_is_ordered(f["ordered"].as_bool().unwrap_or(false));
    }
    Ok(field)
}

fn parse_type(v: &Value, depth: usize) -> std::result::Result<DataType, String> {
    if depth > MAX_DEPTH + 2 {
        return Err("types nested too deep".into());
    }
    let id = v.get("id").and_then(Value::as_str).ok_or("a type without an id")?;
    let int = |key: &str| -> std::result::Result<i64, String> {
        v.get(key)
            .and_then(Value::as_i64)
            .ok_or_else(|| format!("type {id} without an integer {key}"))
    };
    Ok(match id {
        "null" => DataType::Null,
        "bool" => DataType::Boolean,
        "int8" => DataType::Int8,
        "int16" => DataType::Int16,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "uint8" => DataType::UInt8,
        "uint16" => DataType::UInt16,
        "uint32" => DataType::UInt32,
        "uint64" => DataType::UInt64,
        "float16" => DataType::Float16,
        "float32" => DataType::Float32,
        "float64" => DataType::Float64,
        "decimal128" => {
            let (p, s) = (int("precision")?, int("scale")?);
            let p = u8::try_from(p).ok().filter(|p| (1..=38).contains(p));
            let s = i8::try_from(s).ok();
            match (p, s) {
                (Some(p), Some(s)) if i16::from(s) <= i16::from(p) => DataType::Decimal128(p, s),
                _ => return Err("decimal128 precision must be 1..=38 and scale at most the precision".into()),
            }
        }
        "date32" => DataType::Date32,
        "date64" => DataType::Date64,
        "time32" => match parse_unit(&v["unit"])? {
            u @ (TimeUnit::Second | TimeUnit::Millisecond) => DataType::Time32(u),
            _ => return Err("time32 unit must be s or ms".into()),
        },
        "time64" => match parse_unit(&v["unit"])? {
            u @ (TimeUnit::Microsecond | TimeUnit::Nanosecond) => DataType::Time64(u),
            _ => return Err("time64 unit must be us or ns".into()),
        },
        "timestamp" => {
            let tz = match &v["tz"] {
                Value::Null => None,
                Value::String(s) => Some(Arc::from(s.as_str())),
                _ => return Err("timestamp tz must be a string or null".into()),
            };
            DataType::Timestamp(parse_unit(&v["unit"])?, tz)
        }
        "duration" => DataType::Duration(parse_unit(&v["unit"])?),
        "utf8" => DataType::Utf8,
        "large_utf8" => DataType::LargeUtf8,
        "binary" => DataType::Binary,
        "large_binary" => DataType::LargeBinary,
        "fixed_size_binary" => {
            let w = i32::try_from(int("width")?).ok().filter(|w| *w >= 0);
            DataType::FixedSizeBinary(w.ok_or("fixed_size_binary width must be 0..2^31")?)
        }
        "list" | "large_list" => {
            let item = Arc::new(parse_field(&v["item"], depth + 1)?);
            if id == "list" {
                DataType::List(item)
            } else {
                DataType::LargeList(item)
            }
        }
        "map" => {
            let entries = parse_field(&v["entries"], depth + 1)?;
            // Arrow's layout of a map: a struct of a key that is never null and a value.
            match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 && !kv[0].is_nullable() && !entries.is_nullable() => {}
                _ => return Err("a map's entries must be a non-null struct of a non-null key and a value".into()),
            }
            let sorted = v["keys_sorted"].as_bool().ok_or("a map without keys_sorted")?;
            DataType::Map(Arc::new(entries), sorted)
        }
        "struct" => {
            let fields = v["fields"].as_array().ok_or("a struct without fields")?;
            let fields = fields
                .iter()
                .map(|f| parse_field(f, depth + 1))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            DataType::Struct(fields.into())
        }
        "dictionary" => {
            let key = parse_type(&v["key"], depth + 1)?;
            let value = parse_type(&v["value"], depth + 1)?;
            if !key.is_dictionary_key_type() || !is_leaf(&value) {
                return Err("dictionary keys must be integers and values a non-nested type".into());
            }
            DataType::Dictionary(Box::new(key), Box::new(value))
        }
        other => return Err(format!("unknown type {other:?} (written by a newer kompakt?)")),
    })
}

fn metadata_json(m: &HashMap<String, String>) -> Value {
    let sorted: std::collections::BTreeMap<_, _> = m.iter().collect();
    json!(sorted)
}

fn parse_metadata(v: &Value) -> std::result::Result<HashMap<String, String>, String> {
    match v {
        Value::Null => Ok(HashMap::new()),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("metadata value of {k:?} is not a string")),
            })
            .collect(),
        _ => Err("metadata must be an object of strings".into()),
    }
}

/// The schema JSON of a table: its fields, their layouts, the schema metadata, the user's
/// key-value metadata, the sort keys and where the statistics are (each written only when
/// there is one).
pub fn to_json(
    schema: &Schema,
    layouts: &[ColumnLayout],
    user: &HashMap<String, String>,
    sorted_by: &[SortKey],
    statistics: Option<StatisticsLocation>,
) -> Vec<u8> {
    let fields: Vec<Value> = schema
        .fields()
        .iter()
        .zip(layouts)
        .map(|(f, l)| {
            let mut o = field_json(f);
            if let Some(s) = l.dictionary_stream {
                o.insert("dictionary_stream".into(), json!(s));
                if l.dictionary_offset != 0 {
                    o.insert("dictionary_offset".into(), json!(l.dictionary_offset));
                }
            }
            Value::Object(o)
        })
        .collect();
    let mut doc = json!({ "fields": fields });
    if !schema.metadata().is_empty() {
        doc["metadata"] = metadata_json(schema.metadata());
    }
    if !user.is_empty() {
        doc["user_metadata"] = metadata_json(user);
    }
    if !sorted_by.is_empty() {
        let keys: Vec<Value> = sorted_by
            .iter()
            .map(|k| json!({"column": k.column, "descending": k.descending, "nulls_first": k.nulls_first}))
            .collect();
        doc["sorted_by"] = Value::Array(keys);
    }
    if let Some(at) = statistics {
        doc["statistics"] = json!({"version": STATISTICS_VERSION, "stream": at.stream, "offset": at.offset});
    }
    serde_json::to_vec(&doc).expect("a JSON value always serializes")
}

/// The parsed schema JSON.
#[derive(Debug, Clone)]
pub struct ParsedSchema {
    /// The Arrow schema, with its metadata.
    pub schema: Arc<Schema>,
    /// Per column, where its extra data lives.
    pub layouts: Vec<ColumnLayout>,
    /// The user's key-value metadata.
    pub user_metadata: HashMap<String, String>,
    /// The columns the rows are sorted by, most significant first.
    pub sorted_by: Vec<SortKey>,
    /// Where the row-group statistics are, if the file has a section of a version this build
    /// reads.
    pub statistics: Option<StatisticsLocation>,
}

fn parse_sort_keys(v: &Value, schema: &Schema) -> std::result::Result<Vec<SortKey>, String> {
    let keys = match v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(keys) => keys,
        _ => return Err("sorted_by must be a list".into()),
    };
    let keys = keys
        .iter()
        .map(|k| match (&k["column"], &k["descending"], &k["nulls_first"]) {
            (Value::String(c), Value::Bool(d), Value::Bool(n)) => Ok(SortKey {
                column: c.clone(),
                descending: *d,
                nulls_first: *n,
            }),
            _ => Err(format!("invalid sort key {k}")),
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    SortCheck::new(schema, &keys).map_err(|e| e.to_string())?;
    Ok(keys)
}

/// Where the statistics section is: `None` when there is none or it has a version this build
/// does not read (statistics only let reads skip work, so a newer kind is ignored, not
/// refused). Its stream is numbered past the columns and is no dictionary's (`used`).
fn parse_statistics(
    v: &Value,
    columns: usize,
    used: &[bool],
) -> std::result::Result<Option<StatisticsLocation>, String> {
    if v.is_null() {
        return Ok(None);
    }
    if v["version"].as_u64() != Some(STATISTICS_VERSION) {
        return Ok(None);
    }
    let stream = v["stream"]
        .as_u64()
        .and_then(|s| u32::try_from(s).ok())
        .filter(|&s| (s as usize) >= columns && (s as usize) < used.len() && !used[s as usize])
        .ok_or_else(|| format!("statistics: missing or invalid stream in {v}"))?;
    let offset = v["offset"]
        .as_u64()
        .ok_or_else(|| format!("statistics: missing or invalid offset in {v}"))?;
    Ok(Some(StatisticsLocation { stream, offset }))
}

/// Parses the schema JSON; `streams` is the file's stream count (every column has a stream of
/// its own, numbered as the columns, and a dictionary stream must exist and be no column's).
pub fn from_json(bytes: &[u8], streams: usize) -> Result<ParsedSchema> {
    let bad = |detail: String| Error::corrupt("table schema", 0, detail);
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let fields = doc["fields"].as_array().ok_or_else(|| bad("no fields list".into()))?;
    let mut out = Vec::with_capacity(fields.len());
    let mut layouts = Vec::with_capacity(fields.len());
    let mut used = vec![false; streams];
    for (i, f) in fields.iter().enumerate() {
        let field = parse_field(f, 0).map_err(|e| bad(format!("field {i}: {e}")))?;
        check_supported(&field).map_err(|e| bad(e.to_string()))?;
        let name = field.name().clone();
        let mut layout = ColumnLayout::default();
        // Dictionary columns have a dictionary stream; string, binary and 4- and 8-byte columns
        // may have one, a dictionary their pages share (table layouts 4 and 6).
        let shares = may_share_dictionary(field.data_type()) && !f["dictionary_stream"].is_null();
        if matches!(field.data_type(), DataType::Dictionary(..)) || shares {
            let s = f["dictionary_stream"]
                .as_u64()
                .and_then(|s| u32::try_from(s).ok())
                .filter(|&s| (s as usize) >= fields.len() && (s as usize) < streams && !used[s as usize])
                .ok_or_else(|| bad(format!("field {name:?}: missing or invalid dictionary_stream")))?;
            used[s as usize] = true;
            layout.dictionary_stream = Some(s);
            layout.dictionary_offset = match &f["dictionary_offset"] {
                Value::Null => 0,
                v => v
                    .as_u64()
                    .ok_or_else(|| bad(format!("field {name:?}: invalid dictionary_offset")))?,
            };
        }
        out.push(field);
        layouts.push(layout);
    }
    let metadata = parse_metadata(&doc["metadata"]).map_err(bad)?;
    let user_metadata = parse_metadata(&doc["user_metadata"]).map_err(bad)?;
    let schema = Schema::new(out).with_metadata(metadata);
    let sorted_by = parse_sort_keys(&doc["sorted_by"], &schema).map_err(bad)?;
    let statistics = parse_statistics(&doc["statistics"], fields.len(), &used).map_err(bad)?;
    Ok(ParsedSchema {
        schema: Arc::new(schema),
        layouts,
        user_metadata,
        sorted_by,
        statistics,
    })
}

/// Whether the pages of a top-level column of `dt` may share a dictionary (encoding 8): string
/// and binary columns (table layout 4) and columns of 4- or 8-byte values (table layout 6).
pub(crate) fn may_share_dictionary(dt: &DataType) -> bool {
    is_byte_array(dt) || matches!(fixed_width(dt), Some(4 | 8))
}

/// Whether `dt` is a string or binary type (variable-length values with offsets). Pages of it
/// are compressed with [`TableOptions::string_codec`](crate::TableOptions::string_codec).
pub(crate) fn is_byte_array(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_type_round_trips() {
        let types = vec![
            DataType::Null,
            DataType::Boolean,
            DataType::Int8,
            DataType::UInt64,
            DataType::Float16,
            DataType::Decimal128(38, 10),
            DataType::Date64,
            DataType::Time32(TimeUnit::Millisecond),
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Microsecond, Some("Europe/Paris".into())),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::Duration(TimeUnit::Second),
            DataType::LargeUtf8,
            DataType::FixedSizeBinary(16),
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![
                            Field::new("key", DataType::Utf8, false),
                            Field::new("value", DataType::Int64, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            ),
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
        ];
        let fields: Vec<Field> = types
            .iter()
            .enumerate()
            .map(|(i, t)| Field::new(format!("c{i}"), t.clone(), i % 2 == 0))
            .collect();
        let schema = Schema::new(fields).with_metadata(HashMap::from([("pandas".into(), "{}".into())]));
        let mut layouts = vec![ColumnLayout::default(); types.len()];
        layouts[types.len() - 1].dictionary_stream = Some(types.len() as u32);
        layouts[types.len() - 1].dictionary_offset = 1234;
        let user = HashMap::from([("by".to_string(), "test".to_string())]);
        let bytes = to_json(&schema, &layouts, &user, &[], None);
        let parsed = from_json(&bytes, types.len() + 1).unwrap();
        assert_eq!(*parsed.schema, schema);
        assert_eq!(parsed.layouts, layouts);
        assert_eq!(parsed.user_metadata, user);
    }

    #[test]
    fn defaults_are_left_out_and_read_back_as_defaults() {
        let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        let schema = Schema::new(vec![
            Field::new("a", DataType::Float64, true),
            Field::new("b", DataType::Int32, false),
            Field::new("c", dict, true),
            Field::new(
                "d",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ]);
        let mut layouts = vec![ColumnLayout::default(); 4];
        layouts[2].dictionary_stream = Some(4);
        let bytes = to_json(&schema, &layouts, &HashMap::new(), &[], None);
        let text = String::from_utf8(bytes.clone()).unwrap();
        for absent in [
            "\"nullable\":true",
            "dictionary_offset",
            "\"metadata\"",
            "user_metadata",
        ] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
        assert!(text.contains("\"nullable\":false"), "{text}");
        let parsed = from_json(&bytes, 5).unwrap();
        assert_eq!(*parsed.schema, schema);
        assert_eq!(parsed.layouts, layouts);
        assert!(parsed.user_metadata.is_empty());
        // What writers before wrote, every default spelled out, reads the same.
        let spelled = br#"{"fields":[{"name":"a","type":{"id":"float64"},"nullable":true},
            {"name":"b","type":{"id":"int32"},"nullable":false},
            {"name":"c","type":{"id":"dictionary","key":{"id":"int8"},"value":{"id":"utf8"}},"nullable":true,
             "dictionary_stream":4,"dictionary_offset":0},
            {"name":"d","type":{"id":"list","item":{"name":"item","type":{"id":"utf8"},"nullable":true}},"nullable":true}],
            "metadata":{},"user_metadata":{}}"#;
        let old = from_json(spelled, 5).unwrap();
        assert_eq!(old.schema, parsed.schema);
        assert_eq!(old.layouts, parsed.layouts);
    }

    #[test]
    fn bad_schemas_are_errors() {
        for doc in [
            "",
            "[]",
            r#"{"fields": [{"name": "a", "type": {"id": "int128"}}]}"#,
            // A map's key may not be null, and its entries are a struct of two.
            r#"{"fields": [{"name": "m", "type": {"id": "map", "keys_sorted": false, "entries": {"name": "e", "nullable": false, "type": {"id": "struct", "fields": [{"name": "k", "nullable": true, "type": {"id": "utf8"}}, {"name": "v", "nullable": true, "type": {"id": "int64"}}]}}}}]}"#,
            r#"{"fields": [{"name": "m", "type": {"id": "map", "keys_sorted": false, "entries": {"name": "e", "nullable": false, "type": {"id": "utf8"}}}}]}"#,
            r#"{"fields": [{"name": "a", "type": {"id": "decimal128", "precision": 90, "scale": 1}}]}"#,
            r#"{"fields": [{"name": "a", "type": {"id": "dictionary", "key": {"id": "int8"}, "value": {"id": "utf8"}}}]}"#,
            r#"{"fields": [{"name": "a", "type": {"id": "dictionary", "key": {"id": "int8"}, "value": {"id": "utf8"}}, "dictionary_stream": 0}]}"#,
        ] {
            assert!(from_json(doc.as_bytes(), 2).is_err(), "{doc}");
        }
    }
}
