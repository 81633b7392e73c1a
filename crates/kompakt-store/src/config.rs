//! `kompakt-store.json`: the settings a store was created with, checked on every open.

use crate::error::{Error, Result};
use kompakt::codec::CodecSpec;
use serde_json::{json, Value};
use std::path::Path;

/// File name of the configuration in the store's folder.
pub const CONFIG_FILE: &str = "kompakt-store.json";
/// Layout version this build writes and reads.
pub const STORE_VERSION: u64 = 1;
/// How objects are addressed (see [`ContentHash`](kompakt::stream::ContentHash)).
pub const HASH_ALGORITHM: &str = "xxh3-128/content-1";
/// How keys are held: UTF-8 text in the index, so any string is a valid key.
pub const KEY_ENCODING: &str = "utf-8";

/// A store's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Layout version.
    pub version: u64,
    /// Content-hash algorithm.
    pub hash: String,
    /// Key encoding.
    pub key_encoding: String,
    /// Codec for new objects unless a call names another. Each object records its own codec,
    /// so changing this never affects objects already stored.
    pub codec: CodecSpec,
}

impl Config {
    /// The configuration of a new store.
    pub fn new(codec: CodecSpec) -> Config {
        Config {
            version: STORE_VERSION,
            hash: HASH_ALGORITHM.into(),
            key_encoding: KEY_ENCODING.into(),
            codec,
        }
    }

    /// The JSON text written to [`CONFIG_FILE`].
    pub fn to_json(&self) -> Vec<u8> {
        let v = json!({
            "format": "kompakt-store",
            "version": self.version,
            "hash": self.hash,
            "key_encoding": self.key_encoding,
            "codec": self.codec.to_string(),
        });
        let mut text = serde_json::to_vec_pretty(&v).expect("a JSON value serializes");
        text.push(b'\n');
        text
    }

    /// Parses and checks a configuration read from `path`.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Config> {
        let bad = |detail: String| Error::Store(format!("{}: {detail}", path.display()));
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not valid JSON ({e})")))?;
        if v.get("format").and_then(Value::as_str) != Some("kompakt-store") {
            return Err(bad(
                "not a kompakt store configuration (no \"format\": \"kompakt-store\")".into(),
            ));
        }
        let version = v
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("missing \"version\"".into()))?;
        if version == 0 || version > STORE_VERSION {
            return Err(bad(format!(
                "store layout version {version}; this kompakt ({}) reads version {STORE_VERSION}: upgrade kompakt",
                env!("CARGO_PKG_VERSION")
            )));
        }
        let text = |name: &str| -> Result<String> {
            v.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("missing \"{name}\"")))
        };
        let hash = text("hash")?;
        if hash != HASH_ALGORITHM {
            return Err(bad(format!(
                "objects are addressed by {hash:?}, this kompakt knows only {HASH_ALGORITHM:?}"
            )));
        }
        let key_encoding = text("key_encoding")?;
        if key_encoding != KEY_ENCODING {
            return Err(bad(format!(
                "keys are encoded as {key_encoding:?}, this kompakt knows only {KEY_ENCODING:?}"
            )));
        }
        let codec = CodecSpec::parse(&text("codec")?).map_err(|e| bad(e.to_string()))?;
        Ok(Config {
            version,
            hash,
            key_encoding,
            codec,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let c = Config::new(CodecSpec::parse("lz4").unwrap());
        let p = Path::new("x/kompakt-store.json");
        assert_eq!(Config::parse(&c.to_json(), p).unwrap(), c);
        let newer = String::from_utf8(c.to_json())
            .unwrap()
            .replace("\"version\": 1", "\"version\": 2");
        let err = Config::parse(newer.as_bytes(), p).unwrap_err().to_string();
        assert!(err.contains("upgrade kompakt"), "{err}");
        let other_hash = String::from_utf8(c.to_json()).unwrap().replace("xxh3-128", "sha256");
        assert!(Config::parse(other_hash.as_bytes(), p).is_err());
        assert!(Config::parse(b"{", p).is_err());
        assert!(Config::parse(b"{\"format\": \"x\"}", p).is_err());
    }
}
