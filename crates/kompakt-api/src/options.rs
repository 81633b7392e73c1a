//! Options as users give them, validated once for every front end.
//!
//! Each function takes the plainest value a front end can hand over (an `i64` from Python, R,
//! C or a command-line flag, a `&str` for a name) and returns the format's type, or an
//! [`Error::InvalidOption`] whose message names the valid values. Front ends add nothing to
//! these messages but the file they concern.

use kompakt::codec::DICTIONARY_CODEC;
use kompakt::stream::{MAX_BLOCK_SIZE, MAX_THREADS, MIN_BLOCK_SIZE};
use kompakt::{CodecSpec, Error, FilterSpec, Result, WriteOptions};
pub use kompakt_fs::{Durability, SYNC_ENV, SYNC_VALUES};

/// `threads`: 0 means all cores; at most [`MAX_THREADS`] (256), for every operation.
pub fn threads(requested: i64) -> Result<usize> {
    usize::try_from(requested)
        .ok()
        .filter(|&t| t <= MAX_THREADS)
        .ok_or_else(|| {
            Error::invalid(
                "threads",
                requested.to_string(),
                format!("0 (all cores) to {MAX_THREADS}"),
            )
        })
}

/// `typesize`: the element size of typed data, 1-255 bytes (8 for float64).
pub fn typesize(typesize: i64) -> Result<u8> {
    u8::try_from(typesize)
        .ok()
        .filter(|&t| t >= 1)
        .ok_or_else(|| Error::invalid("typesize", typesize.to_string(), "an element size of 1-255 bytes"))
}

/// `block_size`: raw bytes per block, 64 KiB to 64 MiB.
pub fn block_size(block_size: i64) -> Result<usize> {
    usize::try_from(block_size)
        .ok()
        .filter(|b| (MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(b))
        .ok_or_else(|| {
            Error::invalid(
                "block size",
                block_size.to_string(),
                "65536 (64 KiB) to 67108864 (64 MiB) bytes",
            )
        })
}

/// `filter`: `none`, `shuffle`, `delta` or `auto`.
pub fn filter(filter: &str) -> Result<FilterSpec> {
    filter.parse()
}

/// `rows_per_group` of a table: 1 to 16777216 rows.
pub fn rows_per_group(rows: i64) -> Result<u32> {
    let max = kompakt_table::meta::MAX_ROWS_PER_GROUP;
    u32::try_from(rows)
        .ok()
        .filter(|&r| (1..=max).contains(&r))
        .ok_or_else(|| Error::invalid("rows per group", rows.to_string(), format!("1..={max}")))
}

/// `codec` and `level` ([`CodecSpec::from_options`]: one meaning for both); with a zstd
/// dictionary and neither given, the dictionary's codec, zstd:3.
pub fn codec(codec: Option<&str>, level: Option<i64>, dictionary: bool) -> Result<CodecSpec> {
    match (codec, level) {
        (None, None) if dictionary => CodecSpec::parse(DICTIONARY_CODEC),
        _ => CodecSpec::from_options(codec, level),
    }
}

/// `sync`: `"always"` or `"none"` ([`Durability`]); not given, the process's default
/// ([`SYNC_ENV`], else `"none"`), whose invalid value is reported here, naming the variable.
pub fn sync(sync: Option<&str>) -> Result<Durability> {
    match sync {
        Some(text) => Durability::parse(text).ok_or_else(|| Error::invalid("sync", text, SYNC_VALUES)),
        None => Durability::from_env().map_err(|text| {
            Error::invalid(
                "sync",
                format!("{text:?} (from the environment variable {SYNC_ENV})"),
                SYNC_VALUES,
            )
        }),
    }
}

/// The options of a write as a front end receives them; `None` is "not given" (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteArgs<'a> {
    /// A codec spec or name (`"zstd:3"`, `"lz4"`, `"60"`).
    pub codec: Option<&'a str>,
    /// A unified level 0-100, or with a bare codec name that codec's level.
    pub level: Option<i64>,
    /// Threads (0: all cores).
    pub threads: Option<i64>,
    /// Element size in bytes.
    pub typesize: Option<i64>,
    /// `none`, `shuffle`, `delta`, `auto`.
    pub filter: Option<&'a str>,
    /// Raw bytes per block.
    pub block_size: Option<i64>,
    /// Whether the data is compressed with a zstd dictionary (which makes zstd:3 the default).
    pub dictionary: bool,
}

impl WriteArgs<'_> {
    /// The format's options, every one checked, or the first error (in the order of the
    /// fields).
    ///
    /// Small single-stream files are written compact (format 3.0): every front end reads them,
    /// and only the JVM's shuffle streams, read several in a row, must not be (its writer
    /// turns it off).
    pub fn build(&self) -> Result<WriteOptions> {
        let mut opts = WriteOptions::default()
            .codec(codec(self.codec, self.level, self.dictionary)?)
            .compact(true);
        if let Some(t) = self.threads {
            opts = opts.threads(threads(t)?);
        }
        if let Some(t) = self.typesize {
            opts = opts.typesize(typesize(t)?);
        }
        if let Some(f) = self.filter {
            opts = opts.filter(filter(f)?);
        }
        if let Some(b) = self.block_size {
            opts = opts.block_size(block_size(b)?);
        }
        opts.validate()?;
        if self.dictionary {
            kompakt::codec::Dictionary::check_codec(&opts.stream.codec)?;
        }
        Ok(opts)
    }
}

