//! zstd dictionaries: what many small values have in common, given to the codec up front so
//! that each value need not carry it.
//!
//! A dictionary is named by the XXH3-64 of its bytes, its [`DictionaryId`]. Blocks compressed
//! with one record that id (codec `zstd-dict`, `docs/FORMAT.md`), so a reader given the wrong
//! dictionary, or none, says which one the data needs instead of decoding garbage. The bytes
//! are a zstd dictionary as `zstd --train` writes them (or any bytes, a "raw content"
//! dictionary), so a `.kpkd` file also works with `zstd -D`.

// The id lives below both this module and `error`, whose `MissingDictionary` names it.
pub use crate::dictionary_id::DictionaryId;
use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use std::fmt;
use std::sync::Arc;

/// Largest dictionary accepted. zstd's trainer defaults to 110 KiB, and past a few hundred KiB
/// loading a dictionary costs more than it saves on small values.
pub const MAX_DICTIONARY_SIZE: usize = 16 << 20;

/// Dictionary size [`Dictionary::train`] aims for unless told otherwise (zstd's own default).
pub const DEFAULT_DICTIONARY_SIZE: usize = 110 << 10;

/// Smallest dictionary size worth training (zstd's trainer refuses smaller ones).
pub const MIN_DICTIONARY_SIZE: usize = 256;

/// The first bytes of a zstd dictionary (RFC 8878, section 5); other bytes are raw content.
pub const ZSTD_DICTIONARY_MAGIC: [u8; 4] = 0xEC30_A437u32.to_le_bytes();

/// The codec spec a write with a dictionary uses when given neither codec nor level, in every
/// front end: zstd level 3, where a dictionary gains most on small values (level 1 keeps less
/// of what it matches; measured in docs/DESIGN.md, "Dictionaries").
pub const DICTIONARY_CODEC: &str = "zstd:3";

/// Bytes a `zstd-dict` block's payload starts with: the dictionary's id.
pub const DICTIONARY_ID_LEN: usize = 8;

/// A zstd dictionary and its id; cheap to clone (the bytes are shared).
#[derive(Clone, PartialEq, Eq)]
pub struct Dictionary {
    id: DictionaryId,
    bytes: Arc<[u8]>,
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dictionary({}, {} bytes)", self.id, self.bytes.len())
    }
}

impl Dictionary {
    /// A dictionary of these bytes (a trained zstd dictionary, or any bytes up to
    /// [`MAX_DICTIONARY_SIZE`], which zstd uses as raw content to refer back to).
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Result<Dictionary> {
        let bytes = bytes.into();
        if bytes.is_empty() || bytes.len() > MAX_DICTIONARY_SIZE {
            return Err(Error::invalid(
                "dictionary",
                format!("{} bytes", bytes.len()),
                format!("1 ..= {MAX_DICTIONARY_SIZE} bytes"),
            ));
        }
        // A zstd dictionary (its magic first) must parse: zstd would otherwise fail only at
        // the first compression, and a writer would store every block raw without saying why.
        if bytes.starts_with(&ZSTD_DICTIONARY_MAGIC) && zstd::zstd_safe::DDict::try_create(&bytes).is_none() {
            return Err(Error::invalid(
                "dictionary",
                format!("{} bytes starting with zstd's dictionary magic", bytes.len()),
                "a zstd dictionary zstd can load (this one is damaged or cut short), or raw content \
                 that does not start with 37 A4 30 EC",
            ));
        }
        Ok(Dictionary {
            id: DictionaryId(xxh3_64(&bytes)),
            bytes,
        })
    }

    /// Trains a dictionary of at most `max_size` bytes on `samples` with zstd's trainer
    /// (fastCover). zstd wants about a hundred times the dictionary's size in samples, and
    /// at least a few dozen of them; with too little it fails, and that is an error here
    /// that says how much was given.
    pub fn train<S: AsRef<[u8]>>(samples: &[S], max_size: usize) -> Result<Dictionary> {
        if !(MIN_DICTIONARY_SIZE..=MAX_DICTIONARY_SIZE).contains(&max_size) {
            return Err(Error::invalid(
                "dictionary size",
                max_size.to_string(),
                format!("{MIN_DICTIONARY_SIZE} ..= {MAX_DICTIONARY_SIZE} bytes"),
            ));
        }
        let total: usize = samples.iter().map(|s| s.as_ref().len()).sum();
        // zstd's trainer reads sample sizes as 32-bit and refuses fewer than 5 samples or
        // under 8 bytes each on average; check here so the message can say what to give.
        let too_few = samples.len() < 8 || total < 8 * samples.len();
        if too_few || total >= u32::MAX as usize {
            return Err(Error::invalid(
                "training samples",
                format!("{} samples, {total} bytes", samples.len()),
                "at least 8 samples of 8 bytes or more, under 4 GiB in all (ideally ~100x the \
                 dictionary size)",
            ));
        }
        let bytes = zstd::dict::from_samples(samples, max_size).map_err(|e| {
            Error::invalid(
                "training samples",
                format!("{} samples, {total} bytes", samples.len()),
                format!(
                    "samples zstd can learn from ({e}); give more or larger samples, about 100x \
                     the dictionary size ({max_size} bytes) in all"
                ),
            )
        })?;
        Dictionary::new(bytes)
    }

