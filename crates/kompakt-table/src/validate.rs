//! Checking columns that came from outside Rust (Arrow's C data interface) before any of their
//! values is used: offsets, UTF-8, dictionary keys, on every core.

use crate::threads::with_threads;
use arrow_data::ArrayData;
use kompakt::{Error, Result};
use rayon::prelude::*;

/// Rows checked as one piece of work: enough that a piece costs far more than its slice.
const ROWS_PER_PIECE: usize = 1 << 20;

/// Fully validates each of `columns` ([`ArrayData::validate_full`]) on `threads` threads (0:
/// all cores), large columns in row ranges so that even one column uses every core. The error
/// names the column (from `names`) and what is wrong with it.
pub fn validate_columns(columns: &[ArrayData], names: &[&str], threads: usize) -> Result<()> {
    let name = |c: usize| names.get(c).copied().unwrap_or("?");
    let invalid = |c: usize, e: arrow_schema::ArrowError| {
        Error::Usage(format!("column {:?} is not valid Arrow data: {e}", name(c)))
    };
    // Buffer sizes and the like of the whole column first: a range is sliced from it.
    for (c, col) in columns.iter().enumerate() {
        col.validate().map_err(|e| invalid(c, e))?;
    }
    let pieces: Vec<(usize, usize, usize)> = columns
        .iter()
        .enumerate()
        .flat_map(|(c, col)| {
            let len = col.len();
            (0..len.div_ceil(ROWS_PER_PIECE).max(1)).map(move |p| {
                let start = p * ROWS_PER_PIECE;
                (c, start, ROWS_PER_PIECE.min(len - start.min(len)))
            })
        })
        .collect();
    with_threads(threads, || {
        pieces.par_iter().try_for_each(|&(c, start, len)| {
            let col = &columns[c];
            let piece = if start == 0 && len == col.len() {
                col.clone()
            } else {
                col.slice(start, len)
            };
            piece.validate_full().map_err(|e| invalid(c, e))
        })
    })?
}

#[cfg(test)]
mod tests {
    // Columns with bad values are built unchecked, which is unsafe: the C API's tests
    // (kompakt-c, table/tests.rs) write them through kpk_table_write.
    use super::*;
    use arrow_array::{Array, DictionaryArray, Int32Array, StringArray};

    #[test]
    fn good_columns_of_several_pieces_empty_ones_and_none_pass() {
        let n = 2 * ROWS_PER_PIECE + 17;
        let keys = Int32Array::from_iter_values((0..n).map(|i| (i % 3) as i32));
        let dict = DictionaryArray::new(keys, std::sync::Arc::new(StringArray::from(vec!["a", "b", "c"])));
        let plain = Int32Array::from_iter_values(0..n as i32).into_data();
        let empty = Int32Array::from(Vec::<i32>::new()).into_data();
        for threads in [0, 1, 2] {
            validate_columns(
                &[plain.clone(), dict.to_data(), empty.clone()],
                &["x", "f", "e"],
                threads,
            )
            .unwrap();
        }
        validate_columns(&[], &[], 0).unwrap();
    }
}