/// The options of a table write as a front end receives them; `None` (or empty) is "not
/// given": the table's own defaults (per-column codecs, 16384 rows per group, all cores).
#[derive(Debug, Clone, Default)]
pub struct TableArgs<'a> {
    /// A codec spec or name for every page, strings included.
    pub codec: Option<&'a str>,
    /// A unified level 0-100, or with a bare codec name that codec's level.
    pub level: Option<i64>,
    /// The codec of plain string and binary pages (a spec such as `"zstd:2"`).
    pub string_codec: Option<&'a str>,
    /// Encoding threads (0: all cores).
    pub threads: Option<i64>,
    /// Rows per row group.
    pub rows_per_group: Option<i64>,
    /// The columns the rows are sorted by, most significant first (checked against the rows
    /// by the writer).
    pub sorted_by: Vec<kompakt_table::SortKey>,
    /// User metadata stored with the table.
    pub metadata: std::collections::HashMap<String, String>,
    /// `"always"` or `"none"` ([`sync`]).
    pub sync: Option<&'a str>,
}

impl TableArgs<'_> {
    /// The table's options, every one checked, or the first error (in the order of the fields).
    pub fn build(self) -> Result<kompakt_table::TableOptions> {
        let mut out = kompakt_table::TableOptions::default();
        if self.codec.is_some() || self.level.is_some() {
            // A codec the user names is used for every page, strings included.
            out = out.with_codec(codec(self.codec, self.level, false)?);
        }
        if let Some(spec) = self.string_codec {
            out.string_codec = Some(codec(Some(spec), None, false)?);
        }
        if let Some(t) = self.threads {
            out.threads = threads(t)?;
        }
        if let Some(r) = self.rows_per_group {
            out.rows_per_group = rows_per_group(r)?;
        }
        if let Some(empty) = self.sorted_by.iter().find(|k| k.column.is_empty()) {
            return Err(Error::invalid(
                "sorted by",
                format!("{empty:?}"),
                "the names of the table's columns",
            ));
        }
        out.sorted_by = self.sorted_by;
        out.metadata = self.metadata;
        out.sync = sync(self.sync)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kompakt::codec::Codec;

    #[test]
    fn sync_is_always_or_none() {
        assert_eq!(sync(Some("always")).unwrap(), Durability::Always);
        assert_eq!(sync(Some("none")).unwrap(), Durability::None);
        let e = sync(Some("batched")).unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Option);
        assert!(
            e.to_string().contains("\"always\" (fsync each file) or \"none\""),
            "{e}"
        );
    }

    #[test]
    fn zero_threads_is_all_cores_and_the_limit_is_one_for_all() {
        assert_eq!(threads(0).unwrap(), 0);
        assert_eq!(threads(256).unwrap(), 256);
        for bad in [-1, 257, 1000, i64::MIN, i64::MAX] {
            let e = threads(bad).unwrap_err();
            assert_eq!(e.kind(), kompakt::ErrorKind::Option);
            assert!(e.to_string().contains("0 (all cores) to 256"), "{e}");
        }
    }

    #[test]
    fn a_dictionary_means_zstd_3_unless_told_otherwise() {
        let zstd3 = CodecSpec::Fixed(Codec::Zstd { level: 3 });
        assert_eq!(codec(None, None, true).unwrap(), zstd3);
        assert_eq!(codec(None, None, false).unwrap(), CodecSpec::default());
        assert_eq!(
            codec(Some("zstd"), Some(9), true).unwrap(),
            CodecSpec::Fixed(Codec::Zstd { level: 9 })
        );
        let args = WriteArgs {
            dictionary: true,
            ..WriteArgs::default()
        };
        assert_eq!(args.build().unwrap().stream.codec, zstd3);
    }

    #[test]
    fn every_field_is_checked() {
        let ok = WriteArgs {
            codec: Some("lz4"),
            threads: Some(2),
            typesize: Some(8),
            filter: Some("delta"),
            block_size: Some(1 << 20),
            ..WriteArgs::default()
        }
        .build()
        .unwrap();
        assert_eq!((ok.threads, ok.stream.typesize, ok.block_size), (2, 8, 1 << 20));
        assert!(rows_per_group(0).is_err() && rows_per_group(1 << 25).is_err());
        assert_eq!(rows_per_group(16384).unwrap(), 16384);
    }

    #[test]
    fn table_args_default_and_checked() {
        let opts = TableArgs::default().build().unwrap();
        assert_eq!(opts, kompakt_table::TableOptions::default());
        let opts = TableArgs {
            codec: Some("zstd:5"),
            rows_per_group: Some(1000),
            threads: Some(2),
            ..Default::default()
        }
        .build()
        .unwrap();
        assert_eq!((opts.rows_per_group, opts.threads), (1000, 2));
        assert_eq!(opts.codec.to_string(), "zstd:5");
        for bad in [
            TableArgs {
                codec: Some("brotli"),
                ..Default::default()
            },
            TableArgs {
                string_codec: Some("zstd:99"),
                ..Default::default()
            },
            TableArgs {
                rows_per_group: Some(0),
                ..Default::default()
            },
            TableArgs {
                threads: Some(-1),
                ..Default::default()
            },
            TableArgs {
                sorted_by: vec![kompakt_table::SortKey::ascending("")],
                ..Default::default()
            },
        ] {
            assert_eq!(bad.build().unwrap_err().kind(), kompakt::ErrorKind::Option);
        }
    }
}
