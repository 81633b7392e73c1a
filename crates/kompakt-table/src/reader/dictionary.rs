//! Dictionaries: a dictionary column's values and the dictionary a string or number column's
//! pages share, read once and kept; dictionary arrays built from keys checked to be in range.

use super::TableReader;
use crate::budget::Budget;
use crate::page::{decode_page_rows_within, ColumnDict};
use crate::string_layout::StringLayout;
use arrow_array::{make_array, ArrayRef};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::{Error, Result};
use std::sync::Arc;

impl TableReader {
    /// The dictionary the pages of column `c` share, if it has one (read once, then
    /// cached).
    pub(super) fn column_dict(&self, c: usize, budget: &Budget) -> Result<Option<Arc<ColumnDict>>> {
        if self.parsed.layouts[c].dictionary_stream.is_none()
            || matches!(self.parsed.schema.field(c).data_type(), DataType::Dictionary(..))
        {
            return Ok(None);
        }
        if let Some(d) = self.column_dicts.lock().expect("dictionary cache").get(&c) {
            return Ok(Some(d.clone()));
        }
        // Not kept as an array too: the pages gather from this form only.
        let dict = Arc::new(ColumnDict::new(&self.load_dictionary(c, budget)?)?);
        self.column_dicts
            .lock()
            .expect("dictionary cache")
            .insert(c, dict.clone());
        Ok(Some(dict))
    }

    /// The dictionary of column `c`, a dictionary column or a column whose pages share
    /// one (read once, then cached).
    pub(crate) fn dictionary(&self, c: usize) -> Result<ArrayData> {
        self.dictionary_within(c, &self.budget())
    }

    /// [`dictionary`](Self::dictionary), a load counted against `budget`.
    pub(super) fn dictionary_within(&self, c: usize, budget: &Budget) -> Result<ArrayData> {
        if let Some(d) = self.dictionaries.lock().expect("dictionary cache").get(&c) {
            return Ok(d.clone());
        }
        let shared = self
            .shared_dictionaries
            .lock()
            .expect("dictionary cache")
            .get(&c)
            .cloned();
        let values = match shared {
            Some(values) => values,
            None => {
                // The bytes are those an earlier reader checked (the index is only shared
                // while the file is unchanged): a shared dictionary is not read again.
                let values = self.load_dictionary(c, budget)?;
                let size = values.get_array_memory_size();
                let mut shared = self.shared_dictionaries.lock().expect("dictionary cache");
                let held: usize = shared.values().map(ArrayData::get_array_memory_size).sum();
                if size <= super::open::SHARED_DICTIONARY_MAX && held + size <= super::open::SHARED_DICTIONARIES_TOTAL {
                    shared.insert(c, values.clone());
                }
                values
            }
        };
        self.dictionaries
            .lock()
            .expect("dictionary cache")
            .insert(c, values.clone());
        Ok(values)
    }

    /// Reads and decodes the dictionary of column `c` (uncached).
    fn load_dictionary(&self, c: usize, budget: &Budget) -> Result<ArrayData> {
        let layout = self.parsed.layouts[c];
        let stream = layout.dictionary_stream.expect("checked when the schema was parsed");
        let len = self.index.stream_len(stream)?;
        if layout.dictionary_offset > len {
            return Err(Error::corrupt("table dictionary", 0, "starts past its stream"));
        }
        let value = match self.parsed.schema.field(c).data_type() {
            DataType::Dictionary(_, value) => value.as_ref(),
            shared => shared,
        };
        budget.check(len - layout.dictionary_offset, "a dictionary's bytes")?;
        self.with_raw(stream, layout.dictionary_offset, len, |raw| {
            let bad = || Error::corrupt("table dictionary", 0, "shorter than its 8-byte count");
            let count = u64::from_le_bytes(raw.get(..8).ok_or_else(bad)?.try_into().expect("8 bytes"));
            // Every value takes at least one bit, so a count beyond the bytes present is a lie.
            if count > 8 * raw.len() as u64 + 8 && *value != DataType::Null {
                return Err(Error::corrupt("table dictionary", 0, format!("claims {count} values")));
            }
            let count = usize::try_from(count).map_err(|_| bad())?;
            let strings = StringLayout::AsStored;
            decode_page_rows_within(value, strings, count, &raw[8..], 0..count, None, budget)
        })
    }
}

