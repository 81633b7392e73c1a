//! What the user asks for: a codec spec string, `auto`, or a unified level 0-100.

use super::Codec;
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The unified level used when none is given (`docs/DESIGN.md`, "Default level: 21 (zstd:1)").
pub const DEFAULT_LEVEL: u8 = 21;

const VALID: &str = "one of: none, auto, lz4[:ACCEL 1-65537], lz4hc[:1-12], zstd[:-50..22], \
                     gzip[:1-9], zlib[:1-9], or a unified level 0-100";

/// A codec request: a concrete codec, or `auto` (chosen per block from trial compressions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodecSpec {
    /// Always this codec (blocks that do not shrink are still stored raw).
    Fixed(Codec),
    /// Per block: the filter and codec that trial compressions of samples say pay off.
    Auto,
}

impl Default for CodecSpec {
    fn default() -> Self {
        CodecSpec::level(DEFAULT_LEVEL).expect("default level is valid")
    }
}

impl CodecSpec {
    /// Maps a unified level 0-100 to a codec: 0 stores raw, 100 compresses smallest.
    ///
    /// | level  | codec                                 |
    /// |--------|---------------------------------------|
    /// | 0      | none                                  |
    /// | 1-10   | lz4, acceleration 32,16,12,8,6,4,3,2,1,1 |
    /// | 11-20  | lz4hc levels 3-12                     |
    /// | 21-29  | zstd 1                                |
    /// | 30-39  | zstd 3                                |
    /// | 40-59  | zstd 4                                |
    /// | 60-69  | zstd 13                               |
    /// | 70-79  | zstd 14                               |
    /// | 80-89  | zstd 15                               |
    /// | 90-99  | zstd 18                               |
    /// | 100    | zstd 22                               |
    pub fn level(level: u8) -> Result<CodecSpec> {
        const LZ4_ACCEL: [u32; 10] = [32, 16, 12, 8, 6, 4, 3, 2, 1, 1];
        const ZSTD_BY_DECADE: [i32; 9] = [1, 3, 4, 4, 13, 14, 15, 18, 22];
        let codec = match level {
            0 => Codec::None,
            1..=10 => Codec::Lz4 {
                acceleration: LZ4_ACCEL[usize::from(level - 1)],
            },
            11..=20 => Codec::Lz4Hc { level: level - 8 },
            // A zstd level per decade, each compressing every one of five slices of the benchmark's
            // table data at least as small as the decade below (`bench/zstd_levels.py` checks
            // it): zstd 5-12 fell below zstd 4 on some slice, so 40-59 both use zstd 4.
            21..=100 => Codec::Zstd {
                level: ZSTD_BY_DECADE[usize::from(level / 10) - 2],
            },
            _ => return Err(Error::invalid("level", level.to_string(), "a unified level 0-100")),
        };
        Ok(CodecSpec::Fixed(codec))
    }

    /// The one meaning of a `codec` option and a `level` option, shared by every front end
    /// (the CLI's `--codec`/`--level`, Python's and R's `codec=`/`level=`):
    ///
    /// - neither: the default, unified level [`DEFAULT_LEVEL`];
    /// - `level` alone: a unified level 0-100;
    /// - `codec` alone: a spec ([`parse`](CodecSpec::parse));
    /// - a bare codec name and `level`: that codec's own level (`zstd` and 9 is `zstd:9`);
    /// - a codec that already sets its level (`zstd:3`, `60`), or `none` / `auto`, with a
    ///   level: an error naming both.
    ///
    /// ```
    /// use kompakt::codec::{Codec, CodecSpec};
    /// assert_eq!(CodecSpec::from_options(Some("zstd"), Some(9))?, CodecSpec::Fixed(Codec::Zstd { level: 9 }));
    /// assert_eq!(CodecSpec::from_options(None, Some(21))?, CodecSpec::default());
    /// assert!(CodecSpec::from_options(Some("zstd:3"), Some(9)).is_err());
    /// # Ok::<(), kompakt::Error>(())
    /// ```
    pub fn from_options(codec: Option<&str>, level: Option<i64>) -> Result<CodecSpec> {
        match (codec, level) {
            (None, None) => Ok(CodecSpec::default()),
            (None, Some(level)) => {
                let unified = u8::try_from(level)
                    .map_err(|_| Error::invalid("level", level.to_string(), "a unified level 0-100"))?;
                CodecSpec::level(unified)
            }
            (Some(spec), None) => CodecSpec::parse(spec),
            (Some(spec), Some(level)) => {
                let name = spec.trim().to_ascii_lowercase();
                let takes_level = matches!(name.as_str(), "lz4" | "lz4hc" | "zstd" | "zst" | "gzip" | "gz" | "zlib");
                if !takes_level {
                    let why = if matches!(name.as_str(), "none" | "raw" | "auto") {
                        format!("codec {spec:?} takes no level")
                    } else if name.contains(':') || name.parse::<u8>().is_ok() {
                        format!("codec {spec:?} already sets a level; give a level only with a bare codec name such as \"zstd\"")
                    } else {
                        return CodecSpec::parse(spec);
                    };
                    return Err(Error::invalid("level", level.to_string(), why));
                }
                CodecSpec::parse(&format!("{name}:{level}"))
            }
        }
    }

