//! The dictionary that the pages of a column share (encoding
//! [`COLUMN_DICT`](super::encoding::COLUMN_DICT)): string and binary columns (table layout 4)
//! and columns of 4- and 8-byte values (table layout 6), in the form page decoding gathers from.

use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::{Error, Result};

/// Bytes of slack after the values, so that copies of whole 16-byte chunks stay in bounds.
pub(super) const SLACK: usize = 16;

/// A column's shared dictionary, decoded once per open table and used by every page coded
/// against it.
#[derive(Debug)]
pub struct ColumnDict {
    /// The values of a fixed-width column, `width` bytes each (little-endian, back to back);
    /// `None` for strings.
    pub(super) fixed: Option<FixedValues>,
    /// `d + 1` offsets of the values in `bytes` (strings; `[0]` for fixed-width values).
    pub(super) starts: Vec<usize>,
    /// The values back to back, then [`SLACK`] zero bytes.
    pub(super) bytes: Buffer,
    /// Each value as a 16-byte view into `bytes` (buffer 0), for pages read as views; `None`
    /// when the values are too large for views' 32-bit offsets.
    pub(super) views: Option<Vec<u128>>,
}

impl ColumnDict {
    /// The dictionary holding `values`: a string or binary array (any offset width), or an
    /// array of 4- or 8-byte values, without nulls, already validated (as every decoded page
    /// is).
    pub fn new(values: &ArrayData) -> Result<Self> {
        let corrupt = |detail: &str| Error::corrupt("table dictionary", 0, detail);
        if values.null_count() > 0 {
            return Err(corrupt("a column dictionary holds nulls"));
        }
        let d = values.len();
        let (starts, data) = match values.data_type() {
            DataType::Utf8 | DataType::Binary => offsets::<4>(values),
            DataType::LargeUtf8 | DataType::LargeBinary => offsets::<8>(values),
            dt => match crate::schema::fixed_width(dt) {
                Some(width @ (4 | 8)) => {
                    let raw = &values.buffers()[0].as_slice()[values.offset() * width..(values.offset() + d) * width];
                    let mut bytes = crate::zeroed::try_vec(0, 0u8, "a column dictionary")?;
                    bytes.try_reserve_exact(raw.len()).map_err(|_| no_memory(raw.len()))?;
                    bytes.extend_from_slice(raw);
                    return Ok(ColumnDict {
                        fixed: Some(FixedValues { width, bytes }),
                        starts: vec![0],
                        bytes: Buffer::from_vec(Vec::<u8>::new()),
                        views: None,
                    });
                }
                _ => return Err(Error::Internal(format!("a column dictionary of {dt}"))),
            },
        };
        // Allocated fallibly: a dictionary too large for memory is an error, not an abort.
        let mut padded = crate::zeroed::try_vec(0, 0u8, "a column dictionary")?;
        padded
            .try_reserve_exact(data.len() + SLACK)
            .map_err(|_| no_memory(data.len() + SLACK))?;
        padded.extend_from_slice(data);
        padded.resize(data.len() + SLACK, 0);
        let bytes = Buffer::from_vec(padded);
        let views =
            match data.len() <= i32::MAX as usize {
                true => {
                    let mut views = crate::zeroed::try_vec(0, 0u128, "a column dictionary")?;
                    views.try_reserve_exact(d).map_err(|_| no_memory(d * 16))?;
                    views.extend((0..d).map(|i| {
                        arrow_array::builder::make_view(&bytes[starts[i]..starts[i + 1]], 0, starts[i] as u32)
                    }));
                    Some(views)
                }
                false => None,
            };
        Ok(ColumnDict {
            fixed: None,
            starts,
            bytes,
            views,
        })
    }

    /// Values in the dictionary.
    pub fn len(&self) -> usize {
        match &self.fixed {
            Some(f) => f.bytes.len() / f.width,
            None => self.starts.len() - 1,
        }
    }

    /// The values of a dictionary of `W`-byte values; `None` for strings or values of another
    /// width (a page that does not match its column: corrupt).
    pub(super) fn fixed<const W: usize>(&self) -> Option<&[[u8; W]]> {
        self.fixed
            .as_ref()
            .filter(|f| f.width == W)
            .map(|f| f.bytes.as_chunks::<W>().0)
    }

    /// Whether the dictionary holds strings (or binary values).
    pub(super) fn holds_strings(&self) -> bool {
        self.fixed.is_none()
    }

    /// Whether the dictionary has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The values of a fixed-width column's dictionary.
#[derive(Debug)]
pub(super) struct FixedValues {
    width: usize,
    bytes: Vec<u8>,
}

fn no_memory(len: usize) -> Error {
    Error::OutOfRange {
        detail: format!("a column dictionary needs {len} bytes, more than this machine can allocate"),
    }
}

/// Offsets of the values of a string array with `OW`-byte offsets, rebased to start at 0, and
/// the bytes they cover.
fn offsets<const OW: usize>(values: &ArrayData) -> (Vec<usize>, &[u8]) {
    let raw = &values.buffers()[0].as_slice()[values.offset() * OW..(values.offset() + values.len() + 1) * OW];
    let (words, _) = raw.as_chunks::<OW>();
    let first = super::load::<OW>(&words[0]) as usize;
    let last = super::load::<OW>(&words[values.len()]) as usize;
    let starts = words.iter().map(|w| super::load::<OW>(w) as usize - first).collect();
    (starts, &values.buffers()[1].as_slice()[first..last])
}
