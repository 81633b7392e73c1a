//! The layout of R's serialization format, as R's `src/main/serialize.c` reads it.
//!
//! A stream is a format line, a header, then one item written depth first:
//!
//! | part            | content                                                         |
//! |-----------------|-----------------------------------------------------------------|
//! | format          | `X\n` (XDR: big-endian binary), `B\n` (native binary), `A\n` (ascii; also `\nA\n`) |
//! | header          | version (2 or 3), writer's R version, oldest R version that reads it |
//! | version 3 only  | length (0-63) and bytes of the writer's native encoding, such as `UTF-8` |
//! | item            | a flags integer, then what its type calls for                    |
//!
//! The flags integer of an item:
//!
//! | bits   | meaning                                                                  |
//! |--------|--------------------------------------------------------------------------|
//! | 0-7    | the type: an R `SEXPTYPE` (0-25), or one of the special codes 238-255 below |
//! | 8      | the value is an object (has a class)                                    |
//! | 9      | attributes follow the value's payload (pairlists: before the tag)      |
//! | 10     | a tag follows (pairlist cells)                                          |
//! | 12-27  | the `gp` bits ("levels"); on a pairlist cell bit 15 marks an active binding |
//!
//! For `REFSXP` bits 8-31 are the index into the table of earlier symbols, environments and
//! external pointers (1-based); 0 means the index follows as an integer.
//!
//! Integers are 4 bytes (XDR: big-endian; native: the machine's order); ascii writes every
//! number as a word followed by a newline (`NA` for a missing integer, `NA`, `NaN`, `Inf`,
//! `-Inf` for reals), raw bytes as two hex digits each, and strings escaped C-style (`\n`,
//! `\\`, octal `\ooo` for bytes outside 33-126). A vector length is an integer, or `-1` and
//! two integers (upper and lower 32 bits; the upper part at most 65536) for long vectors. A
//! `CHARSXP` length of `-1` is `NA_character_`.

/// `SEXPTYPE`s (R's `Rinternals.h`).
pub(crate) mod sexp {
    pub const NILSXP: u8 = 0;
    pub const SYMSXP: u8 = 1;
    pub const LISTSXP: u8 = 2;
    pub const CLOSXP: u8 = 3;
    pub const ENVSXP: u8 = 4;
    pub const PROMSXP: u8 = 5;
    pub const LANGSXP: u8 = 6;
    pub const SPECIALSXP: u8 = 7;
    pub const BUILTINSXP: u8 = 8;
    pub const CHARSXP: u8 = 9;
    pub const LGLSXP: u8 = 10;
    pub const INTSXP: u8 = 13;
    pub const REALSXP: u8 = 14;
    pub const CPLXSXP: u8 = 15;
    pub const STRSXP: u8 = 16;
    pub const DOTSXP: u8 = 17;
    pub const VECSXP: u8 = 19;
    pub const EXPRSXP: u8 = 20;
    pub const BCODESXP: u8 = 21;
    pub const EXTPTRSXP: u8 = 22;
    pub const WEAKREFSXP: u8 = 23;
    pub const RAWSXP: u8 = 24;
    pub const S4SXP: u8 = 25;
}

/// The special codes of the serialization format (`serialize.c`).
pub(crate) mod special {
    pub const REFSXP: u8 = 255;
    pub const NILVALUE_SXP: u8 = 254;
    pub const GLOBALENV_SXP: u8 = 253;
    pub const UNBOUNDVALUE_SXP: u8 = 252;
    pub const MISSINGARG_SXP: u8 = 251;
    pub const BASENAMESPACE_SXP: u8 = 250;
    pub const NAMESPACESXP: u8 = 249;
    pub const PACKAGESXP: u8 = 248;
    pub const PERSISTSXP: u8 = 247;
    pub const CLASSREFSXP: u8 = 246;
    pub const GENERICREFSXP: u8 = 245;
    pub const BCREPDEF: u8 = 244;
    pub const BCREPREF: u8 = 243;
    pub const EMPTYENV_SXP: u8 = 242;
    pub const BASEENV_SXP: u8 = 241;
    pub const ATTRLANGSXP: u8 = 240;
    pub const ATTRLISTSXP: u8 = 239;
    pub const ALTREP_SXP: u8 = 238;
}

/// Flag bits of an item.
pub(crate) const IS_OBJECT: u32 = 1 << 8;
pub(crate) const HAS_ATTR: u32 = 1 << 9;
pub(crate) const HAS_TAG: u32 = 1 << 10;
/// The `gp` bits start here.
pub(crate) const LEVELS_SHIFT: u32 = 12;
/// `gp` bit of a pairlist cell that is an active binding (`ACTIVE_BINDING_MASK`).
pub(crate) const ACTIVE_BINDING: u32 = 1 << 15;

/// The longest native encoding name R reads (`R_CODESET_MAX`).
pub(crate) const CODESET_MAX: i32 = 63;
/// The largest upper half of a long vector length R reads.
pub(crate) const LONG_LENGTH_UPPER_MAX: u32 = 65536;
/// R's largest vector length (`R_XLEN_T_MAX`, 2^52).
pub(crate) const XLEN_MAX: u64 = 1 << 52;
/// The longest word R's ascii reader takes (its buffer is 128 bytes with the NUL).
pub(crate) const WORD_MAX: usize = 127;
/// R's `NA_integer_`.
pub(crate) const NA_INTEGER: i32 = i32::MIN;

/// Base R's own ALTREP classes whose unserialize methods only rebuild data (`altclasses.c`,
/// package "base"). The memory-mapped classes (`mmap_integer`, `mmap_real`) are left out:
/// unserializing one maps the file its state names.
pub(crate) const BASE_ALTREP_CLASSES: &[&str] = &[
    "compact_intseq",
    "compact_realseq",
    "deferred_string",
    "wrap_integer",
    "wrap_logical",
    "wrap_real",
    "wrap_complex",
    "wrap_raw",
    "wrap_string",
    "wrap_list",
];

/// `sortedness` values a wrapper's metadata may hold (`UNKNOWN_SORTEDNESS` is NA).
pub(crate) const SORTEDNESS: &[i32] = &[NA_INTEGER, -2, -1, 0, 1, 2];