    /// Parses `zstd`, `zstd:3`, `lz4`, `lz4hc:9`, `gzip:6`, `none`, `auto` or `0`..`100`.
    pub fn parse(input: &str) -> Result<CodecSpec> {
        let text = input.trim().to_ascii_lowercase();
        let bad = || Error::invalid("codec", input, VALID);
        if let Ok(level) = text.parse::<u8>() {
            return CodecSpec::level(level).map_err(|_| bad());
        }
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text.as_str(), None),
        };
        let num = |default: i64| -> Result<i64> {
            match arg {
                None => Ok(default),
                Some(a) => a.parse::<i64>().map_err(|_| bad()),
            }
        };
        let narrow = |v: i64| -> Result<u8> { u8::try_from(v).map_err(|_| bad()) };
        let codec = match name {
            "none" | "raw" if arg.is_none() => Codec::None,
            "auto" if arg.is_none() => return Ok(CodecSpec::Auto),
            "lz4" => Codec::Lz4 {
                acceleration: u32::try_from(num(1)?).map_err(|_| bad())?,
            },
            "lz4hc" => Codec::Lz4Hc {
                level: narrow(num(9)?)?,
            },
            "zstd" | "zst" => Codec::Zstd {
                level: i32::try_from(num(3)?).map_err(|_| bad())?,
            },
            "gzip" | "gz" => Codec::Gzip {
                level: narrow(num(6)?)?,
            },
            "zlib" => Codec::Zlib {
                level: narrow(num(6)?)?,
            },
            _ => return Err(bad()),
        };
        codec.validate().map(CodecSpec::Fixed)
    }
}

impl FromStr for CodecSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        CodecSpec::parse(s)
    }
}

impl fmt::Display for CodecSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecSpec::Fixed(c) => c.fmt(f),
            CodecSpec::Auto => f.write_str("auto"),
        }
    }
}