    /// Whether `other` has the same bytes (the same allocation, or equal contents: ids can
    /// collide, bytes cannot).
    pub fn same_as(&self, other: &Dictionary) -> bool {
        Arc::ptr_eq(&self.bytes, &other.bytes) || (self.id == other.id && self.bytes == other.bytes)
    }

    /// Refuses a codec that cannot use a dictionary: dictionaries are zstd's.
    pub fn check_codec(codec: &super::CodecSpec) -> Result<()> {
        if matches!(codec, super::CodecSpec::Fixed(super::Codec::Zstd { .. })) {
            return Ok(());
        }
        Err(Error::invalid(
            "codec with a dictionary",
            codec.to_string(),
            "zstd or zstd:LEVEL (or a unified level 21-100): dictionaries are zstd's",
        ))
    }

    /// The dictionary's id (XXH3-64 of its bytes).
    pub fn id(&self) -> DictionaryId {
        self.id
    }

    /// The dictionary's bytes (what a `.kpkd` file holds).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The dictionaries a reader may use, any number; found by id.
#[derive(Debug, Clone, Default)]
pub struct Dictionaries(Arc<[Dictionary]>);

impl Dictionaries {
    /// No dictionaries: a `zstd-dict` block is then a [`Error::MissingDictionary`].
    pub fn none() -> Dictionaries {
        Dictionaries::default()
    }

    /// The one with this id.
    pub fn find(&self, id: DictionaryId) -> Option<&Dictionary> {
        self.0.iter().find(|d| d.id == id)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Their ids, for messages.
    pub fn ids(&self) -> Vec<DictionaryId> {
        self.0.iter().map(|d| d.id).collect()
    }

    /// The error for a block that needs `id`, which is not among these.
    pub(crate) fn missing(&self, id: DictionaryId) -> Error {
        Error::MissingDictionary { id, given: self.ids() }
    }
}

impl From<Vec<Dictionary>> for Dictionaries {
    fn from(v: Vec<Dictionary>) -> Self {
        Dictionaries(v.into())
    }
}

impl From<Option<Dictionary>> for Dictionaries {
    fn from(d: Option<Dictionary>) -> Self {
        Dictionaries(d.into_iter().collect::<Vec<_>>().into())
    }
}

/// Reads the dictionary id a `zstd-dict` payload starts with.
pub(crate) fn payload_id(payload: &[u8]) -> Option<DictionaryId> {
    let head: [u8; DICTIONARY_ID_LEN] = payload.get(..DICTIONARY_ID_LEN)?.try_into().ok()?;
    Some(DictionaryId(u64::from_le_bytes(head)))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    "{{\"level\":\"info\",\"service\":\"checkout\",\"user\":{},\"took_ms\":{},\
                     \"path\":\"/api/v2/orders/{}\",\"status\":{}}}",
                    i * 7919 % 100_000,
                    i % 97,
                    i * 31 % 1000,
                    if i % 13 == 0 { 500 } else { 200 }
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn the_id_is_the_hash_of_the_bytes() {
        let d = Dictionary::new(b"hello dictionary".to_vec()).unwrap();
        assert_eq!(d.id(), DictionaryId(xxh3_64(b"hello dictionary")));
        assert_eq!(d.id().to_string().len(), 16);
        assert!(Dictionary::new(Vec::new()).is_err());
    }

    #[test]
    fn training_makes_a_zstd_dictionary() {
        let d = Dictionary::train(&records(2000), 4096).unwrap();
        assert!(d.bytes().len() <= 4096);
        // zstd's dictionary magic: a trained dictionary, not raw content.
        assert_eq!(&d.bytes()[..4], &ZSTD_DICTIONARY_MAGIC);
    }

    #[test]
    fn a_damaged_zstd_dictionary_is_refused_at_once() {
        let good = Dictionary::train(&records(2000), 4096).unwrap();
        let cut = &good.bytes()[..40];
        let err = Dictionary::new(cut.to_vec()).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        let mut junk = ZSTD_DICTIONARY_MAGIC.to_vec();
        junk.extend_from_slice(&[0xff; 300]);
        assert!(Dictionary::new(junk).is_err());
        // Raw content is anything else.
        assert!(Dictionary::new(good.bytes()[4..].to_vec()).is_ok());
    }

    #[test]
    fn too_little_to_train_on_says_so() {
        let err = Dictionary::train(&records(3), 4096).unwrap_err().to_string();
        assert!(err.contains("3 samples"), "{err}");
        assert!(Dictionary::train(&records(2000), 10).is_err());
    }
}
