//! The options structs of the C API: zero means "the default" in every field, and a leading
//! `size` lets a struct grow without breaking callers built against an older header. Their
//! values are checked by the front door (`kompakt_api::options`), never here.

use crate::ffi::text;
use crate::status::Failure;
use kompakt::stream::StreamOptions;
use kompakt::WriteOptions;
use kompakt_api::options::{self as api, WriteArgs};
use std::ffi::c_char;
use std::mem::size_of;

/// `level`: the default (the codec's own default level, or the default codec).
pub const KPK_LEVEL_DEFAULT: i32 = 0;
/// `level`: the level 0, raw storage (the unified level 0; with a bare codec name, as the
/// command line's `--level 0`).
pub const KPK_LEVEL_NONE: i32 = i32::MAX;

/// How a kompakt file is written (`kpk_write_options` in the header).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kpk_write_options {
    /// `sizeof(kpk_write_options)` as the caller's header has it, or 0 for the first version.
    pub size: u32,
    /// 0: the default; `KPK_LEVEL_NONE`: raw; a unified level 1-100, or with a bare codec name
    /// that codec's own.
    pub level: i32,
    /// 0: all cores.
    pub threads: i32,
    /// Element size of the streams `kpk_writer_add_stream` adds; 0: 1 (bytes).
    pub typesize: u32,
    /// Raw bytes per block; 0: the default (1 MiB).
    pub block_size: i64,
    /// A codec spec (`"zstd"`, `"lz4:3"`, `"60"`, `"auto"`, `"none"`); NULL: the default.
    pub codec: *const c_char,
    /// The filter of those streams (`"none"`, `"shuffle"`, `"delta"`, `"auto"`); NULL: the
    /// default (shuffle when the element size is above 1).
    pub filter: *const c_char,
    /// `"always"` (fsync a file written to a path) or `"none"` (atomic rename, no fsync);
    /// NULL: the default (`KOMPAKT_SYNC`, else `"none"`). Added to API version 2 after its first
    /// release (older headers end before it).
    pub sync: *const c_char,
}

/// The struct's size in API version 2's first release, before `sync`.
const WRITE_OPTIONS_V2: usize = std::mem::offset_of!(kpk_write_options, sync);

/// An options struct the caller sizes: `size`, its first field, says which version of it the
/// caller's header has.
pub(crate) trait SizedStruct: Copy {
    /// The struct's name in the header, for messages.
    const NAME: &'static str;
    /// The sizes of its versions so far, oldest first (the last is `size_of::<Self>()`).
    const SIZES: &'static [usize];
    /// Every field zero (NULL): the defaults.
    fn zeroed() -> Self;
}

impl SizedStruct for kpk_write_options {
    const NAME: &'static str = "kpk_write_options";
    const SIZES: &'static [usize] = &[WRITE_OPTIONS_V2, size_of::<kpk_write_options>()];

    fn zeroed() -> Self {
        kpk_write_options {
            size: 0,
            level: 0,
            threads: 0,
            typesize: 0,
            block_size: 0,
            codec: std::ptr::null(),
            filter: std::ptr::null(),
            sync: std::ptr::null(),
        }
    }
}

/// The caller's options struct at `p`: all defaults when `p` is NULL. `size` 0 is the first
/// version's size; an older version's fields are read and the newer ones left at zero; a struct
/// larger than this library knows is taken when the bytes past what it knows are zero (the
/// caller set no option this library lacks), as Linux's `openat2` and `clone3` take theirs.
pub(crate) fn read_sized<T: SizedStruct>(p: *const T) -> Result<T, Failure> {
    let mut out = T::zeroed();
    if p.is_null() {
        return Ok(out);
    }
    let known = size_of::<T>();
    // SAFETY: a non-NULL options pointer points at the caller's struct (the header's
    // contract), whose first field, in every version, is its uint32_t `size`.
    let size = match unsafe { p.cast::<u32>().read() } {
        0 => T::SIZES[0],
        n => n as usize,
    };
    if size < known && !T::SIZES.contains(&size) {
        return Err(Failure::usage(format!(
            "{name}.size is {size}: set it to sizeof({name}) ({known} bytes in C API version {}), or leave it 0",
            crate::KPK_API_VERSION,
            name = T::NAME,
        )));
    }
    if size > known {
        // SAFETY: the caller's struct has `size` readable bytes (its `size` field says so).
        let tail = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(known), size - known) };
        if tail.iter().any(|&b| b != 0) {
            return Err(Failure::option(format!(
                "{name} of {size} bytes sets options this library does not have (kompakt {}, C API version {}, \
                 knows its first {known} bytes): leave them 0, or use a newer kompakt",
                env!("CARGO_PKG_VERSION"),
                crate::KPK_API_VERSION,
                name = T::NAME,
            )));
        }
    }
    // SAFETY: the caller's struct has at least `size.min(known)` readable bytes, the fields of
    // its version; they are copied over a zeroed `T`, whose fields are all integers and raw
    // pointers, valid for any bytes (and every version's size ends on a field's end).
    unsafe {
        std::ptr::copy_nonoverlapping(
            p.cast::<u8>(),
            std::ptr::from_mut(&mut out).cast::<u8>(),
            size.min(known),
        )
    };
    Ok(out)
}

