//! Human-readable sizes: parsing `64K`, `1M`, `1.5G` and printing `1.2 MiB`.

use std::fmt;

/// A size the user typed that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSizeError {
    input: String,
}

impl fmt::Display for ParseSizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid size {:?}: expected a number with an optional suffix K, M, G or T (powers of 1024), e.g. 64K or 1M",
            self.input
        )
    }
}

impl std::error::Error for ParseSizeError {}

/// Parses `123`, `64K`, `1M`, `1.5G`, `2MiB`, `16kb` (suffixes are powers of 1024).
pub fn parse_size(input: &str) -> Result<u64, ParseSizeError> {
    let err = || ParseSizeError {
        input: input.to_string(),
    };
    let s = input.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(err()),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(1u64 << shift).ok_or_else(err);
    }
    let x: f64 = num.parse().map_err(|_| err())?;
    let v = x * (1u64 << shift) as f64;
    if !v.is_finite() || v < 0.0 || v >= u64::MAX as f64 {
        return Err(err());
    }
    Ok(v.round() as u64)
}

/// Parses `START:END` where either side may be empty (defaults 0 and `len`).
pub fn parse_range(input: &str, len: u64) -> Result<(u64, u64), String> {
    let (a, b) = input
        .split_once(':')
        .ok_or_else(|| format!("invalid range {input:?}: expected START:END, e.g. 0:1M, 4K:, :100"))?;
    let start = if a.trim().is_empty() {
        0
    } else {
        parse_size(a).map_err(|e| e.to_string())?
    };
    let end = if b.trim().is_empty() {
        len
    } else {
        parse_size(b).map_err(|e| e.to_string())?
    };
    if start > end {
        return Err(format!("range {start}:{end} ends before it starts"));
    }
    if end > len {
        return Err(format!(
            "range {start}:{end} is outside the stream's {len} bytes (valid: 0:{len} or within it)"
        ));
    }
    Ok((start, end))
}

/// Formats a byte count as `812 B`, `1.2 KiB`, `3.4 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if v >= 100.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("123").unwrap(), 123);
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size(" 2 MB").unwrap(), 2 << 20);
        for bad in ["", "M", "1X", "-1", "1.2.3K", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert!(parse_size("1Q").unwrap_err().to_string().contains("64K"));
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range(":", 10).unwrap(), (0, 10));
        assert_eq!(parse_range("2:", 10).unwrap(), (2, 10));
        assert_eq!(parse_range(":1K", 4096).unwrap(), (0, 1024));
        assert!(parse_range("5:2", 10).unwrap_err().contains("ends before it starts"));
        assert!(parse_range("0:11", 10).unwrap_err().contains("valid: 0:10"));
        assert!(parse_range("3", 10).is_err());
    }

    #[test]
    fn sizes_format() {
        assert_eq!(format_size(812), "812 B");
        assert_eq!(format_size(1536), "1.5 KiB");
        assert_eq!(format_size(200 << 20), "200 MiB");
    }
}