impl From<Codec> for CodecSpec {
    fn from(codec: Codec) -> Self {
        CodecSpec::Fixed(codec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_and_level_options_have_one_meaning() {
        let opt = CodecSpec::from_options;
        assert_eq!(opt(None, None).unwrap(), CodecSpec::default());
        assert_eq!(opt(None, Some(60)).unwrap(), CodecSpec::level(60).unwrap());
        assert_eq!(
            opt(Some("lz4hc:4"), None).unwrap(),
            CodecSpec::Fixed(Codec::Lz4Hc { level: 4 })
        );
        assert_eq!(opt(Some("60"), None).unwrap(), CodecSpec::level(60).unwrap());
        assert_eq!(
            opt(Some("zstd"), Some(9)).unwrap(),
            CodecSpec::Fixed(Codec::Zstd { level: 9 })
        );
        assert_eq!(
            opt(Some(" ZSTD "), Some(-5)).unwrap(),
            CodecSpec::Fixed(Codec::Zstd { level: -5 })
        );
        assert_eq!(
            opt(Some("lz4"), Some(8)).unwrap(),
            CodecSpec::Fixed(Codec::Lz4 { acceleration: 8 })
        );
        assert_eq!(
            opt(Some("gz"), Some(9)).unwrap(),
            CodecSpec::Fixed(Codec::Gzip { level: 9 })
        );
        for (codec, level, says) in [
            (Some("zstd:3"), Some(9), "already sets a level"),
            (Some("60"), Some(9), "already sets a level"),
            (Some("none"), Some(1), "takes no level"),
            (Some("auto"), Some(1), "takes no level"),
            (Some("brotli"), Some(1), "one of: none, auto"),
            (Some("zstd"), Some(99), "-50..=22"),
            (None, Some(101), "a unified level 0-100"),
            (None, Some(-1), "a unified level 0-100"),
        ] {
            let err = opt(codec, level).unwrap_err().to_string();
            assert!(err.contains(says), "{codec:?} {level:?}: {err}");
        }
        let err = opt(Some("zstd:3"), Some(9)).unwrap_err().to_string();
        assert!(err.contains("\"9\"") && err.contains("zstd:3"), "names both: {err}");
    }

    #[test]
    fn parses_what_users_type() {
        let cases = [
            ("zstd", Codec::Zstd { level: 3 }),
            ("ZSTD:19", Codec::Zstd { level: 19 }),
            ("zstd:-5", Codec::Zstd { level: -5 }),
            ("lz4", Codec::Lz4 { acceleration: 1 }),
            ("lz4:8", Codec::Lz4 { acceleration: 8 }),
            ("lz4hc:9", Codec::Lz4Hc { level: 9 }),
            ("gzip:6", Codec::Gzip { level: 6 }),
            ("zlib", Codec::Zlib { level: 6 }),
            ("none", Codec::None),
            ("0", Codec::None),
            ("100", Codec::Zstd { level: 22 }),
            ("21", Codec::Zstd { level: 1 }),
        ];
        for (text, codec) in cases {
            assert_eq!(CodecSpec::parse(text).unwrap(), CodecSpec::Fixed(codec), "{text}");
        }
        assert_eq!(CodecSpec::parse("auto").unwrap(), CodecSpec::Auto);
    }

    #[test]
    fn display_parses_back() {
        for level in 0..=100 {
            let spec = CodecSpec::level(level).unwrap();
            assert_eq!(CodecSpec::parse(&spec.to_string()).unwrap(), spec);
        }
    }

    #[test]
    fn errors_name_the_valid_choices() {
        for bad in ["zsdt", "zstd:99", "lz4hc:0", "101", "gzip:x", "auto:3", ""] {
            let msg = CodecSpec::parse(bad).unwrap_err().to_string();
            assert!(msg.contains("lz4hc") || msg.contains("level"), "{bad}: {msg}");
        }
    }

    #[test]
    fn unified_levels_step_through_codecs_in_order() {
        let rank = |c: Codec| match c {
            Codec::None => (0, 0),
            Codec::Lz4 { acceleration } => (1, -(acceleration as i64)),
            Codec::Lz4Hc { level } => (2, level as i64),
            Codec::Zstd { level } => (3, level as i64),
            _ => unreachable!(),
        };
        let mut prev = (-1, i64::MIN);
        for level in 0..=100 {
            let CodecSpec::Fixed(c) = CodecSpec::level(level).unwrap() else {
                panic!()
            };
            let r = rank(c);
            assert!(r >= prev, "level {level}");
            prev = r;
        }
        // The zstd decades documented in docs/DESIGN.md ("Unified levels").
        let zstd = |level: u8| match CodecSpec::level(level).unwrap() {
            CodecSpec::Fixed(Codec::Zstd { level }) => level,
            other => panic!("level {level}: {other:?}"),
        };
        let decades: Vec<i32> = [21, 30, 40, 59, 60, 70, 80, 90, 100].into_iter().map(zstd).collect();
        assert_eq!(decades, [1, 3, 4, 4, 13, 14, 15, 18, 22]);
    }
}