/// A `level` field or argument, as the front door takes it: `None` for the default.
pub(crate) fn level_arg(level: i32) -> Result<Option<i64>, Failure> {
    match level {
        KPK_LEVEL_DEFAULT => Ok(None),
        KPK_LEVEL_NONE => Ok(Some(0)),
        i32::MIN => Err(Failure::option(format!(
            "invalid level \"{}\": KPK_LEVEL_DEFAULT is 0 since C API version 2 (it was INT32_MIN); a level is 0 \
             (the default), KPK_LEVEL_NONE (raw), a unified level 1-100, or with a bare codec name that codec's own",
            i32::MIN
        ))),
        l => Ok(Some(i64::from(l))),
    }
}

/// The format's options from the caller's struct (NULL: every default), each checked by the
/// front door.
pub(crate) fn write_options(opts: *const kpk_write_options) -> Result<WriteOptions, Failure> {
    let o = read_sized(opts)?;
    let args = WriteArgs {
        codec: text(o.codec, "codec")?,
        level: level_arg(o.level)?,
        threads: Some(i64::from(o.threads)),
        typesize: (o.typesize != 0).then_some(i64::from(o.typesize)),
        filter: text(o.filter, "filter")?,
        block_size: (o.block_size != 0).then_some(o.block_size),
        dictionary: false,
    };
    Ok(args.build()?)
}

/// How a file written to a path is flushed: the caller's `sync` (NULL: the default).
pub(crate) fn sync_option(opts: *const kpk_write_options) -> Result<kompakt_fs::Durability, Failure> {
    let o = read_sized(opts)?;
    Ok(api::sync(text(o.sync, "sync")?)?)
}

/// A stream's options: `base` with elements of `typesize` bytes and `filter` (NULL: the
/// default for that element size).
pub(crate) fn typed_stream(
    base: StreamOptions,
    typesize: u32,
    filter: *const c_char,
) -> Result<StreamOptions, Failure> {
    let mut opts = base.typesize(api::typesize(i64::from(typesize))?);
    if let Some(f) = text(filter, "filter")? {
        opts = opts.filter(api::filter(f)?);
    }
    opts.validate()?;
    Ok(opts)
}

/// `threads` (0: all cores).
pub(crate) fn threads(threads: i32) -> Result<usize, Failure> {
    Ok(api::threads(i64::from(threads))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kompakt::codec::Codec;
    use kompakt::CodecSpec;

    #[test]
    fn zero_is_the_default_in_every_field_and_null_is_every_default() {
        let zero = kpk_write_options::zeroed();
        let from_zero = write_options(&zero).unwrap();
        let from_null = write_options(std::ptr::null()).unwrap();
        for o in [from_zero, from_null] {
            let d = WriteOptions::default();
            assert_eq!(
                (o.stream.codec, o.stream.typesize, o.block_size, o.threads),
                (d.stream.codec, d.stream.typesize, d.block_size, d.threads)
            );
        }
        let raw = kpk_write_options {
            level: KPK_LEVEL_NONE,
            ..zero
        };
        assert_eq!(write_options(&raw).unwrap().stream.codec, CodecSpec::Fixed(Codec::None));
        let old_default = kpk_write_options {
            level: i32::MIN,
            ..zero
        };
        let e = write_options(&old_default).unwrap_err();
        assert_eq!(e.0, crate::KPK_ERROR_OPTION);
        assert!(e.1.contains("KPK_LEVEL_DEFAULT is 0"), "{}", e.1);
    }

    #[test]
    fn sizes_of_older_and_newer_headers() {
        let known = size_of::<kpk_write_options>();
        // A struct from a newer header: taken when what this library does not know is zero.
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Newer {
            v2: kpk_write_options,
            more: u64,
        }
        let mut newer = Newer {
            v2: kpk_write_options {
                size: size_of::<Newer>() as u32,
                threads: 3,
                ..kpk_write_options::zeroed()
            },
            more: 0,
        };
        let p = std::ptr::from_ref(&newer).cast::<kpk_write_options>();
        assert_eq!(write_options(p).unwrap().threads, 3);
        newer.more = 1;
        let p = std::ptr::from_ref(&newer).cast::<kpk_write_options>();
        let e = write_options(p).unwrap_err();
        assert_eq!(e.0, crate::KPK_ERROR_OPTION);
        assert!(e.1.contains(&format!("first {known} bytes")), "{}", e.1);
        // A size no version has.
        let odd = kpk_write_options {
            size: 12,
            ..kpk_write_options::zeroed()
        };
        let e = write_options(&odd).unwrap_err();
        assert_eq!(e.0, crate::KPK_ERROR_USAGE);
        assert!(
            e.1.contains(&format!("sizeof(kpk_write_options) ({known} bytes")),
            "{}",
            e.1
        );
    }
}