/// A dictionary array of `keys` (an integer array) into `values`, every valid key checked to
/// be in range. (Building it as `ArrayData` checks the same, at several times the cost.)
pub(super) fn dictionary_array(keys: ArrayData, values: ArrayData) -> std::result::Result<ArrayRef, String> {
    use arrow_array::types::*;
    use arrow_array::{DictionaryArray, PrimitiveArray};
    macro_rules! dict {
        ($($variant:ident => $t:ty),*) => {
            match keys.data_type() {
                $(DataType::$variant => {
                    let keys = PrimitiveArray::<$t>::from(keys);
                    let values = make_array(values);
                    // `try_new` looks at the keys one by one, with a branch each (7 % of reading
                    // the fst table); `keys_in_range` is a loop the compiler vectorizes.
                    if keys_in_range(keys.values(), values.len()) {
                        #[allow(unsafe_code)]
                        // SAFETY: `new_unchecked` is sound when `try_new` would succeed: the keys
                        // are a `PrimitiveArray` of the key type (so their data type is right),
                        // and every key, valid or not, indexes `values`.
                        // `dictionary_keys_checked_like_try_new` compares both paths.
                        let d = unsafe { DictionaryArray::<$t>::new_unchecked(keys, values) };
                        Ok(Arc::new(d) as ArrayRef)
                    } else {
                        DictionaryArray::<$t>::try_new(keys, values)
                            .map(|d| Arc::new(d) as ArrayRef)
                            .map_err(|e| e.to_string())
                    }
                })*
                other => Err(format!("{other} is not a dictionary key type")),
            }
        };
    }
    dict!(Int8 => Int8Type, Int16 => Int16Type, Int32 => Int32Type, Int64 => Int64Type,
          UInt8 => UInt8Type, UInt16 => UInt16Type, UInt32 => UInt32Type, UInt64 => UInt64Type)
}

/// Whether every key (null slots' too) indexes `len` values: the smallest and the largest key
/// are, taken with min and max, which the compiler vectorizes. A negative key becomes a huge
/// `usize` and fails.
fn keys_in_range<T: arrow_buffer::ArrowNativeType + Ord>(keys: &[T], len: usize) -> bool {
    let Some(&first) = keys.first() else {
        return true;
    };
    let (lo, hi) = keys.iter().fold((first, first), |(lo, hi), &k| (lo.min(k), hi.max(k)));
    lo.as_usize() < len && hi.as_usize() < len
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int8Array, StringArray, UInt16Array};
    use arrow_buffer::Buffer;

    #[test]
    fn dictionary_keys_checked_like_try_new() {
        let values = StringArray::from(vec!["a", "b", "c"]).to_data();
        let check = |keys: ArrayData, ok: bool| {
            let ours = dictionary_array(keys.clone(), values.clone());
            let theirs = arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::try_new(
                arrow_array::PrimitiveArray::from(keys),
                make_array(values.clone()),
            );
            assert_eq!(ours.is_ok(), ok);
            assert_eq!(theirs.is_ok(), ok);
            if let Ok(d) = ours {
                d.to_data().validate_full().unwrap();
                assert_eq!(d.as_ref(), &theirs.unwrap() as &dyn Array);
            }
        };
        check(Int8Array::from(vec![0, 2, 1, 2]).to_data(), true);
        check(Int8Array::from(Vec::<i8>::new()).to_data(), true);
        check(Int8Array::from(vec![0, 3]).to_data(), false);
        check(Int8Array::from(vec![0, -1]).to_data(), false);
        check(Int8Array::from(vec![i8::MIN, 0]).to_data(), false);
        // A null slot may hold any key: the slow path accepts it, as try_new does.
        check(Int8Array::from(vec![Some(1), None]).to_data(), true);
        let null_slot_out_of_range = Int8Array::from(vec![Some(1), None])
            .to_data()
            .into_builder()
            .buffers(vec![Buffer::from_vec(vec![1i8, 9])])
            .build()
            .unwrap();
        check(null_slot_out_of_range, true);
        // Wider keys: out of range only above the dictionary.
        let wide = |k: Vec<u16>| dictionary_array(UInt16Array::from(k).to_data(), values.clone()).is_ok();
        assert!(wide(vec![2, 0, 1]));
        assert!(!wide(vec![2, 3]));
        assert!(!wide(vec![u16::MAX]));
    }
}
