//! Whole-column reads: each fixed-width, boolean or dictionary column decoded in parallel into
//! one buffer and built as one array; other columns as one array per row group.

use super::dictionary::dictionary_array;
use super::tasks::map_tasks;
use super::{leaf_type, TableReader};
use crate::budget::Budget;
use crate::page::WindowBits;
use crate::string_layout::StringLayout;
use crate::threads::with_threads;
use crate::zeroed::ZeroedBuffer;
use arrow_array::{make_array, ArrayRef};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::Buffer;
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::{DataType, SchemaRef};
use kompakt::{Error, Result};
use std::ops::Range;

/// Row groups `groups` of column `c` (the `k`th asked for), read into one array: into
/// `values` for fixed-width and boolean columns.
struct Part {
    k: usize,
    c: usize,
    groups: Range<u64>,
    values: Option<ZeroedBuffer>,
    /// Bytes of `values`, for the parts that have them.
    len: Option<usize>,
}

/// One decoded piece of a whole-column read.
enum Piece {
    /// A fixed-width or boolean window, its values already in the column's buffer.
    Bits(WindowBits),
    /// A page of another type, as its own array.
    Array(ArrayData),
}

/// Sets bits `offset..offset + len` of `bitmap`.
fn set_ones(bitmap: &mut [u8], offset: usize, len: usize) {
    let end = offset + len;
    let mut i = offset;
    while i < end && !i.is_multiple_of(8) {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
    let full = (end - i) / 8;
    bitmap[i / 8..i / 8 + full].fill(0xFF);
    i += full * 8;
    while i < end {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
}

impl TableReader {
    /// Reads rows `rows` of the columns `columns` (positions; `None`: all) column by column:
    /// fixed-width, boolean and dictionary columns as one array each, decoded in parallel
    /// straight into that array's buffer; other types as one array per row group. This is the
    /// fast way to read a table whole (no per-group arrays to concatenate afterwards).
    pub fn read_columns(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        self.read_columns_as(columns, rows, threads, StringLayout::AsStored)
    }

    /// [`read_columns`](Self::read_columns), with string and binary columns handed over as
    /// `strings` says.
    pub fn read_columns_as(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
        strings: StringLayout,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        let (columns, schema) = self.request(columns, &rows)?;
        let schema = strings.schema(schema);
        if rows.is_empty() || columns.is_empty() {
            let (_, batches) = self.read(Some(&columns), rows, threads)?;
            let cols = (0..columns.len())
                .map(|i| {
                    let dt = schema.field(i).data_type();
                    batches
                        .iter()
                        .map(|b| match b.column(i) {
                            // Empty: only its type changes.
                            a if a.data_type() != dt => arrow_array::new_empty_array(dt),
                            a => a.clone(),
                        })
                        .collect()
                })
                .collect();
            return Ok((schema, cols));
        }
        let m = usize::try_from(rows.end - rows.start).map_err(|_| Error::OutOfRange {
            detail: "more rows than this machine can address".into(),
        })?;
        let groups = self.groups_of(&rows);
        self.prefetch_pages(columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g))));
        let budget = self.budget();
        // The pool is entered once for the whole read; the steps inside run on it directly (a
        // hand-off per step cost about 25 us each on the benchmark VM).
        match self.threads_for(&columns, &groups, threads) {
            1 => self.decode_columns(&columns, schema, &rows, m, groups, 1, strings, &budget),
            threads => with_threads(threads, || {
                self.decode_columns(&columns, schema, &rows, m, groups, 0, strings, &budget)
            })?,
        }
    }

    /// The body of [`read_columns`](Self::read_columns) once the request is checked: its steps
    /// run on `threads` threads (1: the calling thread; 0: the pool the caller runs in).
    #[allow(clippy::too_many_arguments)]
    fn decode_columns(
        &self,
        columns: &[usize],
        schema: SchemaRef,
        rows: &Range<u64>,
        m: usize,
        groups: Range<u64>,
        threads: usize,
        strings: StringLayout,
        budget: &Budget,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        let window = |g: u64| self.window(g, rows);
        // A part is a run of row groups of one column that becomes one array. A fixed-width,
        // boolean or dictionary column is one part with one zeroed buffer, cut into a disjoint
        // slice per group; other columns are a part per group.
        let mut parts: Vec<Part> = Vec::new();
        for (k, &c) in columns.iter().enumerate() {
            let field = self.parsed.schema.field(c);
            let leaf = leaf_type(field.data_type());
            let width = match (leaf, crate::schema::fixed_width(leaf)) {
                (DataType::Boolean, _) => 0,
                (_, Some(w)) => w,
                (_, None) => {
                    parts.extend(groups.clone().map(|g| Part {
                        k,
                        c,
                        groups: g..g + 1,
                        values: None,
                        len: None,
                    }));
                    continue;
                }
            };
            let len = width.checked_mul(m).ok_or_else(|| Error::OutOfRange {
                detail: format!("{m} rows of {width} bytes"),
            })?;
            budget.charge(len as u64, &format!("column {:?}", field.name()))?;
            parts.push(Part {
                k,
                c,
                groups: groups.clone(),
                values: None,
                len: Some(len),
            });
        }
        // Zeroing a reused allocation is a pass over memory: one per thread, not all on one.
        map_tasks(threads, parts.iter_mut().collect(), |p: &mut Part| {
            if let Some(len) = p.len {
                let name = self.parsed.schema.field(p.c).name();
                p.values = Some(ZeroedBuffer::new(len, &format!("column {name:?}"))?);
            }
            Ok::<_, Error>(())
        })?
        .into_iter()
        .collect::<Result<()>>()?;
        let mut tasks: Vec<(usize, u64, Option<&mut [u8]>)> = Vec::new();
        for part in parts.iter_mut() {
            let c = part.c;
            match &mut part.values {
                Some(values) => {
                    let w = crate::schema::fixed_width(leaf_type(self.parsed.schema.field(c).data_type())).unwrap_or(0);
                    let mut rest = values.as_mut_slice();
                    for g in part.groups.clone() {
                        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(w * window(g).len());
                        rest = tail;
                        tasks.push((c, g, Some(dst)));
                    }
                }
                None => tasks.extend(part.groups.clone().map(|g| (c, g, None))),
            }
        }
        let pieces: Vec<Result<Piece>> = map_tasks(threads, tasks, |(c, g, dst)| match dst {
            Some(dst) => self.read_page_into(c, g, window(g), dst, budget).map(Piece::Bits),
            None => self.read_page_as(c, g, window(g), strings, budget).map(Piece::Array),
        })?;
        let mut pieces = pieces.into_iter();
        let parts: Vec<(Part, Vec<Result<Piece>>)> = parts
            .into_iter()
            .map(|p| {
                let n = (p.groups.end - p.groups.start) as usize;
                (p, pieces.by_ref().take(n).collect())
            })
            .collect();
        // Building an array validates it (a dictionary's keys against its values): in parallel.
        let arrays: Vec<Result<(usize, ArrayRef)>> = map_tasks(threads, parts, |(part, pieces)| {
            let pieces: Vec<Piece> = pieces.into_iter().collect::<Result<_>>()?;
            let array = match part.values {
                Some(values) => {
                    let lens: Vec<usize> = part.groups.clone().map(|g| window(g).len()).collect();
                    self.assemble(part.c, &lens, values, pieces, budget)?
                }
                None => match pieces.into_iter().next() {
                    Some(Piece::Array(a)) => make_array(a),
                    _ => unreachable!("a page of its own decodes to one array"),
                },
            };
            Ok((part.k, array))
        })?;
        let mut out: Vec<Vec<ArrayRef>> = vec![Vec::new(); columns.len()];
        for a in arrays {
            let (k, array) = a?;
            out[k].push(array);
        }
        Ok((schema, out))
    }

    /// Builds whole column `c` of `m` rows from its values and its pages' bitmaps.
    fn assemble(
        &self,
        c: usize,
        lens: &[usize],
        values: ZeroedBuffer,
        pieces: Vec<Piece>,
        budget: &Budget,
    ) -> Result<ArrayRef> {
        let m: usize = lens.iter().sum();
        let field = self.parsed.schema.field(c);
        let bits: Vec<WindowBits> = pieces
            .into_iter()
            .map(|p| match p {
                Piece::Bits(b) => b,
                Piece::Array(_) => unreachable!("whole columns decode into buffers"),
            })
            .collect();
        let stitch = |pick: &dyn Fn(&WindowBits) -> Option<&Buffer>, ones: bool| -> Result<Buffer> {
            let len = arrow_buffer::bit_util::ceil(m, 8);
            budget.charge(len as u64, "a column's bitmap")?;
            let mut bitmap = ZeroedBuffer::new(len, "a column's bitmap")?;
            let dst = bitmap.as_mut_slice();
            let mut at = 0;
            for (b, &len) in bits.iter().zip(lens) {
                match pick(b) {
                    Some(src) => {
                        set_bits(dst, src.as_slice(), at, 0, len);
                    }
                    None if ones => set_ones(dst, at, len),
                    None => {}
                }
                at += len;
            }
            Ok(bitmap.into_buffer())
        };
        let validity = if bits.iter().any(|b| b.validity.is_some()) {
            Some(stitch(&|b| b.validity.as_ref(), true)?)
        } else {
            None
        };
        let leaf = leaf_type(field.data_type());
        let values = if *leaf == DataType::Boolean {
            stitch(&|b| b.values.as_ref(), false)?
        } else {
            values.into_buffer()
        };
        let invalid = |e: String| {
            Error::corrupt(
                "table column",
                0,
                format!("column {:?}: invalid values: {e}", field.name()),
            )
        };
        let data = ArrayDataBuilder::new(leaf.clone())
            .len(m)
            .null_bit_buffer(validity)
            .add_buffer(values)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        match field.data_type() {
            DataType::Dictionary(..) => dictionary_array(data, self.dictionary_within(c, budget)?).map_err(invalid),
            _ => Ok(make_array(data)),
        }
    }
}
