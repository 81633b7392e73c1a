//! Column-wide dictionaries of dictionary-typed columns (pandas categoricals, Arrow
//! dictionaries): stored once per column, so pages hold only keys. Batches whose dictionaries
//! differ are merged into one, their keys remapped.

use crate::schema::fixed_width;
use arrow_buffer::{bit_util, Buffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::{Error, Result};
use std::collections::HashMap;

pub struct DictState {
    key: DataType,
    value: DataType,
    /// The dictionary every batch so far shared, while no merge was needed.
    current: Option<ArrayData>,
    /// Merged dictionary values (as bytes), once batches disagreed.
    merged: Option<Merged>,
}

struct Merged {
    values: Vec<Vec<u8>>,
    lookup: HashMap<Vec<u8>, u64>,
}

impl DictState {
    pub fn new(key: &DataType, value: &DataType) -> Self {
        DictState {
            key: key.clone(),
            value: value.clone(),
            current: None,
            merged: None,
        }
    }

    /// A column whose dictionary so far is `values` (a table being appended to).
    pub fn with_values(key: &DataType, value: &DataType, values: ArrayData) -> Self {
        DictState {
            current: Some(values),
            ..DictState::new(key, value)
        }
    }

    /// Whether the dictionary differs from the one given to [`with_values`](Self::with_values).
    pub fn grew(&self) -> bool {
        self.merged.is_some()
    }

    /// The keys of a dictionary column's batch, remapped to the column's dictionary.
    pub fn unify(&mut self, column: &ArrayData) -> Result<ArrayData> {
        let dict = &column.child_data()[0];
        let keys = || keys_of(column, &self.key, column.buffers()[0].clone());
        if self.merged.is_none() {
            match &self.current {
                None => {
                    self.current = Some(dict.clone());
                    return keys();
                }
                Some(cur) if cur == dict => return keys(),
                Some(_) => {}
            }
        }
        let merged = match &mut self.merged {
            Some(m) => m,
            None => {
                let cur = self.current.take().expect("a first dictionary");
                let mut m = Merged {
                    values: Vec::with_capacity(cur.len()),
                    lookup: HashMap::new(),
                };
                for j in 0..cur.len() {
                    let v = value_bytes(&cur, j)?;
                    m.lookup.insert(v.clone(), j as u64);
                    m.values.push(v);
                }
                self.merged.insert(m)
            }
        };
        let mut remap = Vec::with_capacity(dict.len());
        for j in 0..dict.len() {
            let v = value_bytes(dict, j)?;
            let next = merged.values.len() as u64;
            let id = *merged.lookup.entry(v.clone()).or_insert(next);
            if id == next {
                merged.values.push(v);
            }
            remap.push(id);
        }
        let (w, signed) = key_layout(&self.key);
        let max_key = if signed {
            (1u64 << (8 * w - 1)) - 1
        } else {
            u64::MAX >> (64 - 8 * w)
        };
        if merged.values.len() as u64 - 1 > max_key {
            return Err(Error::Usage(format!(
                "the merged dictionary has {} values, more than {} keys can index: use wider keys",
                merged.values.len(),
                self.key
            )));
        }
        let nulls = column.nulls().map(|n| n.inner().sliced());
        ArrayDataBuilder::new(self.key.clone())
            .len(column.len())
            .null_bit_buffer(nulls)
            .add_buffer(Buffer::from_vec(out_keys(column, w, &remap, signed)?))
            .build()
            .map_err(|e| Error::Usage(e.to_string()))
    }

    /// The column's dictionary values.
    pub fn finish(self) -> Result<ArrayData> {
        if let Some(m) = self.merged {
            return build_values(&self.value, &m.values);
        }
        Ok(self.current.unwrap_or_else(|| ArrayData::new_empty(&self.value)))
    }
}

fn out_keys(column: &ArrayData, w: usize, remap: &[u64], signed: bool) -> Result<Vec<u8>> {
    let src = &column.buffers()[0].as_slice()[column.offset() * w..(column.offset() + column.len()) * w];
    let mut out = vec![0u8; column.len() * w];
    for (i, (s, o)) in src.chunks_exact(w).zip(out.chunks_exact_mut(w)).enumerate() {
        if !column.is_valid(i) {
            continue;
        }
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(s);
        let k = if signed {
            let shift = 64 - 8 * w;
            ((u64::from_le_bytes(b) << shift) as i64 >> shift) as u64
        } else {
            u64::from_le_bytes(b)
        };
        let id = *remap
            .get(k as usize)
            .ok_or_else(|| Error::Usage("a dictionary key is past its dictionary".into()))?;
        o.copy_from_slice(&id.to_le_bytes()[..w]);
    }
    Ok(out)
}

fn key_layout(key: &DataType) -> (usize, bool) {
    let w = fixed_width(key).unwrap_or(8);
    (
        w,
        matches!(
            key,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
        ),
    )
}

/// The keys of a dictionary array as an array of the key type.
fn keys_of(column: &ArrayData, key: &DataType, keys: Buffer) -> Result<ArrayData> {
    ArrayDataBuilder::new(key.clone())
        .len(column.len())
        .offset(column.offset())
        .nulls(column.nulls().cloned())
        .add_buffer(keys)
        .build()
        .map_err(|e| Error::Usage(e.to_string()))
}

fn value_bytes(values: &ArrayData, j: usize) -> Result<Vec<u8>> {
    if !values.is_valid(j) {
        return Err(Error::Usage(
            "dictionaries holding null values cannot be merged across batches".into(),
        ));
    }
    let i = values.offset() + j;
    let buf = |k: usize| values.buffers()[k].as_slice();
    Ok(match values.data_type() {
        DataType::Null => Vec::new(),
        DataType::Boolean => vec![bit_util::get_bit(buf(0), i) as u8],
        DataType::Utf8 | DataType::Binary => {
            let o = |k: usize| i32::from_le_bytes(buf(0)[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
            buf(1)[o(i)..o(i + 1)].to_vec()
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            let o = |k: usize| i64::from_le_bytes(buf(0)[8 * k..8 * k + 8].try_into().expect("8 bytes")) as usize;
            buf(1)[o(i)..o(i + 1)].to_vec()
        }
        DataType::FixedSizeBinary(w) => {
            let w = *w as usize;
            buf(0)[i * w..(i + 1) * w].to_vec()
        }
        dt => {
            let w = fixed_width(dt).ok_or_else(|| Error::Usage(format!("dictionary values of type {dt}")))?;
            buf(0)[i * w..(i + 1) * w].to_vec()
        }
    })
}

fn build_values(dt: &DataType, values: &[Vec<u8>]) -> Result<ArrayData> {
    let n = values.len();
    let b = ArrayDataBuilder::new(dt.clone()).len(n);
    let b = match dt {
        DataType::Null => b,
        DataType::Boolean => {
            let mut bits = vec![0u8; bit_util::ceil(n, 8)];
            for (i, v) in values.iter().enumerate() {
                if v[0] != 0 {
                    bit_util::set_bit(&mut bits, i);
                }
            }
            b.add_buffer(Buffer::from_vec(bits))
        }
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
            let mut offsets = Vec::new();
            let mut data = Vec::new();
            let mut push = |at: usize| {
                if large {
                    offsets.extend_from_slice(&(at as i64).to_le_bytes());
                } else {
                    offsets.extend_from_slice(&(at as i32).to_le_bytes());
                }
            };
            push(0);
            for v in values {
                data.extend_from_slice(v);
                push(data.len());
            }
            if !large && data.len() > i32::MAX as usize {
                return Err(Error::Usage("the merged dictionary's strings exceed 2 GiB".into()));
            }
            b.add_buffer(Buffer::from_vec(offsets))
                .add_buffer(Buffer::from_vec(data))
        }
        _ => b.add_buffer(Buffer::from_vec(values.concat())),
    };
    b.build().map_err(|e| Error::Usage(e.to_string()))
}
